import { celSyntaxProblem } from '../kstatus/cel.js';
import { jsonPatchProblem } from '../kustomize/jsonpatch.js';
import { FLUX_API_VERSION, FLUX_GROUP } from '../objects/flux.js';
import { parseYamlStream } from '../objects/yaml.js';
import type {
  Dependency,
  HealthCheckExpr,
  IgnoreRule,
  Image,
  KustomizationSpec,
  ObjectRef,
  Patch,
  PostBuild,
  Selector,
} from './types.js';

/*
 * Reads Flux Kustomization files (`kustomize.toolkit.fluxcd.io/v1`, kind `Kustomization`) into
 * KustomizationSpec, with the rules of Flux's CRD schema and the defaults of kustomize-controller.
 * Every problem of a file is collected before throwing, so one run shows them all.
 */

/** Flux's default namespace for its objects; Kustomization files often leave metadata.namespace out. */
export const DEFAULT_NAMESPACE = 'flux-system';
/** GetTimeout never returns less than this, whether the timeout is set or derived from the interval. */
const MIN_TIMEOUT_MS = 30_000;
/** The timeout of a Kustomization without an interval (the action's inputs). */
const INPUTS_TIMEOUT_MS = 5 * 60_000;

/** Longest problem line of a SpecError, and how many of them its message lists. */
const MAX_PROBLEM = 500;
const PROBLEMS_SHOWN = 30;

/** A Kustomization file or action input that breaks Flux's rules; `problems` has one line per problem. */
export class SpecError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    // Each line cut, and the list after PROBLEMS_SHOWN counted: a message must not grow with the input.
    const lines = problems.map((p) => (p.length > MAX_PROBLEM ? `${p.slice(0, MAX_PROBLEM)}… (cut)` : p));
    const shown = lines.slice(0, PROBLEMS_SHOWN);
    const more = lines.length > PROBLEMS_SHOWN ? `\n- and ${lines.length - PROBLEMS_SHOWN} more problems` : '';
    super(lines.length === 1 ? lines[0] : `${lines.length} problems:\n- ${shown.join('\n- ')}${more}`);
    this.name = 'SpecError';
    this.problems = lines;
  }
}

// ---------------------------------------------------------------------------------------------
// Pure value rules, shared with from-inputs.ts
// ---------------------------------------------------------------------------------------------

