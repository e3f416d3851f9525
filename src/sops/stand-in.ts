/**
 * Stand-ins for the values of a SOPS file a change encrypted itself, in an untrusted run (walk.ts):
 * a file whose data key no file of the base commit holds is either the author's own (they know
 * every value: masking those would let them choose what the log and the report hide) or copied from
 * elsewhere with the same recipients (another repository's secrets, which the author cannot read and
 * the preview must not show). Neither is decrypted into the build: every value is replaced by a
 * stand-in of the same shape (length, letters as letters of the same case, digits as digits, other
 * characters kept, so base64 stays base64 and a transformer meets the same shape), drawn from an
 * HMAC under a key of this process alone, so equal values get equal stand-ins within a run and
 * nothing of the value can be recovered from one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { PlainValue } from './canary.js';

const RUN_KEY = randomBytes(32);

/** `n` pseudo-random bytes from the value (HMAC-SHA256 in counter mode under the run's key). */
function stream(value: string, n: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0, have = 0; have < n; i++) {
    const block = createHmac('sha256', RUN_KEY).update(`${i}\0${value}`).digest();
    out.push(block);
    have += block.length;
  }
  return Buffer.concat(out).subarray(0, n);
}

/** The stand-in of a text: each letter and digit drawn anew, everything else kept. */
export function standInText(text: string): string {
  const chars = Array.from(text);
  const bytes = stream(text, chars.length);
  return chars
    .map((c, i) => {
      const b = bytes[i]!;
      if (c >= 'a' && c <= 'z') return String.fromCharCode(97 + (b % 26));
      if (c >= 'A' && c <= 'Z') return String.fromCharCode(65 + (b % 26));
      if (c >= '0' && c <= '9') return String.fromCharCode(48 + (b % 10));
      return c;
    })
    .join('');
}

/** The stand-in of a decrypted scalar, of the same type (a boolean is kept: one bit, and a shape). */
export function standInPlain(value: PlainValue): PlainValue {
  switch (typeof value) {
    case 'string':
      return standInText(value);
    case 'bigint': {
      const text = value.toString();
      const sign = text.startsWith('-') ? '-' : '';
      let digits = standInText(text.slice(sign.length));
      // As many digits as the value (no leading zero, which BigInt would drop), and within int64: 19
      // digits start with a 1.
      if (digits.length >= 19 || (digits.length > 1 && digits.startsWith('0'))) digits = `1${digits.slice(1)}`;
      return BigInt(sign + digits);
    }
    case 'number':
      return Number(`${value < 0 ? '-' : ''}0.${stream(String(value), 6).readUIntBE(0, 6)}`);
    case 'boolean':
      return value;
  }
}
