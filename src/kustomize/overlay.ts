/**
 * The build of a kustomization directory without kustomize, for the overlays most repositories are:
 * kustomization files (the directory's and the bases it lists) that use only `resources` (local
 * YAML files in their own directory and local directories with a kustomization file),
 * `namespace`, `labels` without selectors or templates, and JSON 6902 `patches` given inline with a
 * target by group, version, kind or name. kustomize's answer to such a tree is computed here with
 * its rules, in its order: each kustomization accumulates its resources (bases built first, each
 * with its own transformers), then runs its patches, its namespace, its labels; the top-level
 * output is sorted in the legacy order and printed through the JSON round trip (plain-yaml.ts).
 * Every file, field and value outside what is known to give kustomize's answer returns undefined,
 * and the build runs kustomize, which gives its own answer and its own errors. The proof is the
 * differential test against the real binary (__tests__/unit/overlay-build.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join as joinPath, posix } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, Scalar, type Node } from 'yaml';
import type { KubeObject } from '../objects/kube.js';
import { objectKey } from '../objects/kube.js';
import { yamlAliasProblem } from '../util/bounded.js';
import { isRecord } from '../util/record.js';
import { hasKustomizationEntry, KUSTOMIZATION_FILES } from './generate.js';
import { applyOps, KUSTOMIZE_DOMAIN, type Op } from './overlay-patch.js';
import { groupVersion, legacyOrder, mayHaveDuplicateIds } from './legacy-order.js';
import type { SpecFields } from './kustomization.js';
import { PLAIN_NUMBER, v3MayReadAsNonString } from './plain-scalars.js';
import { asPrinted, plainObjects } from './plain-yaml.js';
import { listSource } from './source.js';
import { isRemoteRef } from './merge.js';

/** Bases within bases this build follows; deeper chains go to kustomize. */
const MAX_DEPTH = 64;

/** Kustomization fields this build knows; any other field leaves the build to kustomize. */
const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'patches']);

/**
 * True when the spec sets no field Flux merges into the kustomization except `targetNamespace`,
 * which becomes the top kustomization's `namespace`.
 */
export function specIsOverlay(spec: SpecFields): boolean {
  return (
    !spec.namePrefix &&
    !spec.nameSuffix &&
    !spec.patches?.length &&
    !spec.images?.length &&
    !spec.components?.length &&
    !spec.buildMetadata?.length
  );
}

/** One object built so far and its file relative to the source root. */
interface Built {
  obj: KubeObject;
  origin: string;
  /** The name in its file: kustomize's patch targets match it as well as the current one. */
  fileName: string;
}

/** The source tree as the build's copy would hold it: each path's type, undefined when absent or left out. */
type Lookup = (path: string) => 'file' | 'dir' | 'symlink' | undefined;

/** The known parts of one kustomization file. */
interface Kustomization {
  resources: string[];
  namespace?: string;
  labels: Record<string, string>[];
  patches: { target: Target; ops: Op[] }[];
}

interface Target {
  group?: RegExp;
  version?: RegExp;
  kind?: RegExp;
  name?: RegExp;
}

/**
 * The build of the kustomization directory `relPath` of `realRoot` (see the module comment), or
 * undefined when the build must run kustomize. Origins are the files relative to the root.
 */
export async function buildOverlay(
  realRoot: string,
  relPath: string,
  spec: SpecFields,
  artifact = false,
): Promise<{ objects: KubeObject[]; origins: Map<string, string> } | undefined> {
  // A directory without a kustomization file, told before the walk of the whole tree.
  if (!hasKustomizationEntry(relPath === '.' ? realRoot : joinPath(realRoot, relPath))) return undefined;
  const { entries, ignore } = await listSource(realRoot, new Set(), artifact);
  const types = new Map<string, 'file' | 'dir' | 'symlink'>();
  for (const e of entries) types.set(e.path.join('/'), e.type);
  // A file left out of the artifact is not in the copy; a directory is there when anything below it is.
  const lookup: Lookup = (path) => {
    if (path === '.') return 'dir';
    const type = types.get(path);
    if (type === undefined || type === 'dir') return type;
    return ignore(path.split('/'), false) ? undefined : type;
  };
  const top = relPath === '.' ? '.' : posix.normalize(relPath.split(/[\\/]/).join('/'));
  const built = accumulate(realRoot, top, lookup, [], spec.targetNamespace || undefined);
  if (built === undefined) return undefined;
  const ordered = legacyOrder(built.map((b) => b.obj));
  if (ordered === undefined) return undefined;
  const originOf = new Map(built.map((b) => [b.obj, b.origin]));
  const objects: KubeObject[] = [];
  // A patch may have left what kustomize refuses or reads otherwise (a namespace not a string).
  for (const obj of ordered) {
    const printed = asPrinted(obj);
    if (typeof printed === 'string') return undefined;
    objects.push(printed);
  }
  return { objects, origins: new Map(objects.map((o, i) => [objectKey(o), originOf.get(ordered[i]!)!])) };
}

