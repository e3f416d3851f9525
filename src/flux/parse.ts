/*
 * Reads Flux Kustomization files (`kustomize.toolkit.fluxcd.io/v1`, kind `Kustomization`) into
 * KustomizationSpec, with the rules of Flux's CRD schema and the defaults of kustomize-controller.
 * Every problem of a file is collected before throwing, so one run shows them all.
 * This module reads documents, metadata and the top of spec; the field readers live in fields.ts,
 * the value rules in values.ts and the spec field groups in spec-build.ts, spec-refs.ts, spec-health.ts.
 */

import { FLUX_API_VERSION, FLUX_GROUP } from '../objects/flux.js';
import { parseYamlStream } from '../objects/yaml.js';
import {
  Problems,
  SpecError,
  describe,
  isAbsent,
  isMapping,
  readBoolean,
  readEnum,
  readList,
  readMapping,
  readString,
  shownText,
  withoutUndefined,
  type Mapping,
  type SpecLocation,
} from './fields.js';
import { readCommonMetadata, readComponents, readIgnoreRule, readImage, readPatch } from './spec-build.js';
import { readDependency, readHealthCheck, readHealthCheckExprs } from './spec-health.js';
import { readDecryption, readKubeConfig, readPostBuild, readSourceRef } from './spec-refs.js';
import type { KustomizationSpec } from './types.js';
import {
  effectiveTimeout,
  readDuration,
  readNamespaceName,
  readObjectName,
  readRefName,
  readSourcePath,
} from './values.js';

// The entry for the error and the value rules, so callers outside src/flux need only this module.
export { DuplicateSpecError, SpecError, type SpecLocation } from './fields.js';
export { effectiveTimeout, normalizeSourcePath, parseDuration } from './values.js';

/** Flux's default namespace for its objects; Kustomization files often leave metadata.namespace out. */
export const DEFAULT_NAMESPACE = 'flux-system';

const SPEC_FIELDS = [
  'interval',
  'retryInterval',
  'timeout',
  'path',
  'sourceRef',
  'prune',
  'deletionPolicy',
  'wait',
  'healthChecks',
  'healthCheckExprs',
  'force',
  'targetNamespace',
  'namePrefix',
  'nameSuffix',
  'commonMetadata',
  'patches',
  'images',
  'components',
  'ignoreMissingComponents',
  'buildMetadata',
  'ignore',
  'postBuild',
  'decryption',
  'serviceAccountName',
  'kubeConfig',
  'dependsOn',
  'suspend',
] as const;

/** v1beta1/v1beta2 fields that v1 dropped, with the v1 way to say the same thing. */
const REMOVED_SPEC_FIELDS: Readonly<Record<string, string>> = {
  patchesStrategicMerge:
    'was removed in kustomize.toolkit.fluxcd.io/v1; put each patch in spec.patches as {patch: <the patch as a string>}',
  patchesJson6902:
    'was removed in kustomize.toolkit.fluxcd.io/v1; put each patch in spec.patches as {patch: <the JSON6902 operations as a string>, target: ...}',
  validation: 'was removed in kustomize.toolkit.fluxcd.io/v1; Flux always validates with a server-side dry-run',
};

const DELETION_POLICIES = ['MirrorPrune', 'Delete', 'WaitForTermination', 'Orphan'] as const;
const BUILD_METADATA = ['originAnnotations', 'transformerAnnotations'] as const;

type SpecFields = Omit<KustomizationSpec, 'name' | 'namespace' | 'origin'>;