/** Flux's CRD pattern for durations: a subset of Go's time.ParseDuration (no sign, no `us`/`ns`). */
const DURATION = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;
const DURATION_PART = /([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)/g;
const NANOS_PER_UNIT: Record<string, bigint> = {
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
/** Go durations are int64 nanoseconds; longer ones fail to parse in Flux. */
const MAX_DURATION_NANOS = 2n ** 63n - 1n;

/**
 * Parses a Flux duration such as `1m30s`, `1.5h` or `500ms` into milliseconds (fractions kept to the
 * nanosecond, as Go does). Returns undefined for anything Flux's CRD would refuse.
 */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let nanos = 0n;
  for (const [, whole = '0', fraction = '', unit = 'ms'] of text.matchAll(DURATION_PART)) {
    const perUnit = NANOS_PER_UNIT[unit] ?? 0n;
    nanos += BigInt(whole) * perUnit;
    // Go truncates a fraction below one nanosecond; integer division does the same.
    if (fraction !== '') nanos += (BigInt(fraction) * perUnit) / 10n ** BigInt(fraction.length);
    if (nanos > MAX_DURATION_NANOS) return undefined;
  }
  return Number(nanos) / 1_000_000;
}

/**
 * Flux's GetTimeout: the explicit timeout, else `interval − 30s`, and never under 30s.
 * Without an interval (the action's inputs) the default is 5m.
 */
export function effectiveTimeout(interval: number | undefined, timeout: number | undefined): number {
  const chosen = timeout ?? (interval === undefined ? INPUTS_TIMEOUT_MS : interval - MIN_TIMEOUT_MS);
  return Math.max(chosen, MIN_TIMEOUT_MS);
}

/**
 * Normalises a path relative to the source root: drops `.` segments, a leading `./` and trailing
 * slashes, resolves `a/../b`, and gives `.` for the root. Returns undefined for an absolute path or
 * one that climbs above the root; Flux would confine a climbing path to the root silently, which hides
 * the mistake (spec.path's leading "/" is taken off before: see readSourcePath).
 */
export function normalizeSourcePath(text: string): string | undefined {
  if (text.startsWith('/')) return undefined;
  const kept: string[] = [];
  for (const segment of text.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (kept.length === 0) return undefined;
      kept.pop();
    } else {
      kept.push(segment);
    }
  }
  return kept.length === 0 ? '.' : kept.join('/');
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why `text` is not a DNS-1123 label (a namespace name), or undefined when it is one. */
export function dnsLabelProblem(text: string): string | undefined {
  if (text.length > 63) return `${quote(text)} is longer than 63 characters`;
  if (!DNS_LABEL.test(text)) {
    return `${quote(text)} is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)`;
  }
  return undefined;
}

/** Why `text` is not a DNS-1123 subdomain (an object name), or undefined when it is one. */
export function dnsSubdomainProblem(text: string): string | undefined {
  if (text.length > 253) return `${quote(text)} is longer than 253 characters`;
  if (!text.split('.').every((label) => DNS_LABEL.test(label))) {
    return `${quote(text)} is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Collecting problems while reading untyped YAML
// ---------------------------------------------------------------------------------------------

/**
 * Problems of one Kustomization, each `field: message`. `field` is a path such as
 * `spec.patches[0].target.kind` for files or `input "timeout"` for the action's inputs.
 */
export class Problems {
  readonly items: string[] = [];

  add(field: string, message: string): void {
    this.items.push(`${field}: ${message}`);
  }

  addRaw(text: string): void {
    this.items.push(text);
  }
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a field that is left out; YAML `key:` with no value (null) counts as left out, as in Kubernetes. */
function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

/** Describes a value for a message: strings quoted, numbers and booleans as written, else their YAML shape. */
function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (value === null || value === undefined) return 'nothing';
  return Array.isArray(value) ? 'a list' : 'a mapping';
}

/** `parent.key`, or `parent["odd/key"]` when the key is not a plain identifier, or `parent[3]`. */
function child(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (parent === '') return key;
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${quote(key)}]`;
}

function reportMissing(p: Problems, at: string, required: boolean): void {
  if (required) p.add(at, 'is required');
}

/** Levenshtein distance, small inputs only: for "did you mean" hints on unknown fields. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function suggestion(key: string, known: readonly string[]): string {
  const lower = key.toLowerCase();
  const close = known.find((k) => k.toLowerCase() === lower) ?? known.find((k) => editDistance(k, key) <= 2);
  return close === undefined ? '' : ` (did you mean ${close}?)`;
}

interface MappingOptions {
  required?: boolean;
  /** Fields that older API versions had, with what to do instead. */
  removed?: Readonly<Record<string, string>>;
}

/** Reads a mapping and reports every key outside `known`, as Flux's CRD (strict field validation) would. */
function readMapping(
  p: Problems,
  value: unknown,
  at: string,
  known: readonly string[],
  options: MappingOptions = {},
): Mapping | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, options.required ?? false);
    return undefined;
  }
  if (!isMapping(value)) {
    p.add(at, `must be a mapping, got ${describe(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const removed = options.removed?.[key];
    const field = child(at, key);
    p.addRaw(removed === undefined ? `unknown field ${field}${suggestion(key, known)}` : `${field}: ${removed}`);
  }
  return value;
}

interface StringOptions {
  required?: boolean;
  /** Minimum length; 1 means an empty string is an error rather than "not set". */
  min?: number;
  max?: number;
}

/**
 * Reads a string. An empty optional string means "not set", as Go's omitempty does, unless the CRD
 * gives a minimum length; an empty required string is an error.
 */
function readString(p: Problems, value: unknown, at: string, options: StringOptions = {}): string | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, options.required ?? false);
    return undefined;
  }
  if (typeof value !== 'string') {
    const hint = typeof value === 'number' || typeof value === 'boolean' ? ` (quote it: "${String(value)}")` : '';
    p.add(at, `must be a string, got ${describe(value)}${hint}`);
    return undefined;
  }
  const min = options.min ?? (options.required ? 1 : 0);
  if (value === '') {
    if (min > 0) p.add(at, 'must not be empty');
    return undefined;
  }
  if (value.length < min) {
    p.add(at, `${quote(value)} is shorter than ${min} characters`);
    return undefined;
  }
  if (options.max !== undefined && value.length > options.max) {
    p.add(at, `is ${value.length} characters long, more than the ${options.max} allowed`);
    return undefined;
  }
  return value;
}

/** Reads a boolean; strings such as "true" are refused because Flux's CRD types the field boolean. */
function readBoolean(p: Problems, value: unknown, at: string, required = false): boolean | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  if (typeof value === 'boolean') return value;
  p.add(at, `must be a YAML boolean (true or false, without quotes), got ${describe(value)}`);
  return undefined;
}

const DURATION_HINT = 'use e.g. 30s, 5m, 1h30m';

/** Reads a duration into milliseconds. Exported for from-inputs.ts, which names inputs instead of fields. */
export function readDuration(p: Problems, value: unknown, at: string, required = false): number | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  if (typeof value === 'number') {
    p.add(at, `${value} is not a duration (add a unit: ${DURATION_HINT})`);
    return undefined;
  }
  if (typeof value !== 'string') {
    p.add(at, `must be a duration (${DURATION_HINT}), got ${describe(value)}`);
    return undefined;
  }
  const ms = parseDuration(value);
  if (ms === undefined) p.add(at, `${quote(value)} is not a duration (${DURATION_HINT})`);
  return ms;
}

function readEnum<T extends string>(
  p: Problems,
  value: unknown,
  at: string,
  allowed: readonly T[],
  required = false,
): T | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  const found = allowed.find((option) => option === value);
  if (found === undefined) {
    const shown = typeof value === 'string' ? quote(value) : describe(value);
    p.add(at, `${shown} is not one of ${allowed.join(', ')}`);
  }
  return found;
}

/** Reads a list, reading each entry with `item`; entries that fail are left out (their problems are kept). */
function readList<T>(
  p: Problems,
  value: unknown,
  at: string,
  item: (entry: unknown, at: string, index: number) => T | undefined,
): T[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) {
    p.add(at, `must be a list, got ${describe(value)}`);
    return [];
  }
  const items: T[] = [];
  value.forEach((entry: unknown, index) => {
    const read = item(entry, child(at, index), index);
    if (read !== undefined) items.push(read);
  });
  return items;
}

/** Reads a `map[string]string`; non-string values are reported by key, with a hint to quote them. */
function readStringMap(p: Problems, value: unknown, at: string): Record<string, string> | undefined {
  if (isAbsent(value)) return undefined;
  if (!isMapping(value)) {
    p.add(at, `must be a mapping of strings, got ${describe(value)}`);
    return undefined;
  }
  const map: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    const field = child(at, key);
    if (typeof entry === 'string') {
      map[key] = entry;
    } else if (typeof entry === 'number' || typeof entry === 'boolean') {
      p.add(field, `must be a string, got ${describe(entry)}; quote it ("${String(entry)}") so YAML keeps it a string`);
    } else {
      p.add(field, `must be a string, got ${describe(entry)}`);
    }
  }
  return map;
}

/** Reads a name that Kubernetes requires to be a DNS-1123 label (namespaces). */
export function readNamespaceName(p: Problems, value: unknown, at: string, required = false): string | undefined {
  const text = readString(p, value, at, { required, min: 1, max: 63 });
  if (text === undefined) return undefined;
  const problem = dnsLabelProblem(text);
  if (problem !== undefined) p.add(at, problem);
  return problem === undefined ? text : undefined;
}

/** Reads an object name that must be a DNS-1123 subdomain (Kustomization names). */
export function readObjectName(p: Problems, value: unknown, at: string): string | undefined {
  const text = readString(p, value, at, { required: true });
  if (text === undefined) return undefined;
  const problem = dnsSubdomainProblem(text);
  if (problem !== undefined) p.add(at, problem);
  return problem === undefined ? text : undefined;
}

/**
 * Reads the optional name of an object the run looks up or acts as (a ServiceAccount, Secret or
 * ConfigMap): a DNS-1123 subdomain, as Kubernetes requires, so that it cannot become anything but
 * one name in a URL path or an impersonation header.
 */
function readRefName(p: Problems, value: unknown, at: string, required = false): string | undefined {
  if (isAbsent(value) && !required) return undefined;
  return readObjectName(p, value, at);
}

/**
 * Reads spec.path (or the `path` input) and normalises it; see normalizeSourcePath. With `rooted`
 * (spec.path), a leading "/" names the source root, as Flux's SecureJoin of the path onto the root makes it.
 */
export function readSourcePath(p: Problems, value: unknown, at: string, rooted = false): string | undefined {
  if (isAbsent(value)) return '.';
  if (typeof value !== 'string') {
    p.add(at, `must be a string, got ${describe(value)}`);
    return undefined;
  }
  const normal = normalizeSourcePath(rooted ? value.replace(/^\/+/, '') : value);
  if (normal === undefined) {
    p.add(at, `${quote(value)} must stay inside the source root (a relative path that does not climb out with "..")`);
  }
  return normal;
}

// ---------------------------------------------------------------------------------------------
// spec fields
// ---------------------------------------------------------------------------------------------

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

const SOURCE_KINDS = ['GitRepository', 'OCIRepository', 'Bucket', 'ExternalArtifact'] as const;
const DELETION_POLICIES = ['MirrorPrune', 'Delete', 'WaitForTermination', 'Orphan'] as const;
const BUILD_METADATA = ['originAnnotations', 'transformerAnnotations'] as const;
const SELECTOR_FIELDS = [
  'group',
  'version',
  'kind',
  'name',
  'namespace',
  'labelSelector',
  'annotationSelector',
] as const;
/** kustomize's remote-resource prefixes, which Flux refuses in spec.components (IsLocalRelativePath). */
const REMOTE_PREFIXES = ['git::', 'gh:', 'ssh://', 'https://', 'http://', 'git@', 'github.com:', 'github.com/'];
/** envsubst variable names, as Flux validates the keys of spec.postBuild.substitute. */
const VARIABLE_NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;
/** `version` or `group/version`; Kubernetes' ParseGroupVersion refuses more slashes. */
const API_VERSION = /^([^/\s]+\/)?[^/\s]+$/;

function readSourceRef(p: Problems, value: unknown, namespace: string): KustomizationSpec['sourceRef'] {
  const at = 'spec.sourceRef';
  const ref = readMapping(p, value, at, ['apiVersion', 'kind', 'name', 'namespace'], { required: true });
  if (ref === undefined) return undefined;
  const kind = readEnum(p, ref.kind, child(at, 'kind'), SOURCE_KINDS, true);
  const name = readString(p, ref.name, child(at, 'name'), { required: true });
  const apiVersion = readString(p, ref.apiVersion, child(at, 'apiVersion'));
  const refNamespace = readString(p, ref.namespace, child(at, 'namespace')) ?? namespace;
  if (kind !== undefined && kind !== 'GitRepository') {
    p.add(
      child(at, 'kind'),
      `${kind} is not supported: the source is the checked-out workspace, so only GitRepository sources ` +
        '(which this action takes to mean the repository being checked out) are supported',
    );
    return undefined;
  }
  if (kind === undefined || name === undefined) return undefined;
  return withoutUndefined({ kind, name, namespace: refNamespace, apiVersion });
}

function readSelector(p: Problems, value: unknown, at: string): Selector | undefined {
  const raw = readMapping(p, value, at, SELECTOR_FIELDS);
  if (raw === undefined) return undefined;
  const selector: Selector = {};
  for (const key of SELECTOR_FIELDS) {
    const text = readString(p, raw[key], child(at, key));
    if (text !== undefined) selector[key] = text;
  }
  return selector;
}

function readPatch(p: Problems, value: unknown, at: string): Patch | undefined {
  const raw = readMapping(p, value, at, ['patch', 'target'], { required: true });
  if (raw === undefined) return undefined;
  const patch = readString(p, raw.patch, child(at, 'patch'), { required: true });
  const target = readSelector(p, raw.target, child(at, 'target'));
  if (patch !== undefined) {
    // kustomize would fail on this later with less context; both patch forms are YAML.
    const docs = parseYamlStream(patch, 'patch');
    const bad = docs.find((d) => d.error !== undefined);
    if (bad?.error !== undefined) {
      p.add(child(at, 'patch'), `is not valid YAML or JSON: ${bad.error.replace(/^patch(, document \d+)?: /, '')}`);
      return undefined;
    }
    const problem = jsonPatchProblem(docs[0]?.value);
    if (problem !== undefined) {
      p.add(child(at, 'patch'), problem);
      return undefined;
    }
  }
  return patch === undefined ? undefined : withoutUndefined({ patch, target });
}

function readImage(p: Problems, value: unknown, at: string): Image | undefined {
  const raw = readMapping(p, value, at, ['name', 'newName', 'newTag', 'digest'], { required: true });
  if (raw === undefined) return undefined;
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const newName = readString(p, raw.newName, child(at, 'newName'));
  const newTag = readString(p, raw.newTag, child(at, 'newTag'));
  const digest = readString(p, raw.digest, child(at, 'digest'));
  // Flux's CRD requires only `name`: an entry with nothing else is legal, and kustomize leaves the image as it is.
  // An empty name is refused although the CRD lets it through: it matches no image, so it is always a slip.
  return name === undefined ? undefined : withoutUndefined({ name, newName, newTag, digest });
}

/** Why a component path is refused, or undefined; `path` is the normalised spec.path it is relative to. */
function componentProblem(component: string, path: string | undefined): string | undefined {
  const lower = component.toLowerCase();
  const remote = REMOTE_PREFIXES.find((prefix) => prefix.length < component.length && lower.startsWith(prefix));
  if (remote !== undefined) {
    return `${quote(component)} is a remote component (${remote}); components must be local paths relative to spec.path`;
  }
  if (component.startsWith('/') || lower.replace(/^file:\/\//, '').startsWith('/')) {
    return `${quote(component)} is an absolute path; components must be relative to spec.path`;
  }
  if (path !== undefined && normalizeSourcePath(`${path}/${component}`) === undefined) {
    return `${quote(component)} climbs out of the source root from spec.path ${quote(path)}`;
  }
  return undefined;
}

function readComponents(p: Problems, value: unknown, path: string | undefined): string[] {
  return readList(p, value, 'spec.components', (entry, at) => {
    const component = readString(p, entry, at, { required: true });
    if (component === undefined) return undefined;
    const problem = componentProblem(component, path);
    if (problem !== undefined) p.add(at, problem);
    return problem === undefined ? component : undefined;
  });
}

function readApiVersion(p: Problems, value: unknown, at: string, required: boolean): string | undefined {
  const text = readString(p, value, at, { required });
  if (text !== undefined && !API_VERSION.test(text)) {
    p.add(at, `${quote(text)} is not an apiVersion (use "v1" or "group/version", e.g. "apps/v1")`);
    return undefined;
  }
  return text;
}

function readHealthCheck(p: Problems, value: unknown, at: string): ObjectRef | undefined {
  const raw = readMapping(p, value, at, ['apiVersion', 'kind', 'name', 'namespace'], { required: true });
  if (raw === undefined) return undefined;
  // Flux keeps v1beta1's rule that a health check without apiVersion means apps/v1.
  const apiVersion = readApiVersion(p, raw.apiVersion, child(at, 'apiVersion'), false) ?? 'apps/v1';
  const kind = readString(p, raw.kind, child(at, 'kind'), { required: true });
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const namespace = readString(p, raw.namespace, child(at, 'namespace'));
  if (kind === undefined || name === undefined) return undefined;
  return withoutUndefined({ apiVersion, kind, name, namespace });
}

function readHealthCheckExprs(p: Problems, value: unknown): HealthCheckExpr[] {
  const seen = new Map<string, string>();
  return readList(p, value, 'spec.healthCheckExprs', (entry, at) => {
    const raw = readMapping(p, entry, at, ['apiVersion', 'kind', 'current', 'inProgress', 'failed'], {
      required: true,
    });
    if (raw === undefined) return undefined;
    const apiVersion = readApiVersion(p, raw.apiVersion, child(at, 'apiVersion'), true);
    const kind = readString(p, raw.kind, child(at, 'kind'));
    const current = readString(p, raw.current, child(at, 'current'), { required: true });
    const inProgress = readString(p, raw.inProgress, child(at, 'inProgress'));
    const failed = readString(p, raw.failed, child(at, 'failed'));
    const exprs = { current, inProgress, failed };
    for (const [key, text] of Object.entries(exprs)) checkCel(p, text, child(at, key));
    if (apiVersion === undefined || current === undefined) return undefined;
    // Flux matches these by GroupKind, so two entries differing only in version collide.
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const key = `${group}\u0000${kind ?? ''}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      const what = kind === undefined ? `the whole group ${quote(group)}` : `group ${quote(group)} kind ${kind}`;
      p.add(at, `duplicate entry for ${what} (already in ${earlier}); Flux matches by group and kind only`);
      return undefined;
    }
    seen.set(key, at);
    return withoutUndefined({ apiVersion, kind, current, inProgress, failed });
  });
}