/**
 * The objects of the kustomization directory `dir` (a posix path from the root) after its
 * transformers, or undefined. `stack` holds the directories being built (a cycle is left to
 * kustomize); `namespace` overrides the file's (Flux's targetNamespace, top level only).
 */
function accumulate(
  root: string,
  dir: string,
  lookup: Lookup,
  stack: string[],
  namespace?: string,
): Built[] | undefined {
  // A chain of bases deeper than any tree needs is left to kustomize (and this stack stays small).
  if (stack.length > MAX_DEPTH || stack.includes(dir) || lookup(dir) !== 'dir') return undefined;
  const found = KUSTOMIZATION_FILES.filter((f) => lookup(join(dir, f)) !== undefined);
  if (found.length !== 1 || lookup(join(dir, found[0]!)) !== 'file') return undefined;
  const kfile = join(dir, found[0]!);
  const k = knownKustomization(readFileSync(posix.join(root, kfile), 'utf8'), kfile);
  // A kustomization without resources is given originAnnotations by Flux at the top: left to kustomize.
  if (k === undefined || k.resources.length === 0) return undefined;
  const out: Built[] = [];
  for (const entry of k.resources) {
    if (isRemoteRef(entry) || posix.isAbsolute(entry) || entry.includes('\\')) return undefined;
    const path = join(dir, entry);
    if (path === '..' || path.startsWith('../')) return undefined;
    const type = lookup(path);
    if (type === 'dir') {
      const base = accumulate(root, path, lookup, [...stack, dir]);
      if (base === undefined) return undefined;
      out.push(...base);
    } else if (type === 'file') {
      // The load restrictor keeps a kustomization's files inside its directory (ours copies others in).
      if (dir !== '.' && !path.startsWith(`${dir}/`)) return undefined;
      const text = readFileSync(posix.join(root, path), 'utf8');
      const aliases = yamlAliasProblem(text, path);
      if (aliases !== undefined) throw new Error(aliases);
      // A file without objects is left to kustomize too, whose answer is not known here.
      const objects = plainObjects(text);
      if (objects === undefined || objects.length === 0) return undefined;
      for (const obj of objects) out.push({ obj, origin: path, fileName: obj.metadata.name });
    } else {
      return undefined;
    }
  }
  if (mayHaveDuplicateIds(out.map((b) => b.obj))) return undefined;
  // kustomize's builtin transformers in its order: patches, namespace, labels.
  for (const patch of k.patches) {
    for (const b of out) {
      if (!selects(patch.target, b.obj, b.fileName)) continue;
      const patched = applyOps(b.obj, patch.ops);
      if (patched === undefined) return undefined;
      b.obj = patched;
    }
  }
  const ns = namespace ?? k.namespace;
  if (ns !== undefined) {
    for (const b of out) if (!setNamespace(b.obj, ns)) return undefined;
  }
  for (const pairs of k.labels) {
    for (const b of out) b.obj.metadata.labels = { ...b.obj.metadata.labels, ...pairs };
  }
  return mayHaveDuplicateIds(out.map((b) => b.obj)) ? undefined : out;
}

/** `entry` of the kustomization in `dir`, as a normalized posix path from the root. */
function join(dir: string, entry: string): string {
  return posix.normalize(posix.join(dir, entry));
}

// ---------------------------------------------------------------------------------------------
// The namespace transformer

/** Kinds of the Kubernetes API that are namespaced, by group (kustomize sets their namespace). */
const NAMESPACED: Record<string, readonly string[]> = {
  '': [
    'ConfigMap',
    'Secret',
    'Service',
    'ServiceAccount',
    'Pod',
    'PersistentVolumeClaim',
    'Endpoints',
    'LimitRange',
    'ResourceQuota',
    'ReplicationController',
    'PodTemplate',
  ],
  apps: ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision'],
  batch: ['Job', 'CronJob'],
  'networking.k8s.io': ['Ingress', 'NetworkPolicy'],
  'rbac.authorization.k8s.io': ['Role'],
  autoscaling: ['HorizontalPodAutoscaler'],
  policy: ['PodDisruptionBudget'],
  'coordination.k8s.io': ['Lease'],
  'discovery.k8s.io': ['EndpointSlice'],
};

