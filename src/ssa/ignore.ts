import { RE2JS } from 're2js';
import type { KubeObject } from '../objects/kube.js';
import type { IgnoreRule, Selector } from '../flux/types.js';
import { isMap } from './json.js';

/**
 * Drift-ignore rules (`spec.ignore`, Flux v1.9): which objects a rule selects, and the JSON-pointer
 * edits Flux makes with the selected paths — stripped from both sides before the drift compare, and
 * adopted from the live object when an apply happens anyway.
 */

/**
 * Flux's `SelectorRegex` match: a rule without a target matches every object. `group`, `version`,
 * `kind`, `name` and `namespace` are regular expressions anchored `^(?:…)$` (the core group is "",
 * a cluster-scoped object's namespace is ""); `labelSelector` and `annotationSelector` are Kubernetes
 * label selectors over the labels and annotations. An invalid regex or selector throws.
 */
export function ruleMatches(rule: IgnoreRule, obj: KubeObject): boolean {
  const target = rule.target;
  if (!target) return true;
  const { group, version } = splitApiVersion(obj.apiVersion);
  const fields: [keyof Selector, string][] = [
    ['group', group],
    ['version', version],
    ['kind', obj.kind],
    ['name', obj.metadata.name],
    ['namespace', obj.metadata.namespace ?? ''],
  ];
  for (const [field, value] of fields) {
    const pattern = target[field];
    if (pattern === undefined || pattern === '') continue;
    if (!anchored(pattern, field).test(value)) return false;
  }
  if (target.labelSelector && !selectorMatches(target.labelSelector, obj.metadata.labels ?? {})) return false;
  if (target.annotationSelector && !selectorMatches(target.annotationSelector, obj.metadata.annotations ?? {})) {
    return false;
  }
  return true;
}

/** The JSON pointers of every rule that matches `obj`, in rule order, without duplicates. */
export function ignoredPaths(rules: readonly IgnoreRule[], obj: KubeObject): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    if (!ruleMatches(rule, obj)) continue;
    for (const p of rule.paths) if (!out.includes(p)) out.push(p);
  }
  return out;
}

/**
 * A deep copy of `obj` with each JSON pointer removed in turn (JSON-patch `remove` semantics, so a
 * removed array element shifts the later ones). Missing paths are ignored; the root cannot be removed.
 */
export function stripPaths<T>(obj: T, pointers: readonly string[]): T {
  const copy = cloneJson(obj);
  for (const p of pointers) {
    const segments = parsePointer(p);
    if (!segments.some((s) => UNSAFE_KEYS.has(s))) removeAt(copy, segments);
  }
  return copy;
}

/**
 * The desired object for the apply of an object that exists: each ignored path takes the live value
 * when the live object has it, and is removed from the desired object otherwise, so an ignored field
 * (say `/spec/replicas` owned by an HPA) is never overwritten. Without a live object (a creation,
 * where Flux does not apply ignore rules) the result is an unchanged copy.
 */
export function adoptPaths(
  desired: KubeObject,
  live: Record<string, unknown> | undefined,
  pointers: readonly string[],
): KubeObject {
  const copy = cloneJson(desired);
  if (!live) return copy;
  for (const p of pointers) {
    const segments = parsePointer(p);
    if (segments.length === 0 || segments.some((s) => UNSAFE_KEYS.has(s))) continue;
    const found = getAt(live, segments);
    if (found.ok) setAt(copy, segments, live, found.value);
    else removeAt(copy, segments);
  }
  return copy;
}

/** RFC 6901: `""` is the whole document; otherwise `/`-separated segments with `~1` → `/` and `~0` → `~`. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`invalid JSON pointer "${pointer}": must start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => {
      if (/~[^01]|~$/.test(s)) throw new Error(`invalid JSON pointer "${pointer}": bad "~" escape`);
      return s.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.lastIndexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

const anchoredCache = new Map<string, RE2JS>();

/**
 * A target's Go regular expression anchored `^(?:…)$`, matched by re2js: the Kustomization comes
 * from the tree, so it runs in linear time (RE2 syntax, as Flux compiles it).
 */
function anchored(pattern: string, field: string): RE2JS {
  let re = anchoredCache.get(pattern);
  if (re !== undefined) return re;
  try {
    re = RE2JS.compile(`^(?:${pattern})$`);
  } catch (e) {
    throw new Error(`invalid ${field} regex "${pattern}" in ignore target: ${(e as Error).message}`, { cause: e });
  }
  if (anchoredCache.size >= 1000) anchoredCache.clear();
  anchoredCache.set(pattern, re);
  return re;
}

type Requirement =
  { op: 'in' | 'notin'; key: string; values: string[] } | { op: 'exists' | 'doesnotexist'; key: string };