/** Why `text` is not an RFC 6901 JSON pointer into an object, or undefined. */
function jsonPointerProblem(text: string): string | undefined {
  if (!text.startsWith('/'))
    return `${quote(text)} is not a JSON pointer (it must start with "/", e.g. /spec/replicas)`;
  if (/~(?![01])/.test(text))
    return `${quote(text)} has a "~" not followed by 0 or 1 (write ~0 for "~" and ~1 for "/")`;
  return undefined;
}

function readIgnoreRule(p: Problems, value: unknown, at: string): IgnoreRule | undefined {
  const raw = readMapping(p, value, at, ['paths', 'target'], { required: true });
  if (raw === undefined) return undefined;
  const pathsAt = child(at, 'paths');
  const paths = readList(p, raw.paths, pathsAt, (entry, entryAt) => {
    const pointer = readString(p, entry, entryAt, { required: true });
    const problem = pointer === undefined ? undefined : jsonPointerProblem(pointer);
    if (problem !== undefined) p.add(entryAt, problem);
    return problem === undefined ? pointer : undefined;
  });
  if (isAbsent(raw.paths) || (Array.isArray(raw.paths) && raw.paths.length === 0)) {
    p.add(pathsAt, 'is required: list at least one JSON pointer, e.g. /spec/replicas');
  }
  const target = readSelector(p, raw.target, child(at, 'target'));
  return paths.length === 0 ? undefined : withoutUndefined({ paths, target });
}

