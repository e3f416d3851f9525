/**
 * kustomize's name hash for generated ConfigMaps and Secrets (its api/hasher), and the finishing
 * step that appends it at the top (addHashesToNames). The hash is the sha256 of Go's JSON encoding
 * of a map of the object's kind, `data` (and `binaryData` for a ConfigMap, `type` and `stringData`
 * for a Secret) and a `name` that is always the empty string (kustomize looks the name up by a
 * path its lookup takes for one key, and finds none); its first ten hex digits with 0, 1, 3, a and
 * e replaced by g, h, k, m and t. Only values whose Go encoding is certain here are hashed.
 */
import { createHash } from 'node:crypto';
import { isRecord } from '../util/record.js';
import type { Built, Finish } from './overlay-types.js';

/** Characters Go's encoding/json writes otherwise than JSON.stringify (or where the two may differ). */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const UNSURE_CHARS = /[\x00-\x08\x0B-\x1F\uD800-\uDFFF]/;

/** A map of strings with ASCII keys, as Go sorts and encodes them, or undefined. */
function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  // Go sorts map keys by their bytes; for ASCII keys that is JavaScript's default order.
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (typeof v !== 'string' || UNSURE_CHARS.test(v) || !/^[\x20-\x7E]*$/.test(key)) return undefined;
    out[key] = v;
  }
  return out;
}

/** Go's json.Marshal of a value of strings and maps (keys already in Go's order, strings free of UNSURE_CHARS). */
export function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  // Go escapes HTML's characters and the line and paragraph separators.
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** kustomize's encoding of a sha256 hex digest into a name suffix. */
export function encodeHash(hex: string): string {
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return hex.slice(0, 10).replace(/[013ae]/g, (c) => swap[c]!);
}

/** The hash kustomize appends to a generated ConfigMap's or Secret's name, or undefined when not certain. */
export function kustomizeHash(obj: Readonly<Record<string, unknown>>): string | undefined {
  const kind = obj['kind'];
  // "" for a field that is absent; a map for a map; anything else is not hashed here.
  const field = (name: string): Record<string, string> | '' | undefined =>
    obj[name] === undefined ? '' : stringMap(obj[name]);
  let m: Record<string, unknown>;
  if (kind === 'ConfigMap') {
    const data = field('data');
    const binary = field('binaryData');
    if (data === undefined || binary === undefined) return undefined;
    m = binary === '' ? { data, kind, name: '' } : { binaryData: binary, data, kind, name: '' };
  } else if (kind === 'Secret') {
    const data = field('data');
    const stringData = field('stringData');
    const type = obj['type'] ?? '';
    if (data === undefined || stringData === undefined || typeof type !== 'string' || UNSURE_CHARS.test(type)) {
      return undefined;
    }
    m = stringData === '' ? { data, kind, name: '', type } : { data, kind, name: '', stringData, type };
  } else {
    return undefined;
  }
  return encodeHash(createHash('sha256').update(goJson(m), 'utf8').digest('hex'));
}

/** kustomize's addHashesToNames at the top: every generated object that takes the hash gets it appended. */
export const hashSuffixes: Finish = (built: Built[]) => {
  for (const b of built) {
    if (b.hashSuffix !== true) continue;
    const hash = kustomizeHash(b.obj);
    if (hash === undefined) return undefined;
    b.previousNames = [...(b.previousNames ?? []), b.obj.metadata.name];
    b.obj.metadata.name = `${b.obj.metadata.name}-${hash}`;
    b.hashSuffix = false;
  }
  return built;
};
