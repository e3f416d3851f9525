/**
 * Provenance by difference: the build's objects against the same build with every decrypted value
 * replaced by a canary (src/reconcile/canary-render.ts). kustomize's transformers (replacements with
 * a delimiter, generators reading a decrypted file, name hashes, base64 of Secret data) carry a
 * secret into any field of any kind in forms no value mask matches; whatever differs between the two
 * builds came from a secret, whatever its form. Pure.
 */
import type { KubeObject } from '../objects/kube.js';
import { MIN_SECRET_LENGTH } from '../objects/secret.js';
import { escapePointer, isMap } from '../ssa/json.js';

/** What the two builds tell apart. */
export interface DerivedFields {
  /** By index of the real build's objects: the JSON pointers of the fields that differ (sorted). */
  paths: string[][];
  /**
   * The parts of names, namespaces and map keys that differ: text no field mask hides (a subject, a
   * path), to be hidden wherever it is written instead. Each at least MIN_SECRET_LENGTH long.
   */
  tokens: string[];
  /** Names, namespaces or keys that differ but are too short to hide as text (by index, the field). */
  unhidable: { index: number; field: string }[];
}

/** Where a name or key is cut into parts: a derived part is hidden from separator to separator. */
const SEPARATOR = /[-._:/]/;

const identity = (o: KubeObject) => JSON.stringify([o.apiVersion, o.kind, o.metadata.namespace ?? '', o.metadata.name]);
const typeOf = (o: KubeObject) => JSON.stringify([o.apiVersion, o.kind]);

/**
 * Pairs each real object with its canary-build twin: the same identity first; the rest (objects whose
 * name or namespace changed with the secret: a hash suffix, a copied slice) by order within their
 * apiVersion and kind. A real object without a twin is wholly derived (undefined).
 */
export function pairObjects(real: readonly KubeObject[], canary: readonly KubeObject[]): (KubeObject | undefined)[] {
  const used = new Set<number>();
  const realIds = new Set(real.map(identity));
  const byId = new Map<string, number[]>();
  canary.forEach((o, j) => byId.set(identity(o), [...(byId.get(identity(o)) ?? []), j]));
  const twins: (number | undefined)[] = real.map((o) => {
    const j = byId.get(identity(o))?.find((k) => !used.has(k));
    if (j !== undefined) used.add(j);
    return j;
  });
  real.forEach((o, i) => {
    if (twins[i] !== undefined) return;
    const j = canary.findIndex((c, k) => !used.has(k) && typeOf(c) === typeOf(o) && !realIds.has(identity(c)));
    if (j === -1) return;
    used.add(j);
    twins[i] = j;
  });
  return twins.map((j) => (j === undefined ? undefined : canary[j]));
}

/**
 * The part of `real` that differs from `other`, widened to whole parts between separators (a hash
 * suffix, a segment of a name), and to the whole text when that part is shorter than a mask can be;
 * undefined when they are equal.
 */
export function derivedPart(real: string, other: string): string | undefined {
  if (real === other) return undefined;
  let start = 0;
  while (start < real.length && start < other.length && real[start] === other[start]) start++;
  let end = real.length;
  let o = other.length;
  while (end > start && o > start && real[end - 1] === other[o - 1]) {
    end--;
    o--;
  }
  // Inserted or removed text only: the part around the place where it was.
  if (end === start) end = Math.min(real.length, start + 1);
  while (start > 0 && !SEPARATOR.test(real[start - 1]!)) start--;
  while (end < real.length && !SEPARATOR.test(real[end]!)) end++;
  const part = real.slice(start, end);
  return part.length >= MIN_SECRET_LENGTH ? part : real;
}

/** Every leaf's pointer under `v` (the pointer of `v` itself when it is a leaf or empty). */
function leafPaths(v: unknown, path: string, out: string[]): void {
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : isMap(v) ? Object.entries(v) : [];
  if (entries.length === 0) {
    out.push(path);
    return;
  }
  for (const [k, x] of entries) leafPaths(x, `${path}/${escapePointer(k)}`, out);
}