function readSubstituteFrom(p: Problems, value: unknown, at: string): PostBuild['substituteFrom'][number] | undefined {
  const raw = readMapping(p, value, at, ['kind', 'name', 'optional'], { required: true });
  if (raw === undefined) return undefined;
  const kind = readEnum(p, raw.kind, child(at, 'kind'), ['ConfigMap', 'Secret'] as const, true);
  const name = readRefName(p, raw.name, child(at, 'name'), true);
  const optional = readBoolean(p, raw.optional, child(at, 'optional')) ?? false;
  return kind === undefined || name === undefined ? undefined : { kind, name, optional };
}

function readPostBuild(p: Problems, value: unknown): PostBuild | undefined {
  const at = 'spec.postBuild';
  const raw = readMapping(p, value, at, ['substitute', 'substituteFrom', 'substituteStrategy']);
  if (raw === undefined) return undefined;
  const substituteAt = child(at, 'substitute');
  const substitute = readStringMap(p, raw.substitute, substituteAt) ?? {};
  for (const name of Object.keys(isMapping(raw.substitute) ? raw.substitute : {})) {
    if (!VARIABLE_NAME.test(name)) {
      p.add(
        child(substituteAt, name),
        `${quote(name)} is not a valid variable name (letters, digits and "_", not starting with a digit)`,
      );
    }
  }
  const substituteFrom = readList(p, raw.substituteFrom, child(at, 'substituteFrom'), (entry, entryAt) =>
    readSubstituteFrom(p, entry, entryAt),
  );
  const substituteStrategy =
    readEnum(p, raw.substituteStrategy, child(at, 'substituteStrategy'), ['WithVariables', 'Always'] as const) ??
    'WithVariables';
  return { substitute, substituteFrom, substituteStrategy };
}