/** Reads `spec` of a v1 Kustomization in `namespace`; undefined when a required part is missing. */
function readSpec(p: Problems, value: unknown, namespace: string): SpecFields | undefined {
  const spec = readMapping(p, value, 'spec', SPEC_FIELDS, { required: true, removed: REMOVED_SPEC_FIELDS });
  if (spec === undefined) return undefined;
  const interval = readDuration(p, spec.interval, 'spec.interval', true);
  const retryInterval = readDuration(p, spec.retryInterval, 'spec.retryInterval');
  const timeout = readDuration(p, spec.timeout, 'spec.timeout');
  const path = readSourcePath(p, spec.path, 'spec.path', true);
  const sourceRef = readSourceRef(p, spec.sourceRef, namespace);
  const prune = readBoolean(p, spec.prune, 'spec.prune', true);
  const fields: SpecFields = {
    path: path ?? '.',
    sourceRef,
    interval,
    retryInterval: retryInterval ?? interval,
    timeout: effectiveTimeout(interval, timeout),
    prune: prune ?? false,
    wait: readBoolean(p, spec.wait, 'spec.wait') ?? false,
    force: readBoolean(p, spec.force, 'spec.force') ?? false,
    suspend: readBoolean(p, spec.suspend, 'spec.suspend') ?? false,
    deletionPolicy: readEnum(p, spec.deletionPolicy, 'spec.deletionPolicy', DELETION_POLICIES) ?? 'MirrorPrune',
    targetNamespace: readNamespaceName(p, spec.targetNamespace, 'spec.targetNamespace'),
    namePrefix: readString(p, spec.namePrefix, 'spec.namePrefix', { min: 1, max: 200 }),
    nameSuffix: readString(p, spec.nameSuffix, 'spec.nameSuffix', { min: 1, max: 200 }),
    commonMetadata: readCommonMetadata(p, spec.commonMetadata),
    patches: readList(p, spec.patches, 'spec.patches', (entry, at) => readPatch(p, entry, at)),
    images: readList(p, spec.images, 'spec.images', (entry, at) => readImage(p, entry, at)),
    components: readComponents(p, spec.components, path),
    ignoreMissingComponents: readBoolean(p, spec.ignoreMissingComponents, 'spec.ignoreMissingComponents') ?? false,
    buildMetadata: isAbsent(spec.buildMetadata)
      ? undefined
      : readList(p, spec.buildMetadata, 'spec.buildMetadata', (entry, at) =>
          readEnum(p, entry, at, BUILD_METADATA, true),
        ),
    healthChecks: readList(p, spec.healthChecks, 'spec.healthChecks', (entry, at) => readHealthCheck(p, entry, at)),
    healthCheckExprs: readHealthCheckExprs(p, spec.healthCheckExprs),
    ignore: readList(p, spec.ignore, 'spec.ignore', (entry, at) => readIgnoreRule(p, entry, at)),
    postBuild: readPostBuild(p, spec.postBuild),
    decryption: readDecryption(p, spec.decryption),
    serviceAccountName: readRefName(p, spec.serviceAccountName, 'spec.serviceAccountName'),
    kubeConfig: readKubeConfig(p, spec.kubeConfig),
    dependsOn: readList(p, spec.dependsOn, 'spec.dependsOn', (entry, at) => readDependency(p, entry, at, namespace)),
  };
  return interval === undefined || sourceRef === undefined || prune === undefined ? undefined : fields;
}

/**
 * Whether a problem of a child's file could be the parent's to fix: a spec field left out (a parent's
 * spec.patches may add it to every child, as Flux monorepos add prune, interval or sourceRef) or a
 * value with a `${...}` the parent's postBuild substitutes. `field` is the problem's field path.
 */
function parentMayFix(document: Mapping, field: string | undefined, problem: string): boolean {
  if (field === undefined) return false;
  if (field.startsWith('spec.') && problem.endsWith(`${field}: is required`)) return true;
  const value = valueAt(document, field);
  return typeof value === 'string' && value.includes('${');
}

/** The keys of a field path as Problems names it: `spec.a.b`, `x[2]`, `x["odd/key"]`. */
function fieldKeys(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)].map(
    (m) => m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3]!) as string)),
  );
}

