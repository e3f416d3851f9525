/**
 * The one base rule for every Secret and secret a Kustomization makes the run use (pure). In an
 * untrusted run (trust.ts) a Kustomization gets a Secret, the workflow's decryption keys or its
 * secret-vars only when its definition on the base commit used them the same way; otherwise a pull
 * request could add a Kustomization (or change one) that borrows the platform's kubeconfig, age key
 * or secret variables and shows what they open. Each use is one scope, compared as text with the
 * scopes the base commit's Kustomization files give (secretUseScopesIn, read by base-sources.ts):
 *
 * - substituteFrom: the base's Kustomization reads that Secret through postBuild.substituteFrom;
 * - kubeConfig: the base's Kustomization names the same Secret and the same key (absent stays absent);
 * - kubeConfigMap: the base's Kustomization names the same ConfigMap in spec.kubeConfig.configMapRef
 *   (the run mints a token of a ServiceAccount of the action's cluster and sends it to the address
 *   that ConfigMap, read from the cluster, names);
 * - decryption: the base's Kustomization has the same decryption block (provider, secretRef,
 *   serviceAccountName), or none as this one has none; this covers the workflow's sops-age-key and
 *   sops-pgp-key and the runner's cloud credentials as well as the Secret, since they are the
 *   platform's keys: a new Kustomization pointed at a SOPS file of the repository would open it;
 * - secretVars: the base's Kustomization of that name has spec.postBuild (substitution on).
 *
 * The base is read as the run reads a Kustomization file: metadata.namespace, else flux-system.
 */
import { documentValues } from '../flux/source-files.js';
import { FLUX_GROUP } from '../objects/flux.js';
import { DEFAULT_NAMESPACE } from '../flux/parse.js';
import type { KustomizationSpec } from '../flux/types.js';
import { substituteScope, verdict, type CredentialVerdict, type TreeTrust } from './trust.js';

/** One thing a Kustomization makes the run use that is secret. */
export type SecretUse =
  | { use: 'substituteFrom'; secret: string }
  | { use: 'kubeConfig'; secret: string; key?: string }
  | { use: 'kubeConfigMap'; configMap: string }
  | { use: 'decryption'; decryption: DecryptionBlock | undefined }
  | { use: 'secretVars' };

/** spec.decryption as the run parses it, or as a base file has it (its fields unchecked). */
export interface DecryptionBlock {
  provider?: unknown;
  secretRef?: { name?: unknown };
  serviceAccountName?: unknown;
}

/** The decryption block as one comparable value (null: none). */
function decryptionKey(d: DecryptionBlock | undefined) {
  if (d === undefined) return null;
  return {
    provider: typeof d.provider === 'string' ? d.provider : 'sops',
    secret: typeof d.secretRef?.name === 'string' ? d.secretRef.name : null,
    serviceAccountName: typeof d.serviceAccountName === 'string' ? d.serviceAccountName : null,
  };
}

/** Kustomization `namespace/name` using `u`, as one comparable text. */
export function useScope(namespace: string, name: string, u: SecretUse): string {
  const kustomization = { kind: 'Kustomization', namespace, name };
  switch (u.use) {
    case 'substituteFrom':
      return substituteScope(namespace, name, u.secret);
    case 'kubeConfig':
      return JSON.stringify({ ...kustomization, kubeConfigSecret: u.secret, key: u.key ?? null });
    case 'kubeConfigMap':
      return JSON.stringify({ ...kustomization, kubeConfigMap: u.configMap });
    case 'decryption':
      return JSON.stringify({ ...kustomization, decryption: decryptionKey(u.decryption) });
    case 'secretVars':
      return JSON.stringify({ ...kustomization, postBuild: true });
  }
}

/** What a use takes, for a refusal: `Secret apps/db`, `the workflow's secret-vars`. */
export function usedThing(namespace: string, u: SecretUse): string {
  switch (u.use) {
    case 'substituteFrom':
    case 'kubeConfig':
      return `Secret ${namespace}/${u.secret}`;
    case 'kubeConfigMap':
      return `a ServiceAccount token for the cluster of ConfigMap ${namespace}/${u.configMap}`;
    case 'decryption':
      return typeof u.decryption?.secretRef?.name === 'string'
        ? `Secret ${namespace}/${u.decryption.secretRef.name} and the workflow's decryption keys`
        : "the workflow's decryption keys (sops-age-key, sops-pgp-key, the runner's cloud credentials)";
    case 'secretVars':
      return "the workflow's secret-vars";
  }
}