/** Reads `{name, ...}` (Kubernetes' LocalObjectReference and its relatives); undefined without a name. */
function readNameRef(
  p: Problems,
  value: unknown,
  at: string,
  extra: readonly string[] = [],
): { name: string; raw: Mapping } | undefined {
  const raw = readMapping(p, value, at, ['name', ...extra]);
  if (raw === undefined) return undefined;
  const name = readRefName(p, raw.name, child(at, 'name'), true);
  return name === undefined ? undefined : { name, raw };
}

function readDecryption(p: Problems, value: unknown): KustomizationSpec['decryption'] {
  const at = 'spec.decryption';
  const raw = readMapping(p, value, at, ['provider', 'secretRef', 'serviceAccountName']);
  if (raw === undefined) return undefined;
  const provider = readEnum(p, raw.provider, child(at, 'provider'), ['sops'] as const, true);
  const secretRef = readNameRef(p, raw.secretRef, child(at, 'secretRef'));
  const serviceAccountName = readRefName(p, raw.serviceAccountName, child(at, 'serviceAccountName'));
  if (provider === undefined) return undefined;
  return withoutUndefined({
    provider,
    secretRef: secretRef === undefined ? undefined : { name: secretRef.name },
    serviceAccountName,
  });
}

function readKubeConfig(p: Problems, value: unknown): KustomizationSpec['kubeConfig'] {
  const at = 'spec.kubeConfig';
  const raw = readMapping(p, value, at, ['secretRef', 'configMapRef']);
  if (raw === undefined) return undefined;
  const secretAt = child(at, 'secretRef');
  const secretRef = readNameRef(p, raw.secretRef, secretAt, ['key']);
  const key = secretRef === undefined ? undefined : readString(p, secretRef.raw.key, child(secretAt, 'key'));
  const configMapRef = readNameRef(p, raw.configMapRef, child(at, 'configMapRef'));
  // Flux's CRD enforces this with CEL rules; the message follows theirs.
  if (isAbsent(raw.secretRef) === isAbsent(raw.configMapRef)) {
    p.add(at, 'exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified');
    return undefined;
  }
  if (secretRef !== undefined) return { secretRef: withoutUndefined({ name: secretRef.name, key }) };
  if (configMapRef !== undefined) return { configMapRef: { name: configMapRef.name } };
  return undefined;
}

