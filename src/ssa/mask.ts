import { isSecret, MIN_SECRET_LENGTH } from '../objects/secret.js';
import { forEachString } from './json.js';

/**
 * True when a change at `path` (a JSON pointer) touches a secret path: the same field, a field
 * inside it, or a map or list that holds it.
 */
export function covered(path: string, secretPaths: readonly string[]): boolean {
  return secretPaths.some((p) => p === path || path.startsWith(p + '/') || p.startsWith(path + '/'));
}

function unescape(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

function segmentsOf(pointer: string): string[] {
  return pointer === '' ? [] : pointer.split('/').slice(1).map(unescape);
}

function at(obj: unknown, segments: readonly string[]): unknown {
  let cur = obj;
  for (const s of segments) {
    if (Array.isArray(cur)) cur = cur[Number(s)];
    else if (typeof cur === 'object' && cur !== null && Object.hasOwn(cur, s))
      cur = (cur as Record<string, unknown>)[s];
    else return undefined;
  }
  return cur;
}

function scalars(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (Array.isArray(v))
    v.forEach((x) => {
      scalars(x, out);
    });
  else if (typeof v === 'object' && v !== null)
    Object.values(v).forEach((x) => {
      scalars(x, out);
    });
}

/** The scalar values (as text) at and under each path of `obj`; paths that do not exist give nothing. */
export function valuesAt(obj: unknown, paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) scalars(at(obj, segmentsOf(p)), out);
  return out;
}

/** A copy of `obj` with the value at each path (that exists) replaced by `***`. */
export function maskPaths<T>(obj: T, paths: readonly string[]): T {
  if (paths.length === 0) return obj;
  const copy = structuredClone(obj);
  for (const p of paths) {
    const segs = segmentsOf(p);
    const last = segs.pop();
    if (last === undefined) continue;
    const parent = at(copy, segs);
    if (typeof parent !== 'object' || parent === null) continue;
    if (Array.isArray(parent) ? Number(last) < parent.length : Object.hasOwn(parent, last))
      (parent as Record<string, unknown>)[last] = '***';
  }
  return copy;
}

/** The paths of the string leaves of `obj` that contain any of `values` (short ones ignored, as by scrub). */
export function pathsHolding(obj: unknown, values: Iterable<string>): string[] {
  const wanted = [...new Set(values)].filter((v) => v.length >= MIN_SECRET_LENGTH);
  const out: string[] = [];
  if (wanted.length === 0) return out;
  forEachString(obj, (v, path) => {
    if (wanted.some((w) => v.includes(w))) out.push(path);
  });
  return out;
}

/** SOPS ciphertext as sops writes each encrypted value. */
const SOPS_VALUE = /ENC\[AES256_GCM,data:[^\]]*\]/;

/**
 * The paths of values still shaped like SOPS ciphertext (`ENC[AES256_GCM,data:…]`), in any string
 * leaf and, for a v1 Secret, in each `data` value once base64-decoded. After decryption there must be
 * none: one means a file whose SOPS metadata was lost, deployed as ciphertext.
 */
export function encryptedLeftovers(obj: Record<string, unknown>): string[] {
  const out: string[] = [];
  const secret = isSecret(obj);
  forEachString(obj, (v, path) => {
    const decoded = secret && path.startsWith('/data/') ? Buffer.from(v, 'base64').toString('utf8') : '';
    if (SOPS_VALUE.test(v) || SOPS_VALUE.test(decoded)) out.push(path);
  });
  return out;
}
