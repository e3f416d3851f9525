/**
 * kustomize's label and annotation transformers for the in-process overlay build: `labels`
 * entries (metadata/labels; with includeTemplates the pod templates' labels too; with
 * includeSelectors the commonLabels field specs), then `commonLabels` (the commonLabels field
 * specs: selectors, templates, per kind), each one LabelTransformer in that order; and
 * `commonAnnotations` (the commonAnnotations field specs). A `labels` entry's own `fields` come
 * first, merged with the defaults as kustomize merges them. Each pair is set at every place its
 * field specs reach (overlay-fieldspecs.ts); values are strings, as kustomize's Kustomization type
 * takes them.
 */
import { isRecord } from '../util/record.js';
import {
  applyFieldSpecs,
  COMMON_ANNOTATIONS,
  COMMON_LABELS,
  METADATA_ONLY,
  TEMPLATE_LABEL_SPECS,
  type FieldSpec,
  type Setter,
} from './overlay-fieldspecs.js';
import { KUSTOMIZE_DOMAIN } from './overlay-patch.js';
import type { Built, FieldReader, Step } from './overlay-types.js';

/** One transformer: the pairs and where they go. */
interface Transformer {
  pairs: Readonly<Record<string, string>>;
  specs: readonly FieldSpec[];
}

/**
 * A kustomization's map of strings (pairs, commonLabels, commonAnnotations), or undefined when it is
 * not one or a key is in kustomize's own domains (its build annotations and local-config markers).
 * An absent field is an empty map (a transformer that does nothing).
 */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (v === undefined) return {};
  if (!isRecord(v)) return undefined;
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== 'string' || KUSTOMIZE_DOMAIN.test(key) || KUSTOMIZE_DOMAIN.test(value)) return undefined;
  }
  return v as Record<string, string>;
}

const LABEL_FIELDS = new Set(['pairs', 'includeSelectors', 'includeTemplates', 'fields']);
const SPEC_FIELDS = new Set(['path', 'create', 'group', 'version', 'kind']);
/** A field spec path this build walks as kustomize does: plain segments, lists marked `[]`, no escapes. */
const SPEC_PATH = /^[A-Za-z0-9_-]+(?:\[\])?(?:\/[A-Za-z0-9_-]+(?:\[\])?)*$/;

/** An entry's own field specs (`fields`), or undefined. */
function ownSpecs(v: unknown): FieldSpec[] | undefined {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return undefined;
  const out: FieldSpec[] = [];
  for (const f of v) {
    if (!isRecord(f) || Object.keys(f).some((x) => !SPEC_FIELDS.has(x))) return undefined;
    const { path, create = false, group = '', version = '', kind = '' } = f;
    if (typeof path !== 'string' || !SPEC_PATH.test(path) || typeof create !== 'boolean') return undefined;
    if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string') return undefined;
    out.push({ group, version, kind, path, create });
  }
  return out;
}

/**
 * kustomize's FsSlice.MergeAll: each incoming spec is added unless one already there is the same
 * path for objects the incoming one selects (then it is dropped, or, when the two differ in
 * `create`, kustomize fails: undefined).
 */
function mergeSpecs(into: readonly FieldSpec[], incoming: readonly FieldSpec[]): FieldSpec[] | undefined {
  const out = [...into];
  for (const x of incoming) {
    const same = out.find(
      (s) =>
        s.path === x.path &&
        (!x.group || x.group === (s.group ?? '')) &&
        (!x.version || x.version === (s.version ?? '')) &&
        (!x.kind || x.kind === (s.kind ?? '')),
    );
    if (same === undefined) out.push(x);
    else if (same.create !== x.create) return undefined;
  }
  return out;
}

/** The field specs of one `labels` entry (kustomize's LabelTransformer configurator), or undefined. */
function labelEntry(l: unknown): Transformer | undefined {
  if (!isRecord(l) || Object.keys(l).some((f) => !LABEL_FIELDS.has(f))) return undefined;
  const { includeSelectors = false, includeTemplates = false } = l;
  if (typeof includeSelectors !== 'boolean' || typeof includeTemplates !== 'boolean') return undefined;
  const pairs = stringMap(l['pairs']);
  const own = ownSpecs(l['fields']);
  if (pairs === undefined || own === undefined) return undefined;
  let specs: FieldSpec[] | undefined;
  if (includeSelectors) specs = mergeSpecs(own, COMMON_LABELS);
  else {
    specs = includeTemplates ? mergeSpecs(own, TEMPLATE_LABEL_SPECS) : own;
    specs = specs && mergeSpecs(specs, METADATA_ONLY);
  }
  return specs && { pairs, specs };
}

