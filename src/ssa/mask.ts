import { forEachString } from './json.js';
import type { KubeObject } from '../objects/kube.js';

/**
 * The sensitive strings of a Secret: each value of `data` (base64, and decoded) and of
 * `stringData`. Used to scrub server messages, which can echo a request body.
 */
export function secretValues(obj: KubeObject): string[] {
  if (obj.kind !== 'Secret' || obj.apiVersion !== 'v1') return [];
  const out: string[] = [];
  for (const field of ['data', 'stringData'] as const) {
    const map = obj[field];
    if (typeof map !== 'object' || map === null) continue;
    for (const v of Object.values(map as Record<string, unknown>)) {
      if (typeof v !== 'string' || v === '') continue;
      out.push(v);
      if (field === 'data') {
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        if (decoded !== '' && !decoded.includes('\uFFFD')) out.push(decoded);
      }
    }
  }
  return out;
}

/** Replaces every occurrence of each value (longest first) with `***`. */
export function scrub(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].filter((x) => x.length >= 3).sort((a, b) => b.length - a.length)) {
    out = out.split(v).join('***');
  }
  return out;
}

/** Texts shorter than this are not looked for: they would match ordinary words (as scrub's floor). */
const MIN_SECRET = 4;

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

/** The paths of the string leaves of `obj` that contain any of `values` (values shorter than 4 ignored). */
export function pathsHolding(obj: unknown, values: Iterable<string>): string[] {
  const wanted = [...new Set(values)].filter((v) => v.length >= MIN_SECRET);
  const out: string[] = [];
  if (wanted.length === 0) return out;
  forEachString(obj, (v, path) => {
    if (wanted.some((w) => v.includes(w))) out.push(path);
  });
  return out;
}

/**
 * Every form a secret value can take in a log line, a report or a comment: the value, with its
 * newlines removed (as Flux's substitution does) and line by line, JSON-escaped, YAML single-quoted,
 * and base64 (as Secret data). Forms shorter than 4 characters are left out.
 */
export function secretForms(value: string): string[] {
  const base = [value, value.replaceAll('\n', ''), ...value.split('\n'), value.trim()];
  const out = new Set<string>();
  for (const b of base) {
    out.add(b);
    out.add(JSON.stringify(b).slice(1, -1));
    // YAML's single-quoted form, as a value shows in a rendered manifest or a quoted error.
    out.add(b.replaceAll("'", "''"));
    out.add(Buffer.from(b, 'utf8').toString('base64'));
  }
  return [...out].filter((f) => f.length >= MIN_SECRET);
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
  const secret = obj['apiVersion'] === 'v1' && obj['kind'] === 'Secret';
  forEachString(obj, (v, path) => {
    const decoded = secret && path.startsWith('/data/') ? Buffer.from(v, 'base64').toString('utf8') : '';
    if (SOPS_VALUE.test(v) || SOPS_VALUE.test(decoded)) out.push(path);
  });
  return out;
}
