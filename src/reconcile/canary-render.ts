/**
 * The provenance render: when SOPS files were decrypted into the build's copy (generator files,
 * env files, patches), kustomize's transformers may carry their values anywhere (a replacement into
 * a ConfigMap's data, label or name, a slice by delimiter, the base64 of Secret data, a name hash,
 * a generator reading the decrypted file): into forms no value mask matches. So the build runs once
 * more with every decrypted value replaced by a canary of the same shape (src/sops/canary.ts), and
 * every field that differs is secret-derived (src/substitute/provenance-diff.ts): its value is
 * masked in every diff and message, whatever the kind. Substituted secret values need no second
 * render: substitution runs after kustomize, and marks every field an expression writes.
 */
import { build as kustomizeBuild, type BuildOptions, type BuildResult } from '../kustomize/build.js';
import { objectKey } from '../objects/kube.js';
import { canaryPlain, type CanaryTier } from '../sops/canary.js';
import { decryptSources } from '../sops/sources.js';
import type { DecryptOptions } from '../sops/types.js';
import { redactDifference, secretDerived, type DerivedFields } from '../substitute/provenance-diff.js';
import { isUserError, UserError } from '../util/user-error.js';

/** The first canary varies punctuation too; a build that no longer runs with it gets one that keeps it. */
const TIERS: readonly CanaryTier[] = ['full', 'alnum'];

/**
 * The fields of `real` (kustomize's output) that differ when the build runs again with canaries for
 * the values decrypted before it. A canary build that fails with both tiers fails the render: the
 * output's dependence on the secrets cannot be told, and nothing of it is shown.
 */
export async function canaryDerived(
  opts: BuildOptions,
  decryption: DecryptOptions,
  real: BuildResult,
  files: readonly string[],
  build: (opts: BuildOptions) => Promise<BuildResult> = kustomizeBuild,
): Promise<DerivedFields> {
  let failure: unknown;
  for (const tier of TIERS) {
    // The real values were registered by the first render; the canaries are not secrets.
    const { onSecret: _onSecret, ...rest } = decryption;
    const canary = { ...rest, canary: (v: Parameters<typeof canaryPlain>[0]) => canaryPlain(v, tier) };
    try {
      const again = await build({
        ...opts,
        beforeBuild: async (copyRoot, kdir) => (await decryptSources(copyRoot, kdir, canary)).length,
      });
      return secretDerived(real.objects, again.objects);
    } catch (err) {
      failure ??= err;
    }
  }
  throw new UserError(
    `the build was run again with the values decrypted from ${files.join(', ')} replaced by stand-ins, to ` +
      'find every field they reach, and that build failed: the output cannot be shown without the risk of ' +
      'showing a secret (a kustomization that parses or splits a decrypted value needs it to keep its shape; ' +
      'keep decrypted values in Secret generators, not in files kustomize reads as YAML)',
    { cause: failure },
  );
}

/**
 * The error of a build that decrypted files, as it may be shown: kustomize quotes values in its
 * messages (a replacement's delimiter index out of bounds prints the value it split), and a value
 * there may be a slice no mask matches. So the build runs again with canaries: what differs between
 * the two messages is hidden; when the canary build does not fail at all, the failure depends on the
 * secret itself and only that is said.
 */
export async function redactBuildError(
  err: unknown,
  opts: BuildOptions,
  decryption: DecryptOptions,
  files: readonly string[],
  build: (opts: BuildOptions) => Promise<BuildResult> = kustomizeBuild,
): Promise<Error> {
  const message = err instanceof Error ? err.message : String(err);
  const { onSecret: _onSecret, ...rest } = decryption;
  for (const tier of TIERS) {
    const canary = { ...rest, canary: (v: Parameters<typeof canaryPlain>[0]) => canaryPlain(v, tier) };
    try {
      await build({
        ...opts,
        beforeBuild: async (copyRoot, kdir) => (await decryptSources(copyRoot, kdir, canary)).length,
      });
    } catch (other) {
      const shown = redactDifference(message, other instanceof Error ? other.message : String(other));
      // No cause: the original message is what this error exists to hide.
      return isUserError(err) ? new UserError(shown) : new Error(shown);
    }
  }
  return new UserError(
    `the build failed with the values decrypted from ${files.join(', ')}, and builds with stand-ins for ` +
      "them: the failure depends on the secrets' text, and kustomize's message is not shown, as it may quote them",
  );
}

/**
 * Marks what the canary build found: every differing field by object index (`addPaths`); in an
 * untrusted tree, where the tree chose what is hashed and copied, also the text of derived names,
 * namespaces and keys (given to `secret`, so every published surface hides it), and a refusal when
 * one is too short to hide. A trusted tree's names stay readable, as kustomize-controller shows them.
 */
export function markDerived(
  derived: DerivedFields,
  real: BuildResult,
  untrusted: boolean,
  addPaths: (index: number, paths: string[]) => void,
  secret: (value: string) => void,
): void {
  derived.paths.forEach((p, i) => {
    if (p.length > 0) addPaths(i, p);
  });
  if (!untrusted) return;
  derived.tokens.forEach(secret);
  const short = derived.unhidable[0];
  if (short === undefined) return;
  const obj = real.objects[short.index];
  const file = obj === undefined ? undefined : real.origins.get(objectKey(obj));
  // Neither the name nor the key is written here: it is the secret's text.
  throw new UserError(
    `${obj?.kind ?? 'an object'} number ${short.index + 1} of the build${file === undefined ? '' : ` (${file})`}: ` +
      `${short.field} is made from a decrypted value and is under 4 characters, too short to hide; ` +
      'in a pull request, a decrypted value may fill in field values only, never a name, namespace or key',
  );
}
