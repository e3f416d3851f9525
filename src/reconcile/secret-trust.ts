/**
 * The base rule for the Secrets and secrets a Kustomization makes the run use (source/secret-uses.ts),
 * asked where each is about to be used: the remote kubeconfig (resolve.ts), the decryption keys and
 * secret-vars (render.ts); substituteFrom asks the same rule through substituteVerdict.
 */
import type { KustomizationSpec } from '../flux/types.js';
import type { Settings } from '../options/settings.js';
import { treeTrust } from '../source/guarded.js';
import { useScope, useVerdict, type SecretUse } from '../source/secret-uses.js';
import type { CredentialVerdict, TreeTrust } from '../source/trust.js';

/**
 * Undefined when Kustomization `spec` may use `u` in this run; else the refusal, a whole sentence
 * for a note. The single Kustomization of the `path` input is the workflow's own definition, not the
 * tree's: the workflow that gives it keys and variables chose it, so it is never refused.
 */
export async function refusedUse(
  settings: Pick<Settings, 'untrustedTree'>,
  spec: Pick<KustomizationSpec, 'namespace' | 'name' | 'origin'>,
  u: SecretUse,
): Promise<string | undefined> {
  if (settings.untrustedTree === undefined || spec.origin.kind === 'inputs') return undefined;
  const trust = await treeTrust(settings)();
  const verdict = await asBuiltOnBase(
    useVerdict(spec.namespace, spec.name, u, trust),
    useScope(spec.namespace, spec.name, u),
    trust,
  );
  return verdict.use ? undefined : verdict.why;
}

/**
 * A refusal because the base commit's files as written lack `scope`, asked again of the base's
 * Kustomizations as their parents' builds on that commit make them: the run sees a child as its
 * parent's build makes it (a namespace, a substituteFrom the parent gives), and so must the base.
 */
export async function asBuiltOnBase(
  verdict: CredentialVerdict,
  scope: string,
  trust: TreeTrust,
): Promise<CredentialVerdict> {
  if (verdict.use || trust.trusted || !(trust.base instanceof Set) || trust.asBuilt === undefined) return verdict;
  return (await trust.asBuilt()).has(scope) ? { use: true } : verdict;
}
