import { Problems, SpecError } from './fields.js';
import { DEFAULT_NAMESPACE } from './parse.js';
import { effectiveTimeout, readNamespaceName, readObjectName, readSourcePath } from './values.js';
import type { KustomizationSpec } from './types.js';
import { derivedName } from '../objects/names.js';

/**
 * The action inputs that describe one Kustomization when no Kustomization file is given: the spec
 * fields the settings hold as the spec does (prune, wait, force; timeout in milliseconds, read and
 * checked with the settings), and the texts to read as a Kustomization file's fields.
 */
export type SpecInputs = Partial<Pick<KustomizationSpec, 'prune' | 'wait' | 'force' | 'timeout'>> & {
  path: string;
  targetNamespace?: string;
  name?: string;
  namespace?: string;
  /** The repository the path is in (see Settings.run.source): part of the derived name. */
  source: string;
};

/** Action inputs arrive as strings, and an input that is not set arrives as "". */
function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A name given for the path input: a DNS-1123 subdomain that also fits the owner label (63). */
function readKustomizationName(p: Problems, value: string, at: string): string | undefined {
  const name = readObjectName(p, value, at);
  if (name !== undefined && name.length > 63) {
    p.add(at, `must be at most 63 characters (it is the value of Flux's owner label); got ${name.length}`);
    return undefined;
  }
  return name;
}

/**
 * Builds the single Kustomization that the action's inputs describe, with the rules and defaults of a
 * Kustomization file: there is no interval, so the timeout defaults to 5m (and, as in Flux, is never
 * under 30s). Without a `name` input the name is derived from the repository and the whole path,
 * so that two folders or two repositories never share an inventory. Problems name the input, e.g. `input "path": ...`, and are thrown as one SpecError.
 */
export function specFromInputs(inputs: SpecInputs): KustomizationSpec {
  const p = new Problems();
  const path = readSourcePath(p, inputs.path.trim(), 'input "path"');
  const explicitName = given(inputs.name);
  const name =
    explicitName === undefined
      ? derivedName(inputs.source, path ?? inputs.path)
      : readKustomizationName(p, explicitName, 'input "name"');
  const namespace = readNamespaceName(p, given(inputs.namespace), 'input "namespace"') ?? DEFAULT_NAMESPACE;
  const targetNamespace = readNamespaceName(p, given(inputs.targetNamespace), 'input "target-namespace"');
  if (p.items.length > 0 || path === undefined || name === undefined) throw new SpecError(p.items);

  const spec: KustomizationSpec = {
    name,
    namespace,
    origin: { kind: 'inputs' },
    path,
    timeout: effectiveTimeout(undefined, inputs.timeout),
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