/** Cluster-scoped kinds at an apiVersion kustomize's built-in API schema has (it leaves them alone). */
const CLUSTER_SCOPED = new Set([
  'v1/PersistentVolume',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'storage.k8s.io/v1/StorageClass',
  'scheduling.k8s.io/v1/PriorityClass',
  'networking.k8s.io/v1/IngressClass',
]);

/** Groups of the Kubernetes API itself, whose other kinds kustomize may scope either way or rewrite. */
const API_GROUP = /^(?:|apps|batch|autoscaling|policy|extensions|[a-z0-9.-]*k8s\.io)$/;

/**
 * kustomize's namespace transformer on one object: a namespaced kind (any kind its built-in API
 * schema does not know counts as one, so every custom resource) gets the namespace; a core
 * Namespace gets it as its name; known cluster-scoped kinds (a CRD without conversion) stay. False
 * for kinds whose other fields it rewrites (role binding subjects, webhook, API service and
 * conversion references) or whose scope this table does not know: left to kustomize.
 */
function setNamespace(obj: KubeObject, ns: string): boolean {
  const [group] = groupVersion(obj.apiVersion);
  if (obj.apiVersion === 'v1' && obj.kind === 'Namespace') {
    obj.metadata.name = ns;
    return true;
  }
  if (CLUSTER_SCOPED.has(`${obj.apiVersion}/${obj.kind}`)) return true;
  // A CRD's conversion webhook names a service's namespace, which kustomize sets too.
  if (obj.apiVersion === 'apiextensions.k8s.io/v1' && obj.kind === 'CustomResourceDefinition') {
    const spec = (obj as { spec?: unknown }).spec;
    return isRecord(spec) && spec['conversion'] === undefined;
  }
  if (API_GROUP.test(group) && !NAMESPACED[group]?.includes(obj.kind)) return false;
  obj.metadata.namespace = ns;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Patch targets

/** A selector field kustomize reads as an anchored regular expression: names whose reading is the same in RE2 and here. */
const SELECTOR_TEXT = /^[A-Za-z0-9.-]+$/;

/** Whether a patch target selects `obj`; a name matches the current one or the one in its file (a renamed Namespace). */
function selects(t: Target, obj: KubeObject, fileName: string): boolean {
  const [group, version] = groupVersion(obj.apiVersion);
  return (
    (t.group === undefined || t.group.test(group)) &&
    (t.version === undefined || t.version.test(version)) &&
    (t.kind === undefined || t.kind.test(obj.kind)) &&
    (t.name === undefined || t.name.test(obj.metadata.name) || t.name.test(fileName))
  );
}

// ---------------------------------------------------------------------------------------------
// Reading a kustomization file

/**
 * The known parts of a kustomization file's text, or undefined when it holds anything else: a
 * field not in KNOWN_FIELDS, a value whose reading might differ between kustomize's YAML readers
 * and ours (see safeNode), a patch that is not an inline JSON 6902 list with a simple target.
 */
function knownKustomization(text: string, file: string): Kustomization | undefined {
  if (yamlAliasProblem(text, file) !== undefined) return undefined;
  const value = safeYaml(text);
  if (!isRecord(value)) return undefined;
  if (Object.keys(value).some((f) => !KNOWN_FIELDS.has(f))) return undefined;
  const { apiVersion, kind, resources, namespace, labels, patches } = value;
  if (apiVersion !== undefined && apiVersion !== 'kustomize.config.k8s.io/v1beta1') return undefined;
  if (kind !== undefined && kind !== 'Kustomization') return undefined;
  if (!Array.isArray(resources) || !resources.every((r) => typeof r === 'string' && r !== '')) return undefined;
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === '')) return undefined;
  const k: Kustomization = { resources: resources as string[], labels: [], patches: [] };
  if (typeof namespace === 'string') k.namespace = namespace;
  if (labels !== undefined) {
    if (!Array.isArray(labels)) return undefined;
    for (const l of labels) {
      if (!isRecord(l) || Object.keys(l).some((f) => !['pairs', 'includeSelectors', 'includeTemplates'].includes(f))) {
        return undefined;
      }
      if (l['includeSelectors'] !== undefined && l['includeSelectors'] !== false) return undefined;
      if (l['includeTemplates'] !== undefined && l['includeTemplates'] !== false) return undefined;
      const pairs = l['pairs'];
      if (!isRecord(pairs) || Object.values(pairs).some((v) => typeof v !== 'string')) return undefined;
      if (Object.keys(pairs).some((key) => KUSTOMIZE_DOMAIN.test(key))) return undefined;
      k.labels.push(pairs as Record<string, string>);
    }
  }
  if (patches !== undefined) {
    if (!Array.isArray(patches)) return undefined;
    for (const p of patches) {
      const patch = readPatch(p);
      if (patch === undefined) return undefined;
      k.patches.push(patch);
    }
  }
  return k;
}