/**
 * The fields of `real` that differ from `other`: maps key by key (a key only `real` has is derived,
 * and so is its text, in `keys`), lists element by element when their lengths match and whole
 * otherwise, any other difference at the field.
 */
function differing(
  real: unknown,
  other: unknown,
  path: string,
  out: string[],
  keys: { key: string; map: string }[],
): void {
  if (isMap(real) && isMap(other)) {
    for (const [k, v] of Object.entries(real)) {
      const p = `${path}/${escapePointer(k)}`;
      if (Object.hasOwn(other, k)) differing(v, other[k], p, out, keys);
      else {
        keys.push({ key: k, map: path });
        leafPaths(v, p, out);
      }
    }
    // A key only the canary build has: the map's keys depend on the secret, so all of it is derived.
    if (Object.keys(other).some((k) => !Object.hasOwn(real, k))) leafPaths(real, path, out);
    return;
  }
  if (Array.isArray(real) && Array.isArray(other) && real.length === other.length) {
    real.forEach((v, i) => {
      differing(v, other[i], `${path}/${i}`, out, keys);
    });
    return;
  }
  // A list whose length changed, or a value whose type did: the whole field.
  if (!sameScalar(real, other)) out.push(path);
}

function sameScalar(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * What differs between the real build and the canary build, object by object and field by field, in
 * every kind: the fields (including `/metadata/name` when the name differs), and the text of derived
 * names, namespaces and map keys. A real object with no twin is derived whole.
 */
export function secretDerived(real: readonly KubeObject[], canary: readonly KubeObject[]): DerivedFields {
  const twins = pairObjects(real, canary);
  const paths: string[][] = [];
  const tokens = new Set<string>();
  const unhidable: DerivedFields['unhidable'] = [];
  const hide = (index: number, field: string, text: string, other: string | undefined) => {
    const part = other === undefined ? text : derivedPart(text, other);
    if (part === undefined || part === '') return;
    if (part.length >= MIN_SECRET_LENGTH) tokens.add(part);
    else unhidable.push({ index, field });
  };
  real.forEach((obj, i) => {
    const twin = twins[i];
    const out: string[] = [];
    const keys: { key: string; map: string }[] = [];
    if (twin === undefined) leafPaths(obj, '', out);
    else differing(obj, twin, '', out, keys);
    const name = obj.metadata.name;
    const namespace = obj.metadata.namespace ?? '';
    hide(i, 'metadata.name', name, twin === undefined ? undefined : twin.metadata.name);
    if (namespace !== '')
      hide(i, 'metadata.namespace', namespace, twin === undefined ? undefined : (twin.metadata.namespace ?? ''));
    // The key itself is never named: it is the secret's text.
    for (const { key, map } of keys) hide(i, `a key of ${map === '' ? 'the object' : map}`, key, undefined);
    paths[i] = [...new Set(out)].sort();
  });
  return { paths, tokens: [...tokens].sort(), unhidable };
}

/**
 * `real` (a message of the real build) with the text where it differs from `other` (the canary
 * build's message) replaced by `***`, widened to whole words: what kustomize quoted of a decrypted
 * value, in whatever form (`options.index 3 is out of bounds for value …`). One region, from the
 * first difference to the last: what lies between is not shown either.
 */
export function redactDifference(real: string, other: string): string {
  if (real === other) return real;
  let start = 0;
  while (start < real.length && start < other.length && real[start] === other[start]) start++;
  let end = real.length;
  let o = other.length;
  while (end > start && o > start && real[end - 1] === other[o - 1]) {
    end--;
    o--;
  }
  while (start > 0 && !/\s/.test(real[start - 1]!)) start--;
  while (end < real.length && !/\s/.test(real[end]!)) end++;
  return `${real.slice(0, start)}***${real.slice(end)}`;
}
