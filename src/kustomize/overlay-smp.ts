/**
 * A strategic merge patch as kustomize applies it (its patchstrategicmerge filter: kyaml merge2
 * with the built-in schema, lists growing at the front), for the patches and objects whose answer
 * is certain here; anything else gives undefined and the build runs kustomize.
 *
 * The rules (kyaml's walker and merger): maps merge key by key; a scalar or a list the schema does
 * not merge (overlay-schema.ts; every list of a custom resource) is the patch's; a list the schema
 * merges by keys holds the patch's elements first, in its order, each merged with the object's
 * element of the same keys, then the object's other elements in their order; a list of scalars the
 * schema merges holds the patch's values, then the object's others. Afterwards the object keeps its
 * kind, name and namespace (the patch's are how it was found). Left to kustomize: nulls (they
 * delete, but kyaml keeps or drops an object's own nulls by how they are written), `$` directives
 * ($patch, $retainKeys, $setElementOrder, $deleteFromPrimitiveList), merged lists whose elements
 * lack a key, repeat one or mix keyed and unkeyed elements, a change of a value's shape (kustomize
 * fails), and a map holding an apiVersion and a kind with a list below it (kyaml may take that
 * kind's schema there).
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';
import { KUSTOMIZE_DOMAIN } from './overlay-patch.js';
import { schemaOf } from './overlay-schema.js';

type Lists = ReadonlyMap<string, readonly string[]>;
const FAIL = Symbol('fail');

/** `obj` with `patch` merged in (a new object; `obj` is not changed), or undefined. */
export function strategicMerge(obj: KubeObject, patch: Record<string, unknown>): KubeObject | undefined {
  const schema = schemaOf(obj.apiVersion, obj.kind);
  if (schema === undefined || KUSTOMIZE_DOMAIN.test(JSON.stringify(patch))) return undefined;
  const { lists } = schema;
  if (!wellFormed(obj, '', lists) || !wellFormed(patch, '', lists)) return undefined;
  const merged = mergeValue(structuredClone(obj), patch, '', lists);
  if (merged === FAIL || !isRecord(merged) || !isRecord(merged['metadata'])) return undefined;
  const out = merged as KubeObject;
  // With a target kustomize gives the patch the object's apiVersion; by id they are the same.
  out.apiVersion = obj.apiVersion;
  out.kind = obj.kind;
  out.metadata.name = obj.metadata.name;
  const ns = obj.metadata.namespace;
  if (ns === undefined || ns === '') delete out.metadata.namespace;
  else out.metadata.namespace = ns;
  return out;
}

/** The merge of `p` into `d` at `path` (`d` is changed in place and returned, or replaced), or FAIL. */
function mergeValue(d: unknown, p: unknown, path: string, lists: Lists): unknown {
  if (p === undefined) return d;
  // `d` and `p` are well formed (no nulls): a field the object lacks is the patch's.
  if (d === undefined) return structuredClone(p);
  if (isRecord(d) && isRecord(p)) {
    for (const [k, v] of Object.entries(p)) {
      const r = mergeValue(Object.hasOwn(d, k) ? d[k] : undefined, v, path === '' ? k : `${path}.${k}`, lists);
      if (r === FAIL) return FAIL;
      d[k] = r;
    }
    return d;
  }
  if (Array.isArray(d) && Array.isArray(p)) return mergeList(d, p, path, lists);
  // A map or list against another shape: kustomize fails.
  if (isRecord(d) || isRecord(p) || Array.isArray(d) || Array.isArray(p)) return FAIL;
  return p;
}

function mergeList(d: unknown[], p: unknown[], path: string, lists: Lists): unknown {
  const keys = lists.get(path);
  if (keys === undefined) return structuredClone(p);
  if (keys.length === 0) {
    // A merged list of scalars (finalizers): the patch's values, then the object's others.
    return [...p, ...d.filter((v) => !p.includes(v))];
  }
  // Elements with every key against elements with the first alone: kyaml matches them loosely.
  if (keys.length > 1 && d.length > 0 && p.length > 0 && fullKeys(d[0], keys) !== fullKeys(p[0], keys)) return FAIL;
  const byKey = (items: unknown[]) => new Map(items.map((e) => [keyOf(e as Record<string, unknown>, keys), e]));
  const dest = byKey(d);
  const patch = byKey(p);
  const order = [...patch.keys(), ...[...dest.keys()].filter((k) => !patch.has(k))];
  const out: unknown[] = [];
  for (const k of order) {
    const r = mergeValue(dest.get(k), patch.get(k), `${path}[]`, lists);
    if (r === FAIL) return FAIL;
    out.push(r);
  }
  return out;
}

/** The text of an element's merge keys (kyaml compares the scalars' text). */
function keyOf(e: Record<string, unknown>, keys: readonly string[]): string {
  return JSON.stringify(
    keys.map((k) => {
      const v = e[k];
      return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
    }),
  );
}

/**
 * Whether `v` (at `path`) is what the merge here reads as kyaml does: no nulls, no `$` keys or
 * `__proto__`, every merged list's elements keyed alike and once (see keyedAlike), merged lists of
 * scalars of strings without repeats, no list where the schema names a merge key, and no map below
 * the top with an apiVersion and a kind and a list in it.
 */
function wellFormed(v: unknown, path: string, lists: Lists): boolean {
  if (v === null) return false;
  if (Array.isArray(v)) {
    if (path.endsWith('.key') || path === 'key') return false;
    const keys = lists.get(path);
    if (keys !== undefined) {
      if (keys.length === 0) {
        if (!v.every((e) => typeof e === 'string') || new Set(v).size !== v.length) return false;
      } else if (!keyedAlike(v, keys)) return false;
    }
    return v.every((e) => wellFormed(e, `${path}[]`, lists));
  }
  if (!isRecord(v)) return true;
  if (path !== '' && typeof v['apiVersion'] === 'string' && typeof v['kind'] === 'string' && hasList(v)) return false;
  return Object.entries(v).every(
    ([k, e]) => !k.startsWith('$') && k !== '__proto__' && wellFormed(e, path === '' ? k : `${path}.${k}`, lists),
  );
}

/**
 * Elements that are maps each with its merge keys' values (strings or integers), all with every
 * key or all with the first alone, no two alike: kyaml's matching of them is then plain.
 */
function keyedAlike(items: unknown[], keys: readonly string[]): boolean {
  if (!items.every(isRecord)) return false;
  const scalar = (x: unknown) => typeof x === 'string' || (typeof x === 'number' && Number.isSafeInteger(x));
  const full = items.every((e) => keys.every((k) => scalar(e[k])));
  const first = items.every((e) => scalar(e[keys[0]!]) && keys.slice(1).every((k) => e[k] === undefined));
  if (!full && !first) return false;
  return new Set(items.map((e) => keyOf(e, keys))).size === items.length;
}

function fullKeys(e: unknown, keys: readonly string[]): boolean {
  return isRecord(e) && keys.every((k) => e[k] !== undefined);
}

function hasList(v: unknown): boolean {
  if (Array.isArray(v)) return true;
  return isRecord(v) && Object.values(v).some(hasList);
}