/** Flux refuses an expression that does not compile (Stalled, InvalidCELExpression); so do we, before any run. */
function checkCel(p: Problems, text: string | undefined, at: string): void {
  const problem = text === undefined ? undefined : celSyntaxProblem(text);
  if (problem !== undefined) p.add(at, `invalid CEL expression ${quote(text!)}: ${problem}`);
}

/** Rewrites Flux's CLI form `[ns/]name[@expr]` as the mapping the CRD wants, for the error message. */
function dependencyHint(text: string): string {
  const at = text.indexOf('@');
  const ref = at === -1 ? text : text.slice(0, at);
  const slash = ref.indexOf('/');
  const fields =
    slash === -1 ? [`name: ${ref}`] : [`name: ${ref.slice(slash + 1)}`, `namespace: ${ref.slice(0, slash)}`];
  if (at !== -1) fields.push('readyExpr: ...');
  return `write {${fields.join(', ')}}`;
}

function readDependency(p: Problems, value: unknown, at: string, namespace: string): Dependency | undefined {
  if (typeof value === 'string') {
    // Flux's "[ns/]name[@expr]" form exists only for the flux CLI's --depends-on flag; the CRD takes objects.
    p.add(
      at,
      `must be a mapping {name, namespace?, readyExpr?}, got the string ${quote(value)}; ${dependencyHint(value)}`,
    );
    return undefined;
  }
  const raw = readMapping(p, value, at, ['name', 'namespace', 'readyExpr'], { required: true });
  if (raw === undefined) return undefined;
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const depNamespace = readString(p, raw.namespace, child(at, 'namespace')) ?? namespace;
  const readyExpr = readString(p, raw.readyExpr, child(at, 'readyExpr'));
  checkCel(p, readyExpr, child(at, 'readyExpr'));
  return name === undefined ? undefined : withoutUndefined({ name, namespace: depNamespace, readyExpr });
}

