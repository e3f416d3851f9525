/**
 * kustomize's patch transformers for the in-process overlay build: `patches` (a JSON 6902 patch
 * with a target, or a strategic merge patch by a target or by its own id; inline or from a file),
 * `patchesStrategicMerge` (files or inline patches, each by its own id) and `patchesJson6902` (a
 * target with a file or an inline patch). JSON 6902 operations are applied by overlay-patch.ts,
 * strategic merges by overlay-smp.ts. A patch, target or option whose answer is not certain here,
 * and every case kustomize refuses (no or several objects for a patch's id, a missing file, a
 * JSON patch without a target), gives undefined: the build runs kustomize.
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';
import { groupVersion } from './legacy-order.js';
import { applyOps, KUSTOMIZE_DOMAIN, readOps, type Op } from './overlay-patch.js';
import { safeYaml } from './overlay-read.js';
import { schemaOf } from './overlay-schema.js';
import { strategicMerge } from './overlay-smp.js';
import { valueAt } from './overlay-labels.js';
import type { At, Built, FieldReader, Step } from './overlay-types.js';

interface Target {
  group?: RegExp;
  version?: RegExp;
  kind?: RegExp;
  name?: RegExp;
  namespace?: RegExp;
  labelSelector?: [string, string];
  annotationSelector?: [string, string];
}

/** A strategic merge patch and the id kustomize finds its object by. */
interface SmPatch {
  value: Record<string, unknown>;
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

type Patch =
  /** `store`: kustomize keeps the object's id before the patch (`patches` does, `patchesJson6902` not). */
  | { type: 'json'; target: Target; ops: Op[]; store: boolean }
  | { type: 'smp'; target: Target | undefined; patch: SmPatch };

/** `patches`: each entry in order. */
export const patchesReader: FieldReader = {
  fields: ['patches'],
  read(k, at) {
    const patches = k['patches'];
    if (!Array.isArray(patches) || patches.length === 0) return undefined;
    const read: Patch[] = [];
    for (const p of patches) {
      const patch = readPatch(p, at);
      if (patch === undefined) return undefined;
      read.push(patch);
    }
    return stepOf(read);
  },
};

/** `patchesStrategicMerge`: patches (a file's path, or the patch itself) applied by their own ids, in order. */
export const smpReader: FieldReader = {
  fields: ['patchesStrategicMerge'],
  read(k, at) {
    const list = k['patchesStrategicMerge'];
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const read: Patch[] = [];
    for (const entry of list) {
      if (typeof entry !== 'string') return undefined;
      // kustomize reads the entry as a patch first, as a file's path when that fails.
      const inline = safeYaml(entry);
      const text = isRecord(inline) ? entry : entry.includes('\n') ? undefined : at.read(entry)?.text;
      // A file may hold several patches, one a document, applied in order.
      const docs = text === undefined ? undefined : isRecord(inline) ? [text] : documents(text);
      if (docs === undefined) return undefined;
      for (const doc of docs) {
        const patch = smPatch(patchValue(doc));
        if (patch === undefined) return undefined;
        read.push({ type: 'smp', target: undefined, patch });
      }
    }
    return stepOf(read);
  },
};

/**
 * The documents of a patch file split at its `---` lines, or undefined when one is empty (kustomize
 * skips it; not modelled) or a separator line carries anything else.
 */
function documents(text: string): string[] | undefined {
  const docs = text.split(/^---[ \t]*(?:\n|$)/m);
  if (docs[0] === '') docs.shift();
  return docs.length > 0 && docs.every((d) => d.trim() !== '') ? docs : undefined;
}

/** `patchesJson6902`: JSON 6902 patches with a target that names the object, from a file or inline. */
export const json6902Reader: FieldReader = {
  fields: ['patchesJson6902'],
  read(k, at) {
    const list = k['patchesJson6902'];
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const read: Patch[] = [];
    for (const p of list) {
      if (!isRecord(p) || Object.keys(p).some((f) => !['target', 'path', 'patch'].includes(f))) return undefined;
      const text = patchText(p, at, false);
      const target = readTarget(p['target']);
      if (text === undefined || target?.name === undefined) return undefined;
      const ops = readOps(patchValue(text));
      if (ops === undefined) return undefined;
      read.push({ type: 'json', target, ops, store: false });
    }
    return stepOf(read);
  },
};

/** One `patches` entry, or undefined. */
function readPatch(p: unknown, at: At): Patch | undefined {
  if (!isRecord(p) || Object.keys(p).some((f) => !['patch', 'path', 'target', 'options'].includes(f))) return undefined;
  const { options } = p;
  if (options !== undefined) {
    // Options that allow a name or kind change keep ids kustomize tracks: left to it.
    if (!isRecord(options)) return undefined;
    const trivial = Object.entries(options).every(
      ([f, v]) => ['allowNameChange', 'allowKindChange'].includes(f) && v === false,
    );
    if (!trivial) return undefined;
  }
  const text = patchText(p, at, true);
  if (text === undefined) return undefined;
  const target = p['target'] === undefined ? undefined : readTarget(p['target']);
  if (p['target'] !== undefined && target === undefined) return undefined;
  const value = patchValue(text);
  if (Array.isArray(value)) {
    const ops = readOps(value);
    return ops === undefined || target === undefined ? undefined : { type: 'json', target, ops, store: true };
  }
  const patch = smPatch(value);
  return patch === undefined ? undefined : { type: 'smp', target, patch };
}

/** The text of an entry's `patch` (trimmed where kustomize trims it) or of the file its `path` names. */
function patchText(p: Record<string, unknown>, at: At, trim: boolean): string | undefined {
  const { patch, path } = p;
  if ((patch === undefined) === (path === undefined)) return undefined;
  if (typeof patch === 'string') return trim ? patch.trim() : patch;
  if (typeof path !== 'string') return undefined;
  return at.read(path)?.text;
}

/**
 * The value of a patch's text, when every reader takes it alike: YAML as overlay-read.ts reads it
 * (one document, a `---` line first at most), JSON (text starting with `[`) only where the YAML
 * reading is the same. Comments holding `{` are refused: kyaml may read them as a field's schema.
 */
function patchValue(text: string): unknown {
  const body = text.startsWith('---\n') ? text.slice(4) : text;
  if (/#[^\n]*\{/.test(body)) return undefined;
  const value = safeYaml(body);
  if (value === undefined || !text.startsWith('[')) return value;
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A strategic merge patch: a map with the apiVersion, kind and name kustomize finds its object by. */
function smPatch(value: unknown): SmPatch | undefined {
  if (!isRecord(value)) return undefined;
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || apiVersion === '' || typeof kind !== 'string' || kind === '') return undefined;
  // A list kind is read as its items.
  if (kind.endsWith('List') || !isRecord(metadata)) return undefined;
  const { name, namespace } = metadata;
  if (typeof name !== 'string' || name === '') return undefined;
  if (namespace !== undefined && typeof namespace !== 'string') return undefined;
  return { value, apiVersion, kind, name, namespace: namespace ?? '' };
}

/** A selector field kustomize reads as an anchored regular expression: names whose reading is the same in RE2 and here. */
const SELECTOR_TEXT = /^[A-Za-z0-9.-]+$/;
/** A label selector of one equality, `key=value`, with a key and value Kubernetes takes. */
const EQUALITY =
  /^((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\/)?[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)=([A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$/;

function readTarget(target: unknown): Target | undefined {
  if (!isRecord(target)) return undefined;
  const t: Target = {};
  for (const [field, v] of Object.entries(target)) {
    if (typeof v !== 'string') return undefined;
    if (field === 'labelSelector' || field === 'annotationSelector') {
      const m = EQUALITY.exec(v);
      if (m === null || KUSTOMIZE_DOMAIN.test(m[1]!)) return undefined;
      t[field] = [m[1]!, m[2]!];
    } else if (['group', 'version', 'kind', 'name', 'namespace'].includes(field) && SELECTOR_TEXT.test(v)) {
      t[field as 'group' | 'version' | 'kind' | 'name' | 'namespace'] = new RegExp(`^(?:${v})$`);
    } else return undefined;
  }
  return Object.keys(t).length > 0 ? t : undefined;
}

function stepOf(patches: readonly Patch[]): Step {
  return (built) => (patches.every((p) => apply(built, p)) ? built : undefined);
}

/** One patch on the objects built so far; false when its answer is kustomize's to give. */
function apply(built: Built[], patch: Patch): boolean {
  if (patch.type === 'smp' && patch.target === undefined) {
    // By the patch's id: kustomize demands exactly one object with that id now or before.
    const hits: Built[] = [];
    for (const b of built) {
      const hit = hasId(b, patch.patch);
      if (hit === undefined) return false;
      if (hit) hits.push(b);
    }
    return hits.length === 1 && merge(hits[0]!, patch.patch.value);
  }
  for (const b of built) {
    const hit = selects(patch.target!, b);
    if (hit === undefined) return false;
    if (!hit) continue;
    if (patch.type === 'smp') {
      if (!merge(b, patch.patch.value)) return false;
      continue;
    }
    const patched = applyOps(b.obj, patch.ops);
    if (patched === undefined) return false;
    const before = b.obj.metadata.namespace ?? '';
    if ((patched.metadata.namespace ?? '') !== before) {
      // A namespace changed where kustomize keeps no id before it: left to kustomize.
      if (!patch.store) return false;
      b.previousNamespaces = [...(b.previousNamespaces ?? []), before];
    }
    b.obj = patched;
    // kustomize reads a JSON-patched object back from JSON: no node is shared any more.
    delete b.aliased;
  }
  return true;
}

function merge(b: Built, value: Record<string, unknown>): boolean {
  const merged = strategicMerge(b.obj, value);
  if (merged === undefined) return false;
  // kyaml merges into the object's own nodes: a value changed at one place of a group a label
  // transformer made as one node (Built.aliased) changes at all of them; a list on the way may be
  // replaced by the patch's. Neither is modelled: left to kustomize.
  for (const group of b.aliased ?? []) {
    for (const place of group) {
      if (/(?:^|\/)\d+\//.test(place) || valueAt(merged, place) !== valueAt(b.obj, place)) return false;
    }
  }
  b.obj = merged;
  return true;
}

/** kustomize's effective namespace of an object of a kind (namespaced: '' is `default`), or undefined. */
function effective(obj: KubeObject, ns: unknown): string | undefined {
  const scope = schemaOf(obj.apiVersion, obj.kind);
  if (scope === undefined || typeof ns !== 'string') return undefined;
  if (!scope.namespaced) return '';
  return ns === '' ? 'default' : ns;
}

/**
 * Whether `b` has the patch's id now or had it before (kustomize's GetById over its previous
 * ids), or undefined when that is not certain: the pairs of its past names and namespaces are
 * known only when one of the two never changed.
 */
function hasId(b: Built, p: SmPatch): boolean | undefined {
  const { obj } = b;
  if (obj.apiVersion !== p.apiVersion || obj.kind !== p.kind) return false;
  const cur = effective(obj, obj.metadata.namespace ?? '');
  const wanted = effective(obj, p.namespace);
  if (cur === undefined || wanted === undefined) return undefined;
  if (p.name === obj.metadata.name && wanted === cur) return true;
  const names = new Set([b.fileName, ...(b.previousNames ?? []), obj.metadata.name]);
  const spaces = new Set([...(b.previousNamespaces ?? []).map((ns) => effective(obj, ns)), cur]);
  if (spaces.has(undefined)) return undefined;
  if (!names.has(p.name) || !spaces.has(wanted)) return false;
  return names.size === 1 || spaces.size === 1 ? true : undefined;
}

/**
 * Whether a target selects `b` (kustomize's Select: a name or namespace matches the current one
 * or the first, GVK and selectors the current ones), or undefined when that is not certain.
 */
function selects(t: Target, b: Built): boolean | undefined {
  const { obj } = b;
  const [group, version] = groupVersion(obj.apiVersion);
  const equal = (map: Record<string, string> | undefined, [k, v]: [string, string]) =>
    map !== undefined && Object.hasOwn(map, k) && map[k] === v;
  const plain =
    (t.group === undefined || t.group.test(group)) &&
    (t.version === undefined || t.version.test(version)) &&
    (t.kind === undefined || t.kind.test(obj.kind)) &&
    (t.name === undefined || t.name.test(obj.metadata.name) || t.name.test(b.fileName)) &&
    (t.labelSelector === undefined || equal(obj.metadata.labels, t.labelSelector)) &&
    (t.annotationSelector === undefined || equal(obj.metadata.annotations, t.annotationSelector));
  if (!plain || t.namespace === undefined) return plain;
  // A cluster-scoped kind's namespace is one kustomize names its own way: left to it.
  if (schemaOf(obj.apiVersion, obj.kind)?.namespaced !== true) return undefined;
  const cur = effective(obj, obj.metadata.namespace ?? '');
  const org = effective(obj, b.previousNamespaces?.[0] ?? obj.metadata.namespace ?? '');
  if (cur === undefined || org === undefined) return undefined;
  return t.namespace.test(cur) || t.namespace.test(org);
}