/** The field a use comes from. */
export function usedField(u: SecretUse): string {
  switch (u.use) {
    case 'substituteFrom':
      return 'spec.postBuild.substituteFrom';
    case 'kubeConfig':
      return 'spec.kubeConfig.secretRef';
    case 'kubeConfigMap':
      return 'spec.kubeConfig.configMapRef';
    case 'decryption':
      return 'spec.decryption';
    case 'secretVars':
      return 'spec.postBuild';
  }
}

const HOW: Record<SecretUse['use'], string> = {
  substituteFrom: 'does not read it',
  kubeConfig: 'does not use it (the same Secret and key)',
  kubeConfigMap: 'does not name that ConfigMap in spec.kubeConfig.configMapRef',
  decryption: 'does not decrypt the same way (the same spec.decryption block, or none)',
  secretVars: 'does not exist or has no spec.postBuild',
};

/**
 * Whether Kustomization `namespace/name` may use `u` in a run of `trust`; a refusal's `why` is the
 * whole note: `refused Secret apps/x for spec.kubeConfig.secretRef: the base commit's …`.
 */
export function useVerdict(namespace: string, name: string, u: SecretUse, trust: TreeTrust): CredentialVerdict {
  const v = verdict(
    useScope(namespace, name, u),
    trust,
    `the base commit's Kustomization ${namespace}/${name} ${HOW[u.use]}: secrets are used only as the base branch uses them`,
  );
  if (v.use) return v;
  return { use: false, why: `refused ${usedThing(namespace, u)} for ${usedField(u)}: ${v.why}` };
}

/** The uses a Kustomization spec of the run asks for (kubeConfig, decryption; substituteFrom by Secret). */
export function usesOf(spec: Pick<KustomizationSpec, 'kubeConfig' | 'decryption' | 'postBuild'>): SecretUse[] {
  const out: SecretUse[] = [];
  const ref = spec.kubeConfig?.secretRef;
  if (ref !== undefined)
    out.push({ use: 'kubeConfig', secret: ref.name, ...(ref.key !== undefined ? { key: ref.key } : {}) });
  const cmRef = spec.kubeConfig?.configMapRef;
  if (cmRef !== undefined) out.push({ use: 'kubeConfigMap', configMap: cmRef.name });
  out.push({ use: 'decryption', decryption: spec.decryption });
  for (const from of spec.postBuild?.substituteFrom ?? []) {
    if (from.kind === 'Secret') out.push({ use: 'substituteFrom', secret: from.name });
  }
  if (spec.postBuild !== undefined) out.push({ use: 'secretVars' });
  return out;
}

type Loose = {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown };
  spec?: {
    postBuild?: { substituteFrom?: unknown };
    decryption?: DecryptionBlock;
    kubeConfig?: { secretRef?: { name?: unknown; key?: unknown }; configMapRef?: { name?: unknown } };
  };
};

const mapping = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Every use scope the Flux Kustomizations of `text` (a file of the base commit) give. */
export function secretUseScopesIn(text: string): string[] {
  // A cheap filter only: JSON-style (`"kind": "Kustomization"`) and flow-style files pass it too.
  if (!text.includes('Kustomization')) return [];
  const out: string[] = [];
  for (const v of documentValues(text)) {
    const o = (mapping(v) ?? {}) as Loose;
    if (o.kind !== 'Kustomization' || typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith(FLUX_GROUP))
      continue;
    const name = o.metadata?.name;
    if (typeof name !== 'string') continue;
    const namespace = typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : DEFAULT_NAMESPACE;
    const spec = mapping(o.spec) as Loose['spec'];
    const add = (u: SecretUse) => out.push(useScope(namespace, name, u));
    const decryption = mapping(spec?.decryption);
    add({ use: 'decryption', decryption: decryption as DecryptionBlock | undefined });
    const ref = mapping(mapping(spec?.kubeConfig)?.['secretRef']);
    if (ref !== undefined && typeof ref['name'] === 'string') {
      const key = ref['key'];
      add({ use: 'kubeConfig', secret: ref['name'], ...(typeof key === 'string' ? { key } : {}) });
    }
    const cmRef = mapping(mapping(spec?.kubeConfig)?.['configMapRef']);
    if (cmRef !== undefined && typeof cmRef['name'] === 'string')
      add({ use: 'kubeConfigMap', configMap: cmRef['name'] });
    const postBuild = mapping(spec?.postBuild);
    if (postBuild === undefined) continue;
    add({ use: 'secretVars' });
    const from = postBuild['substituteFrom'];
    for (const entry of Array.isArray(from) ? (from as unknown[]) : []) {
      const r = mapping(entry);
      if (r?.['kind'] === 'Secret' && typeof r['name'] === 'string') add({ use: 'substituteFrom', secret: r['name'] });
    }
  }
  return out;
}