function readCommonMetadata(p: Problems, value: unknown): KustomizationSpec['commonMetadata'] {
  const at = 'spec.commonMetadata';
  const raw = readMapping(p, value, at, ['labels', 'annotations']);
  if (raw === undefined) return undefined;
  return withoutUndefined({
    labels: readStringMap(p, raw.labels, child(at, 'labels')),
    annotations: readStringMap(p, raw.annotations, child(at, 'annotations')),
  });
}

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
}

/** `Kustomization namespace/name` for messages, from whatever metadata holds, so the reader can find it. */
function displayName(metadata: unknown): string {
  const name = isMapping(metadata) ? metadata.name : undefined;
  const namespace = isMapping(metadata) ? metadata.namespace : undefined;
  const shownName = typeof name === 'string' && name !== '' ? name : '<no name>';
  const shownNamespace = typeof namespace === 'string' && namespace !== '' ? namespace : DEFAULT_NAMESPACE;
  return `Kustomization ${shownNamespace}/${shownName}`;
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

/** Reads one Kustomization document; every problem is prefixed with file, document and namespace/name. */
function readDocument(value: Mapping, file: string, document: number, identity?: Identity): DocumentResult {
  const prefix = `${file}, document ${document}, ${displayName(value.metadata)}: `;
  if (value.apiVersion !== FLUX_API_VERSION) {
    const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : '';
    return { problems: [prefix + versionProblem(apiVersion, value.spec)] };
  }
  const p = new Problems();
  readMapping(p, value, '', TOP_LEVEL_FIELDS);
  const { name, namespace: effective } = readMetadata(p, value.metadata, identity);
  const fields = readSpec(p, value.spec, effective);
  const problems = p.items.map((item) => prefix + item);
  if (problems.length > 0 || name === undefined || fields === undefined) return { problems };
  const origin = { kind: 'file', file, document } as const;
  const spec = withoutUndefined({ name, namespace: effective, origin, ...fields });
  documents.set(spec, value);
  return { spec, problems };
}

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
  const result = readDocument(value, spec.origin.file, spec.origin.document, identity);
  if (result.spec === undefined) throw new SpecError(result.problems);
  return result.spec;
}

