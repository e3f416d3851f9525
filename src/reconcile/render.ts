/**
 * The render phase: the Kustomization rendered by the run's build service (builds.ts, render-spec.ts:
 * kustomize with Flux's spec fields, SOPS decryption, postBuild substitution and commonMetadata), then
 * the objects as they are sent (Flux's normalisation, the owner labels).
 */
import { objectKey, subjectOf, type KubeObject } from '../objects/kube.js';
import type { Settings } from '../options/settings.js';
import { normalizeForApply } from '../ssa/normalize.js';
import { setOwnerLabels } from '../ssa/policy.js';
import { stillEncrypted } from '../sops/resources.js';
import { SopsError } from '../sops/types.js';
import type { SecretPaths } from '../substitute/provenance.js';
import type { KustomizationContext } from './context.js';
import { renderSpec } from './render-spec.js';

/** One Kustomization rendered for the apply: the objects as they are sent, and where each came from. */
export interface Rendered {
  objects: KubeObject[];
  /** Each object's source file, keyed by subject (for annotations). */
  origins: Map<string, string>;
  /** When kustomize did not name every object's file: builds again to learn them (BuildResult.traceOrigins). */
  traceOrigins?: () => Promise<Map<string, string>>;
  secretPaths: SecretPaths;
  /** The values of the substituteFrom ConfigMaps: redacted from API errors too (RenderedSpec). */
  substitutedFrom?: readonly string[];
}

/** The render phase of a reconcile: the spec rendered (once a run, builds.ts), then the objects as Flux sends them. */
export async function render(
  ctx: Pick<KustomizationContext, 'settings' | 'spec' | 'management' | 'note' | 'children' | 'builds'>,
  /** Where the secret values rendering meets go (the Kustomization's own registry). */
  secret: (value: string) => void,
): Promise<Rendered> {
  const { settings, spec, note, children, builds } = ctx;
  const hooks = { secret, note };
  const built = builds
    ? await builds.objects(spec, { decrypt: true }, hooks)
    : await renderSpec(settings, spec, ctx.management, hooks, { decrypt: true });
  let own = built.objects;
  if (children !== undefined) {
    const defined = own.filter((o) => children.defines(o));
    if (defined.length > 0) {
      const names = defined.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
      note(
        `${defined.length} child Kustomization(s) of this build are reconciled by this run from this build's ` +
          `objects, not written to the cluster: ${names.join(', ')}`,
      );
      own = own.filter((o) => !children.defines(o));
    }
  }
  const bySubject = (files: ReadonlyMap<string, string>) =>
    new Map(
      own.flatMap((o) => {
        const file = files.get(objectKey(o));
        return file === undefined ? [] : [[subjectOf(o), file] as const];
      }),
    );
  const origins = bySubject(built.origins);
  const trace = built.traceOrigins;
  const encrypted = stillEncrypted(own);
  if (encrypted.length > 0) throw new SopsError(encrypted.join('\n'));
  // As Flux sends them: its normalisation decides which fields our manager owns (src/ssa/normalize.ts).
  const objects = setOwnerLabels(normalizeForApply(own), spec.name, spec.namespace);
  if (built.missingComponents.length > 0) note(`Ignored missing component(s): ${built.missingComponents.join(', ')}`);
  if (built.cached)
    note("kustomize's output kept in build-cache for exactly this input was used: kustomize did not run");
  return {
    objects,
    origins,
    ...(trace ? { traceOrigins: () => trace().then(bySubject) } : {}),
    secretPaths: built.secretPaths,
    ...(built.substitutedFrom ? { substitutedFrom: built.substitutedFrom } : {}),
  };
}

/**
 * Why a SOPS file could not be decrypted when the run is for a pull request from a fork: said once,
 * after the error that names the file and the key.
 */
export function forkHint(settings: Pick<Settings, 'fork'>, err: unknown): string {
  if (!settings.fork || !(err instanceof SopsError)) return '';
  return (
    '\nNot decrypted because this pull request comes from a fork: GitHub gives its workflows no secrets ' +
    '(no SOPS key inputs, no cluster credentials to read a decryption Secret with). Its encrypted files are ' +
    "previewed once the change is on a branch of this repository; to post a fork's preview, see " +
    'docs/reference/fork-pull-requests.md (its report file, posted by a workflow_run workflow with mode: report).'
  );
}