const KEY = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const EQUALITY = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`);
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s*\(([^()]*)\)$`);
const EXISTS = new RegExp(String.raw`^(!?)\s*(${KEY})$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

/** Kubernetes label-selector syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; comma = AND. */
export function selectorMatches(selector: string, labels: Readonly<Record<string, string>>): boolean {
  return parseSelector(selector).every((r) => {
    const has = Object.hasOwn(labels, r.key);
    const value = labels[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case 'doesnotexist':
        return !has;
      case 'in':
        return has && value !== undefined && r.values.includes(value);
      case 'notin':
        return !has || value === undefined || !r.values.includes(value);
    }
  });
}

function parseSelector(selector: string): Requirement[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) throw new Error(`invalid selector "${selector}": unbalanced parentheses`);
  }
  if (depth !== 0) throw new Error(`invalid selector "${selector}": unbalanced parentheses`);
  parts.push(selector.slice(start));
  if (parts.length === 1 && parts[0]?.trim() === '') return [];
  return parts.map((raw) => parseRequirement(raw.trim(), selector));
}

function parseRequirement(text: string, selector: string): Requirement {
  const bad = (): Error => new Error(`invalid selector "${selector}": cannot parse "${text}"`);
  let m = EQUALITY.exec(text);
  if (m) {
    const [, key = '', op, value = ''] = m;
    return { op: op === '!=' ? 'notin' : 'in', key, values: [value] };
  }
  m = SET.exec(text);
  if (m) {
    const [, key = '', op, list = ''] = m;
    const values = list.split(',').map((v) => v.trim());
    if (values.some((v) => !VALUE_ONLY.test(v))) throw bad();
    return { op: op === 'notin' ? 'notin' : 'in', key, values };
  }
  m = EXISTS.exec(text);
  if (m) {
    const [, not, key = ''] = m;
    return { op: not ? 'doesnotexist' : 'exists', key };
  }
  throw bad();
}

type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

/** An array index per RFC 6901 (no leading zeros); `-` and anything else address nothing. */
function arrayIndex(segment: string): number | undefined {
  return /^(?:0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : undefined;
}

function child(parent: unknown, segment: string): { ok: true; value: unknown } | { ok: false } {
  if (Array.isArray(parent)) {
    const i = arrayIndex(segment);
    return i !== undefined && i < parent.length ? { ok: true, value: parent[i] } : { ok: false };
  }
  if (isMap(parent) && Object.hasOwn(parent, segment)) return { ok: true, value: parent[segment] };
  return { ok: false };
}

function getAt(root: unknown, segments: readonly string[]): { ok: true; value: unknown } | { ok: false } {
  let cur: { ok: true; value: unknown } | { ok: false } = { ok: true, value: root };
  for (const s of segments) {
    if (!cur.ok) return cur;
    cur = child(cur.value, s);
  }
  return cur;
}

function removeAt(root: unknown, segments: readonly string[]): void {
  const last = segments.at(-1);
  if (last === undefined) return;
  const parent = getAt(root, segments.slice(0, -1));
  if (!parent.ok) return;
  const p = parent.value;
  if (Array.isArray(p)) {
    const i = arrayIndex(last);
    if (i !== undefined && i < p.length) p.splice(i, 1);
  } else if (isMap(p) && Object.hasOwn(p, last)) {
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a key named by a JSON pointer
    delete p[last];
  }
}

/**
 * Sets `value` at `segments` in `root`, creating missing intermediate maps or lists (shaped like the
 * same prefix of `shape`, the live object). An array index past the end of a list is skipped.
 */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function setAt(root: unknown, segments: readonly string[], shape: unknown, value: unknown): void {
  // A path through an object's prototype would change every object in the process, not this one.
  if (segments.some((s) => UNSAFE_KEYS.has(s))) return;
  let cur = root;
  let model: unknown = shape;
  for (const [n, s] of segments.entries()) {
    const modelNext = child(model, s);
    model = modelNext.ok ? modelNext.value : undefined;
    const isLast = n === segments.length - 1;
    if (Array.isArray(cur)) {
      const i = arrayIndex(s);
      if (i === undefined || i > cur.length) return;
      if (isLast || !isContainer(cur[i])) cur[i] = isLast ? cloneJson(value) : Array.isArray(model) ? [] : {};
      cur = cur[i];
    } else if (isMap(cur)) {
      if (isLast || !isContainer(cur[s])) cur[s] = isLast ? cloneJson(value) : Array.isArray(model) ? [] : {};
      cur = cur[s];
    } else {
      return;
    }
  }
}

function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => cloneJson(v)) as T;
  if (isMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!UNSAFE_KEYS.has(k)) out[k] = cloneJson(v);
    return out as T;
  }
  return value;
}
