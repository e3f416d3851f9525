/**
 * JSON 6902 patches as kustomize applies them (github.com/evanphx/json-patch, on the object's
 * JSON), for the operations the overlay build accepts: add, replace and remove at a JSON pointer.
 * Anything that library would refuse, or might read otherwise (an index with a leading zero, a
 * negative one, the whole document, kustomize's own fields), gives undefined: the build then runs
 * kustomize, which gives its own answer or error.
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';

export type Op = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * Paths a patch may not touch here: the object's identity (kustomize tracks it). A patch may replace
 * the whole annotations map: with origin annotations on, kustomize then names the kustomization (its
 * patch transformer) as the object's origin; the origin here stays the file the object came from.
 */
const IDENTITY = /^\/(?:apiVersion|kind|metadata(?:\/name)?)$/;
/** kustomize's own domains anywhere in a key, path or value (its annotations and labels): left to it. */
export const KUSTOMIZE_DOMAIN = /config\.(?:kubernetes\.io|k8s\.io)/;
const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

/** `obj` with `ops` applied in order (a new object; `obj` is not changed), or undefined. */
export function applyOps(obj: KubeObject, ops: readonly Op[]): KubeObject | undefined {
  let doc = structuredClone(obj) as unknown;
  for (const op of ops) {
    if (IDENTITY.test(op.path) || KUSTOMIZE_DOMAIN.test(op.path)) return undefined;
    if (op.op !== 'remove' && KUSTOMIZE_DOMAIN.test(JSON.stringify(op.value))) return undefined;
    const tokens = pointer(op.path);
    if (tokens === undefined) return undefined;
    const next = applyOne(doc, tokens, op);
    if (next === undefined) return undefined;
    doc = next;
  }
  return doc as KubeObject;
}

/** The tokens of a JSON pointer (`~1` is `/`, `~0` is `~`), or undefined for the whole document or a bad escape. */
function pointer(path: string): string[] | undefined {
  if (!path.startsWith('/')) return undefined;
  const tokens = path.slice(1).split('/');
  if (tokens.some((t) => /~(?![01])/.test(t))) return undefined;
  return tokens.map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function applyOne(doc: unknown, tokens: string[], op: Op): unknown {
  let parent: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    parent = child(parent, t);
    if (parent === undefined) return undefined;
  }
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (op.op === 'add' && last === '-') {
      parent.push(structuredClone(op.value));
      return doc;
    }
    if (!INDEX.test(last)) return undefined;
    const i = Number(last);
    if (op.op === 'add') {
      if (i > parent.length) return undefined;
      parent.splice(i, 0, structuredClone(op.value));
    } else {
      if (i >= parent.length) return undefined;
      if (op.op === 'replace') parent[i] = structuredClone(op.value);
      else parent.splice(i, 1);
    }
    return doc;
  }
  if (typeof parent !== 'object' || parent === null || last === '__proto__') return undefined;
  const map = parent as Record<string, unknown>;
  const has = Object.hasOwn(map, last);
  if (op.op === 'add') map[last] = structuredClone(op.value);
  else if (!has) return undefined;
  else if (op.op === 'replace') map[last] = structuredClone(op.value);
  else Reflect.deleteProperty(map, last);
  return doc;
}

function child(parent: unknown, token: string): unknown {
  if (Array.isArray(parent)) return INDEX.test(token) ? parent[Number(token)] : undefined;
  if (typeof parent !== 'object' || parent === null || token === '__proto__') return undefined;
  const map = parent as Record<string, unknown>;
  return Object.hasOwn(map, token) ? map[token] : undefined;
}

/** The operations of a JSON 6902 patch's value (add, replace or remove at a pointer), or undefined. */
export function readOps(ops: unknown): Op[] | undefined {
  if (!Array.isArray(ops) || ops.length === 0) return undefined;
  const out: Op[] = [];
  for (const op of ops) {
    if (!isRecord(op)) return undefined;
    const keys = Object.keys(op);
    const { op: name, path, value } = op;
    if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) return undefined;
    if (name === 'remove' && keys.length === 2 && keys.includes('path')) out.push({ op: 'remove', path });
    else if ((name === 'add' || name === 'replace') && keys.length === 3 && 'value' in op) {
      out.push({ op: name, path, value });
    } else return undefined;
  }
  return out;
}