/** The step setting each transformer's pairs at its field specs on every object, in order. */
function pairsStep(transformers: readonly Transformer[]): Step {
  return (built: Built[]) => {
    for (const { pairs, specs } of transformers) {
      const entries = Object.entries(pairs);
      if (entries.length === 0) continue;
      if (!built.every((b) => setPairs(b, entries, specs))) return undefined;
    }
    return built;
  };
}

/**
 * One transformer on one object. kustomize makes one YAML node per key and object and puts that
 * same node at every place where the key is new, and copies into the node already there where it
 * is not: the places made together stay one node (Built.aliased), and a later transformer that
 * changes one of them changes them all. A change to some places of such a group and not to all is
 * left to kustomize (a patch in between may have parted them).
 */
function setPairs(b: Built, entries: readonly [string, string][], specs: readonly FieldSpec[]): boolean {
  const created = new Map<string, string[]>();
  const written = new Set<string>();
  const changed = new Set<string>();
  const set: Setter = (parent, field, where) => {
    const map = parent[field];
    if (!isRecord(map)) return false;
    for (const [key, value] of entries) {
      const place = `${where}\n${key}`;
      if (!Object.hasOwn(map, key)) created.set(key, [...(created.get(key) ?? []), place]);
      else if (map[key] !== value) changed.add(place);
      written.add(place);
      map[key] = value;
    }
    return true;
  };
  if (!applyFieldSpecs(b.obj, specs, 'map', set)) return false;
  const groups = b.aliased ?? [];
  // A value written into one place of a group is written into the node all its places share.
  for (const g of groups) {
    const place = g.find((p) => changed.has(p));
    if (place === undefined) continue;
    const value = valueAt(b.obj, place);
    if (typeof value !== 'string' || !g.every((p) => written.has(p) || setAt(b.obj, p, value))) return false;
  }
  const made = [...created.values()].filter((g) => g.length > 1);
  if (made.length > 0) b.aliased = [...groups, ...made];
  return true;
}

/** `labels` then `commonLabels`: one label transformer each, in that order. */
export const labelsReader: FieldReader = {
  fields: ['labels', 'commonLabels'],
  read(k) {
    const labels = k['labels'] ?? [];
    if (!Array.isArray(labels)) return undefined;
    const transformers: Transformer[] = [];
    for (const l of labels) {
      const t = labelEntry(l);
      if (t === undefined) return undefined;
      transformers.push(t);
    }
    const common = stringMap(k['commonLabels']);
    if (common === undefined) return undefined;
    transformers.push({ pairs: common, specs: COMMON_LABELS });
    return pairsStep(transformers);
  },
};

/** `commonAnnotations`: its pairs at the commonAnnotations field specs. */
export const annotationsReader: FieldReader = {
  fields: ['commonAnnotations'],
  read(k) {
    const pairs = stringMap(k['commonAnnotations']);
    return pairs === undefined ? undefined : pairsStep([{ pairs, specs: COMMON_ANNOTATIONS }]);
  },
};

/** The path segments and the key of a place of Built.aliased (`a/0/b` then a newline and the key). */
function placeOf(place: string): { path: string[]; key: string } {
  const [path = '', key = ''] = place.split('\n');
  return { path: path.split('/'), key };
}

/** The map holding a place's key, walking lists by index, or undefined. */
function holderAt(obj: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let node = obj;
  for (const segment of path) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) node = node[Number(segment)];
    else if (isRecord(node) && Object.hasOwn(node, segment)) node = node[segment];
    else return undefined;
  }
  return isRecord(node) ? node : undefined;
}

/** The value at a place of Built.aliased, or undefined. */
export function valueAt(obj: unknown, place: string): unknown {
  const { path, key } = placeOf(place);
  const holder = holderAt(obj, path);
  return holder !== undefined && Object.hasOwn(holder, key) ? holder[key] : undefined;
}

/** Sets the value at a place whose key is there; false when it is not. */
function setAt(obj: unknown, place: string, value: string): boolean {
  const { path, key } = placeOf(place);
  const holder = holderAt(obj, path);
  if (holder === undefined || !Object.hasOwn(holder, key)) return false;
  holder[key] = value;
  return true;
}
