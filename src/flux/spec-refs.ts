/*
 * The spec fields that name other objects the run reads: spec.sourceRef, spec.postBuild (variables and
 * the ConfigMaps and Secrets they come from), spec.decryption and spec.kubeConfig.
 */

import {
  Problems,
  child,
  isAbsent,
  isMapping,
  quote,
  readBoolean,
  readEnum,
  readList,
  readMapping,
  readString,
  readStringMap,
  withoutUndefined,
  type Mapping,
} from './fields.js';
import type { KustomizationSpec, PostBuild } from './types.js';
import { readRefName } from './values.js';

const SOURCE_KINDS = ['GitRepository', 'OCIRepository', 'Bucket', 'ExternalArtifact'] as const;
/** envsubst variable names, as Flux validates the keys of spec.postBuild.substitute. */
const VARIABLE_NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

export function readSourceRef(p: Problems, value: unknown, namespace: string): KustomizationSpec['sourceRef'] {
  const at = 'spec.sourceRef';
  const ref = readMapping(p, value, at, ['apiVersion', 'kind', 'name', 'namespace'], { required: true });
  if (ref === undefined) return undefined;
  const kind = readEnum(p, ref.kind, child(at, 'kind'), SOURCE_KINDS, true);
  const name = readString(p, ref.name, child(at, 'name'), { required: true });
  const apiVersion = readString(p, ref.apiVersion, child(at, 'apiVersion'));
  const refNamespace = readString(p, ref.namespace, child(at, 'namespace')) ?? namespace;
  if (kind === undefined || name === undefined) return undefined;
  return withoutUndefined({ kind, name, namespace: refNamespace, apiVersion });
}

function readSubstituteFrom(p: Problems, value: unknown, at: string): PostBuild['substituteFrom'][number] | undefined {
  const raw = readMapping(p, value, at, ['kind', 'name', 'optional'], { required: true });
  if (raw === undefined) return undefined;
  const kind = readEnum(p, raw.kind, child(at, 'kind'), ['ConfigMap', 'Secret'] as const, true);
  const name = readRefName(p, raw.name, child(at, 'name'), true);
  const optional = readBoolean(p, raw.optional, child(at, 'optional')) ?? false;
  return kind === undefined || name === undefined ? undefined : { kind, name, optional };
}

export function readPostBuild(p: Problems, value: unknown): PostBuild | undefined {
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

export function readDecryption(p: Problems, value: unknown): KustomizationSpec['decryption'] {
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

export function readKubeConfig(p: Problems, value: unknown): KustomizationSpec['kubeConfig'] {
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