/** An inline JSON 6902 patch with a target of group, version, kind or name, or undefined. */
function readPatch(p: unknown): { target: Target; ops: Op[] } | undefined {
  if (!isRecord(p) || Object.keys(p).some((f) => f !== 'patch' && f !== 'target')) return undefined;
  const { patch, target } = p;
  // kustomize reads a patch starting with `[` as JSON, any other as YAML.
  if (typeof patch !== 'string' || patch.startsWith('[') || !isRecord(target)) return undefined;
  const t: Target = {};
  for (const [field, v] of Object.entries(target)) {
    if (!['group', 'version', 'kind', 'name'].includes(field)) return undefined;
    if (typeof v !== 'string' || !SELECTOR_TEXT.test(v)) return undefined;
    t[field as keyof Target] = new RegExp(`^(?:${v})$`);
  }
  if (Object.keys(t).length === 0) return undefined;
  const ops = safeYaml(patch);
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
  return out.length > 0 ? { target: t, ops: out } : undefined;
}

/** YAML 1.1 words yaml.v2 (which reads kustomization files and patches) takes for booleans. */
const V2_WORDS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
/** Plain scalars read as the same string everywhere: no indicator first, nothing YAML would read. */
const PLAIN_TEXT = /^[A-Za-z0-9_./][A-Za-z0-9_./=+ -]*(?<! )$/;
/** Quoted text every reader takes alike: printable ASCII, no escapes. */
const QUOTED_TEXT = /^[\x20-\x7E]*$/;

/**
 * The value of a one-document YAML text whose every node every reader involved (yaml.v2 and
 * yaml.v3 in kustomize, the yaml package here) reads alike, or undefined: no anchors, aliases,
 * tags or comments that could hide a document, scalars of the safe forms (safeNode).
 */
function safeYaml(text: string): unknown {
  if (!QUOTED_TEXT.test(text.replaceAll('\n', ' '))) return undefined;
  if (/^(?:---|\.\.\.|%)/m.test(text)) return undefined;
  const doc = parseDocument(text, { uniqueKeys: true, logLevel: 'error' });
  if (doc.errors.length > 0 || doc.warnings.length > 0 || doc.contents === null) return undefined;
  if (!safeNode(doc.contents, false, text)) return undefined;
  return doc.toJS();
}

function safeNode(node: Node, isKey: boolean, text: string): boolean {
  if (node.anchor !== undefined || node.tag !== undefined) return false;
  if (isMap(node)) {
    if (isKey) return false;
    return node.items.every(
      (pair) =>
        isScalar(pair.key) &&
        typeof pair.key.value === 'string' &&
        // Our objects would take it for their prototype; kustomize for a key.
        pair.key.value !== '__proto__' &&
        safeNode(pair.key, true, text) &&
        pair.value !== null &&
        isNodeLike(pair.value) &&
        safeNode(pair.value, false, text),
    );
  }
  if (isSeq(node)) return !isKey && node.items.every((item) => isNodeLike(item) && safeNode(item, false, text));
  if (!isScalar(node)) return false;
  return safeScalar(node, isKey, text);
}

function isNodeLike(v: unknown): v is Node {
  return isMap(v) || isSeq(v) || isScalar(v);
}

function safeScalar(node: Scalar, isKey: boolean, text: string): boolean {
  const { value, source } = node as Scalar & { source?: string };
  const raw = text.slice(node.range?.[0] ?? 0, node.range?.[1] ?? 0);
  if (node.type !== 'BLOCK_LITERAL' && raw.includes('\n')) return false;
  switch (node.type) {
    case 'PLAIN':
      if (typeof value === 'string') {
        return source === value && PLAIN_TEXT.test(value) && !v3MayReadAsNonString(value) && !V2_WORDS.test(value);
      }
      if (isKey) return false;
      if (typeof value === 'boolean') return source === 'true' || source === 'false';
      if (typeof value === 'number') {
        return (
          typeof source === 'string' &&
          PLAIN_NUMBER.test(source) &&
          !/[.eE]/.test(source) &&
          Number.isSafeInteger(value)
        );
      }
      return false;
    case 'QUOTE_SINGLE':
    case 'QUOTE_DOUBLE':
      // No escapes, no doubled quote: the text between the quotes is the value.
      return typeof value === 'string' && raw === `${raw[0]}${value}${raw[0]}` && !value.includes('\\');
    case 'BLOCK_LITERAL':
      // A patch's text, read again by safeYaml: lines of printable ASCII.
      return !isKey && typeof value === 'string' && /^[\x20-\x7E\n]*$/.test(value);
    default:
      return false;
  }
}