/** The value at a field path; undefined when absent. */
function valueAt(document: unknown, field: string | readonly (string | number)[]): unknown {
  let value: unknown = document;
  for (const key of typeof field === 'string' ? fieldKeys(field) : field) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/** Deletes the value at a field path (a list item becomes null); nothing when it is absent. */
function removeAt(document: Mapping, field: string): void {
  const keys = fieldKeys(field);
  const last = keys.pop();
  const holder = valueAt(document, keys);
  if (last === undefined || holder === null || typeof holder !== 'object') return;
  if (Array.isArray(holder) && typeof last === 'number') holder[last] = null;
  else Reflect.deleteProperty(holder, String(last));
}

// ---------------------------------------------------------------------------------------------
// Documents and files
// ---------------------------------------------------------------------------------------------

type DocumentKind = 'flux-v1' | 'flux-other-version' | 'other';

function classify(value: unknown): DocumentKind {
  if (!isMapping(value) || value.kind !== 'Kustomization' || typeof value.apiVersion !== 'string') return 'other';
  if (value.apiVersion === FLUX_API_VERSION) return 'flux-v1';
  // kustomize.config.k8s.io Kustomizations (kustomization.yaml files) share the kind; they are not ours.
  return value.apiVersion.startsWith(`${FLUX_GROUP}/`) ? 'flux-other-version' : 'other';
}

/** Names the v1beta fields that v1 changed, listing first the ones this document uses. */
function versionProblem(apiVersion: string, spec: unknown): string {
  const used = isMapping(spec) ? Object.keys(REMOVED_SPEC_FIELDS).filter((key) => key in spec) : [];
  const uses = used.length === 0 ? '' : ` This document uses ${used.map((key) => `spec.${key}`).join(', ')}.`;
  return (
    `apiVersion ${apiVersion} is not supported; only ${FLUX_API_VERSION} is. ` +
    'To migrate, set apiVersion to kustomize.toolkit.fluxcd.io/v1, move spec.patchesStrategicMerge and ' +
    'spec.patchesJson6902 into spec.patches, drop spec.validation, and make sure spec.interval, spec.prune ' +
    `and spec.sourceRef are set.${uses}`
  );
}

const TOP_LEVEL_FIELDS = ['apiVersion', 'kind', 'metadata', 'spec', 'status'] as const;

interface DocumentResult {
  spec?: KustomizationSpec;
  problems: string[];
  locations: SpecLocation[];
}

/** `Kustomization namespace/name` for messages, from whatever metadata holds, so the reader can find it. */
function displayName(metadata: unknown): string {
  const name = isMapping(metadata) ? metadata.name : undefined;
  const namespace = isMapping(metadata) ? metadata.namespace : undefined;
  const shownName = typeof name === 'string' && name !== '' ? name : '<no name>';
  const shownNamespace = typeof namespace === 'string' && namespace !== '' ? namespace : DEFAULT_NAMESPACE;
  return `Kustomization ${shownText(shownNamespace)}/${shownText(shownName)}`;
}

/** The identity a parent's build gives a Kustomization object, in place of the one its file states. */
export interface Identity {
  namespace: string;
  name: string;
}

/**
 * Reads metadata.name and metadata.namespace; other metadata (labels, annotations, ...) is not ours to check.
 * `identity`, when given, replaces both (the namespace and name a parent's build gives the object).
 */
function readMetadata(p: Problems, value: unknown, identity?: Identity): { name?: string; namespace: string } {
  if (identity !== undefined) {
    return withoutUndefined({ name: readObjectName(p, identity.name, 'metadata.name'), namespace: identity.namespace });
  }
  if (isAbsent(value)) {
    p.add('metadata.name', 'is required');
    return { namespace: DEFAULT_NAMESPACE };
  }
  if (!isMapping(value)) {
    p.add('metadata', `must be a mapping, got ${describe(value)}`);
    return { namespace: DEFAULT_NAMESPACE };
  }
  return withoutUndefined({
    name: readObjectName(p, value.name, 'metadata.name'),
    namespace: readNamespaceName(p, value.namespace, 'metadata.namespace') ?? DEFAULT_NAMESPACE,
  });
}

/**
 * Reads one Kustomization document; every problem is prefixed with file, document and namespace/name.
 * `lenient`: when every problem is one a parent's build may fix (parentMayFix), the spec is read with
 * stand-ins (spec.interval unset, spec.prune false, spec.sourceRef this checkout) and the problems kept
 * aside (deferredProblems): the loader refuses them unless a Kustomization builds the file (a loaded one,
 * or one of the repository's other files), and the child is then read again from the object its
 * parent's build produces.
 */
function readDocument(
  value: Mapping,
  file: string,
  document: number,
  identity?: Identity,
  lenient = false,
): DocumentResult {
  const prefix = `${file}, document ${document}, ${displayName(value.metadata)}: `;
  if (value.apiVersion !== FLUX_API_VERSION) {
    const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : '';
    const problem = prefix + versionProblem(apiVersion, value.spec);
    return { problems: [problem], locations: [{ message: problem, file, document, field: 'apiVersion' }] };
  }
  const p = new Problems();
  readMapping(p, value, '', TOP_LEVEL_FIELDS);
  const { name, namespace: effective } = readMetadata(p, value.metadata, identity);
  const fields = readSpec(p, value.spec, effective);
  const problems = p.items.map((item) => prefix + item);
  const locations = problems.map((message, i) => {
    const field = p.fields[i];
    return { message, file, document, ...(field !== undefined && field !== '' ? { field } : {}) };
  });
  const deferred =
    lenient &&
    problems.length > 0 &&
    isMapping(value.spec) &&
    p.items.every((item, i) => parentMayFix(value, p.fields[i], item));
  const standIn = deferred ? withStandIns(value, p.fields, effective) : undefined;
  if (standIn !== undefined && name !== undefined) {
    const spec = withoutUndefined({
      name,
      namespace: effective,
      origin: { kind: 'file', file, document } as const,
      ...standIn,
    });
    documents.set(spec, value);
    deferredOf.set(spec, new SpecError(problems, locations));
    return { spec, problems: [], locations: [] };
  }
  if (problems.length > 0 || name === undefined || fields === undefined) return { problems, locations };
  const origin = { kind: 'file', file, document } as const;
  const spec = withoutUndefined({ name, namespace: effective, origin, ...fields });
  documents.set(spec, value);
  return { spec, problems, locations };
}

/**
 * The spec of a child's file without the fields at fault, the required ones filled with stand-ins
 * (spec.prune false, spec.interval 10m, no spec.sourceRef: this checkout); only until it is read again
 * from its parent's build, never reconciled as such. Undefined when what is left does not read cleanly.
 */
function withStandIns(
  value: Mapping,
  fields: readonly (string | undefined)[],
  namespace: string,
): SpecFields | undefined {
  const stripped = structuredClone(value);
  for (const field of fields) if (field !== undefined) removeAt(stripped, field);
  const spec = stripped.spec as Mapping;
  const filled = {
    prune: false,
    interval: '10m',
    sourceRef: { kind: 'GitRepository', name: 'stand-in' },
    path: './',
    ...spec,
  };
  const p = new Problems();
  const read = readSpec(p, filled, namespace);
  if (read === undefined || p.items.length > 0) return undefined;
  if (isAbsent(spec.sourceRef)) delete read.sourceRef;
  return read;
}

/** The problems a child's file left to its parent (readDocument's `lenient`); undefined for a spec that had none. */
export function deferredProblems(spec: KustomizationSpec): SpecError | undefined {
  return deferredOf.get(spec);
}

const deferredOf = new WeakMap<KustomizationSpec, SpecError>();

/** metadata.namespace as written in the document `spec` was read from; undefined when left out. */
export function writtenNamespace(spec: KustomizationSpec): string | undefined {
  const metadata = documents.get(spec)?.metadata;
  const namespace = isMapping(metadata) ? metadata.namespace : undefined;
  return typeof namespace === 'string' && namespace !== '' ? namespace : undefined;
}

/**
 * `spec` read again from its document as if it had `identity` (the namespace and name a parent's build
 * gives it), so that the defaults that follow the namespace (spec.sourceRef.namespace,
 * spec.dependsOn[].namespace) follow it too. A spec from the inputs, or one that has it already, is
 * returned as it is.
 */
export function withIdentity(spec: KustomizationSpec, identity: Identity): KustomizationSpec {
  const value = documents.get(spec);
  const same = spec.namespace === identity.namespace && spec.name === identity.name;
  if (same || value === undefined || spec.origin.kind !== 'file') return spec;
  const result = readDocument(value, spec.origin.file, spec.origin.document, identity, deferredOf.has(spec));
  if (result.spec === undefined) throw new SpecError(result.problems, result.locations);
  return result.spec;
}

/** The document each parsed spec came from, kept aside so that specs stay plain, comparable values. */
const documents = new WeakMap<KustomizationSpec, Mapping>();

/** The Kustomization document `spec` was read from, as parsed (undefined for a spec from the inputs). */
export function sourceDocument(spec: KustomizationSpec): Record<string, unknown> | undefined {
  return documents.get(spec);
}

/** A document of a Kustomization file that is not a Flux Kustomization (another kind, kustomize's own, empty). */
export interface OtherDocument {
  /** 1-based, as in messages. */
  document: number;
  value: unknown;
}

/**
 * Parses the `kustomize.toolkit.fluxcd.io/v1` Kustomizations of a multi-document YAML file.
 * Other kinds, kustomize's own Kustomization (kustomization.yaml) and empty documents are skipped;
 * a Flux Kustomization of another API version is an error. Every problem of the file is collected
 * into one SpecError whose lines name `file`, the document number, the Kustomization and the field.
 */
export function parseKustomizations(text: string, file: string): KustomizationSpec[] {
  return parseKustomizationFile(text, file).specs;
}

/**
 * parseKustomizations, with the documents it skipped (for the loader's notes: what a file holds
 * instead). `lenient`: a document whose problems a parent's build may fix is read with stand-ins and
 * its problems kept aside (readDocument, deferredProblems) for the loader to judge.
 */
export function parseKustomizationFile(
  text: string,
  file: string,
  options: { lenient?: boolean } = {},
): { specs: KustomizationSpec[]; others: OtherDocument[] } {
  const specs: KustomizationSpec[] = [];
  const others: OtherDocument[] = [];
  const problems: string[] = [];
  const locations: SpecLocation[] = [];
  for (const doc of parseYamlStream(text, file)) {
    if (doc.error !== undefined) {
      problems.push(doc.error);
      continue;
    }
    const value = doc.value;
    const kind = classify(value);
    if (kind === 'other' || !isMapping(value)) {
      others.push({ document: doc.document, value });
      continue;
    }
    const result = readDocument(value, file, doc.document, undefined, options.lenient);
    problems.push(...result.problems);
    locations.push(...result.locations);
    if (result.spec !== undefined) specs.push(result.spec);
  }
  if (problems.length > 0) throw new SpecError(problems, locations);
  return { specs, others };
}

/**
 * A Kustomization object as a parent's build produced it (after the parent's patches, substitution,
 * namespace and name), read as a spec; `file` and `document` are where its child's file defines it,
 * for messages. Throws a SpecError naming the fields at fault.
 */
export function readBuiltKustomization(value: unknown, file: string, document: number): KustomizationSpec {
  if (!isMapping(value)) throw new SpecError([`${file}, document ${document}: the parent's build made it no mapping`]);
  const result = readDocument(value, file, document);
  if (result.spec === undefined) throw new SpecError(result.problems, result.locations);
  return result.spec;
}
