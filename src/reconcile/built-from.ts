/**
 * Where a Kustomization is built from, for the run's build service (builds.ts: a run and `build`
 * alike): this checkout, or the tree of its own source, fetched or made once per run
 * (source/fetched.ts), with the settings a build of that tree takes.
 */
import type { SourceVerdict } from '../flux/checkout.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Settings } from '../options/settings.js';
import { describePlan, settingsFor, type FetchedSources, type SourceTree } from '../source/fetched.js';

export type BuiltFrom =
  /** This checkout, with the run's settings. */
  | { kind: 'checkout'; settings: Settings }
  /** A source that cannot be had: the Kustomization fails, and is never built from this checkout instead. */
  | { kind: 'other'; problem: string }
  /** Its own source's tree (`ref` names it), with the settings that build it. */
  | {
      kind: 'fetched';
      settings: Settings;
      ref: string;
      tree: SourceTree;
      verdict: Extract<SourceVerdict, { kind: 'fetch' }>;
    };

/** The verdict on `spec`'s source (sources: by `namespace/name`), its tree fetched when it is not this checkout; a failed fetch throws. */
export async function builtFrom(
  settings: Settings,
  spec: KustomizationSpec,
  sources: ReadonlyMap<string, SourceVerdict>,
  fetched: FetchedSources,
): Promise<BuiltFrom> {
  const verdict = sources.get(`${spec.namespace}/${spec.name}`);
  if (verdict?.kind === 'other') return { kind: 'other', problem: verdict.problem };
  if (verdict?.kind !== 'fetch') return { kind: 'checkout', settings };
  const tree = await fetched.get(verdict.source);
  return {
    kind: 'fetched',
    settings: settingsFor(settings, tree, verdict.source),
    ref: describePlan(verdict.source),
    tree,
    verdict,
  };
}
