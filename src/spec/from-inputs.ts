import {
  DEFAULT_NAMESPACE,
  Problems,
  SpecError,
  effectiveTimeout,
  normalizeSourcePath,
  readDuration,
  readNamespaceName,
  readObjectName,
  readSourcePath,
} from './parse.js';
import type { KustomizationSpec } from './types.js';

/** The action inputs that describe one Kustomization when no Kustomization file is given. */
export interface SpecInputs {
  path: string;
  prune?: boolean;
  wait?: boolean;
  force?: boolean;
  timeout?: string;
  targetNamespace?: string;
  name?: string;
  namespace?: string;
}

/** Flux puts the Kustomization name in label values, which allow at most 63 characters. */
const MAX_DERIVED_NAME = 63;

/**
 * A DNS-1123 name for a Kustomization built from `path`: `./clusters/production` gives
 * `clusters-production`, the root gives `root`. Characters outside [a-z0-9] become `-`.
 */
export function nameFromPath(path: string): string {
  const normal = normalizeSourcePath(path) ?? path;
  if (normal === '.') return 'root';
  const name = normal
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_DERIVED_NAME)
    .replace(/^-+|-+$/g, '');
  return name === '' ? 'root' : name;
}

/** Action inputs arrive as strings, and an input that is not set arrives as "". */
function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * Builds the single Kustomization that the action's inputs describe, with the rules and defaults of a
 * Kustomization file: there is no interval, so the timeout defaults to 5m (and, as in Flux, is never
 * under 30s). Problems name the input, e.g. `input "timeout": ...`, and are thrown as one SpecError.
 */
export function specFromInputs(inputs: SpecInputs): KustomizationSpec {
  const p = new Problems();
  const path = readSourcePath(p, inputs.path.trim(), 'input "path"');
  const explicitName = given(inputs.name);
  const name =
    explicitName === undefined ? nameFromPath(path ?? inputs.path) : readObjectName(p, explicitName, 'input "name"');
  const namespace = readNamespaceName(p, given(inputs.namespace), 'input "namespace"') ?? DEFAULT_NAMESPACE;
  const timeout = readDuration(p, given(inputs.timeout), 'input "timeout"');
  const targetNamespace = readNamespaceName(p, given(inputs.targetNamespace), 'input "target-namespace"');
  if (p.items.length > 0 || path === undefined || name === undefined) throw new SpecError(p.items);

  const spec: KustomizationSpec = {
    name,
    namespace,
    origin: { kind: 'inputs' },
    path,
    timeout: effectiveTimeout(undefined, timeout),
    prune: inputs.prune ?? false,
    wait: inputs.wait ?? false,
    force: inputs.force ?? false,
    suspend: false,
    deletionPolicy: 'MirrorPrune',
    patches: [],
    images: [],
    components: [],
    ignoreMissingComponents: false,
    healthChecks: [],
    healthCheckExprs: [],
    ignore: [],
    dependsOn: [],
  };
  if (targetNamespace !== undefined) spec.targetNamespace = targetNamespace;
  return spec;
}
