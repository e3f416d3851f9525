/** The encrypted values (`aes/cipher.go`): `ENC[AES256_GCM,data:...,iv:...,tag:...,type:...]`. */
import { createDecipheriv } from 'node:crypto';
import { goParseBool, goParseFloat } from './goformat.js';
import type { Plain } from './tree.js';

/** `aes/cipher.go` `encre`: not anchored at the end, `.` does not match newlines. */
const ENC_RE = /^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]/;
const GCM_TAG_BYTES = 16;

/** An `ENC[...]` value, decoded. */
export interface EncValue {
  data: Buffer;
  iv: Buffer;
  tag: Buffer;
  type: string;
}

export function parseEnc(value: string): EncValue | undefined {
  const m = ENC_RE.exec(value);
  if (!m) return undefined;
  return {
    data: Buffer.from(m[1]!, 'base64'),
    iv: Buffer.from(m[2]!, 'base64'),
    tag: Buffer.from(m[3]!, 'base64'),
    type: m[4]!,
  };
}

/** AES-256-GCM open; like Go, the tag is appended to the data and the last 16 bytes are the tag. */
export function openEnc(enc: EncValue, key: Uint8Array, aad: string): Buffer | undefined {
  const sealed = Buffer.concat([enc.data, enc.tag]);
  if (sealed.length < GCM_TAG_BYTES || enc.iv.length === 0) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, enc.iv, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - GCM_TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** The typed plaintext, by the `type:` of the ENC value; undefined when the text does not parse as that type. */
export function typedPlain(bytes: Buffer, type: string): { value: Plain } | { comment: string } | undefined {
  const text = bytes.toString('utf8');
  switch (type) {
    case 'str':
    case 'bytes':
    case 'time':
      return { value: text };
    case 'comment':
      return { comment: text };
    case 'int': {
      if (!/^[+-]?\d+$/.test(text)) return undefined;
      const n = BigInt(text);
      return n < INT64_MIN || n > INT64_MAX ? undefined : { value: n };
    }
    case 'float': {
      const n = goParseFloat(text);
      return n === undefined ? undefined : { value: n };
    }
    case 'bool': {
      const b = goParseBool(text);
      return b === undefined ? undefined : { value: b };
    }
    default:
      return undefined;
  }
}