/** The document each parsed spec came from, kept aside so that specs stay plain, comparable values. */
const documents = new WeakMap<KustomizationSpec, Mapping>();

/** The Kustomization document `spec` was read from, as parsed (undefined for a spec from the inputs). */
export function sourceDocument(spec: KustomizationSpec): Record<string, unknown> | undefined {
  return documents.get(spec);
}

/**
 * Parses the `kustomize.toolkit.fluxcd.io/v1` Kustomizations of a multi-document YAML file.
 * Other kinds, kustomize's own Kustomization (kustomization.yaml) and empty documents are skipped;
 * a Flux Kustomization of another API version is an error. Every problem of the file is collected
 * into one SpecError whose lines name `file`, the document number, the Kustomization and the field.
 */
export function parseKustomizations(text: string, file: string): KustomizationSpec[] {
  const specs: KustomizationSpec[] = [];
  const problems: string[] = [];
  for (const doc of parseYamlStream(text, file)) {
    if (doc.error !== undefined) {
      problems.push(doc.error);
      continue;
    }
    const value = doc.value;
    const i = doc.document - 1;
    const kind = classify(value);
    if (kind === 'other' || !isMapping(value)) continue;
    const result = readDocument(value, file, i + 1);
    problems.push(...result.problems);
    if (result.spec !== undefined) specs.push(result.spec);
  }
  if (problems.length > 0) throw new SpecError(problems);
  return specs;
}

// ---------------------------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------------------------

/** Drops keys whose value is undefined, so parsed specs print and compare without empty keys. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
