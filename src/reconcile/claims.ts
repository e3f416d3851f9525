/**
 * Which Kustomization of the run builds an object: what lets a run see a move. Flux reconciles each
 * Kustomization alone, so an object moved from one Kustomization's path to another's is pruned by
 * the one it left (or kept by an owner-label check, depending on which runs first). This run has
 * every Kustomization file of the repository: before a Kustomization deletes what left its build,
 * it asks here whether another one on the same cluster builds it now. Builds this run made are
 * used as they are; the others are rendered once, on demand (without decryption: only names count;
 * by the run's build service, builds.ts), whatever order the Kustomizations run in, in one job or in
 * fan-out jobs. What is kept here is each build's ids.
 */
import type { KustomizationSpec } from '../flux/types.js';
import type { KubeObject } from '../objects/kube.js';
import type { Entry } from '../objects/id.js';
import { entryOfObject } from '../inventory/session.js';
import { mapLimit } from '../util/concurrency.js';

const keyOf = (s: Pick<KustomizationSpec, 'namespace' | 'name'>) => `${s.namespace}/${s.name}`;

/** A Kustomization's build as ids (inventory ids, without version), or why it could not be read. */
type Build = { ids: ReadonlySet<string> } | { error: string };

/** What the other Kustomizations say about some objects. */
export interface ClaimAnswer {
  /** Entry id → the Kustomization (`namespace/name`) whose build has it now. */
  claimed: Map<string, string>;
  /** Kustomizations on the same cluster whose build could not be read, with why: they may have any of the rest. */
  unread: { kustomization: string; error: string }[];
}

/** Two specs reconcile into the same cluster: both the run's, or both the same kubeConfig. */
export function sameTarget(
  a: Pick<KustomizationSpec, 'kubeConfig'>,
  b: Pick<KustomizationSpec, 'kubeConfig'>,
): boolean {
  return JSON.stringify(a.kubeConfig ?? null) === JSON.stringify(b.kubeConfig ?? null);
}

/** The ids an inventory would record for `objects`. */
export const idsOf = (objects: readonly KubeObject[]): Set<string> => new Set(objects.map((o) => entryOfObject(o).id));

export class Claims {
  private readonly builds = new Map<string, Promise<Build>>();

  constructor(
    private readonly all: readonly KustomizationSpec[],
    /**
     * Renders a Kustomization as its reconcile would (the objects it would apply); undefined for one
     * that claims nothing here (built from another source than this checkout).
     */
    private readonly renderObjects: (spec: KustomizationSpec) => Promise<readonly KubeObject[] | undefined>,
    /** How many on-demand renders run at once. */
    private readonly concurrency = 2,
  ) {}

  /** The objects a reconcile of `spec` rendered: later questions read them instead of rendering again. */
  record(spec: Pick<KustomizationSpec, 'namespace' | 'name'>, objects: readonly KubeObject[]): void {
    this.builds.set(keyOf(spec), Promise.resolve({ ids: idsOf(objects) }));
  }

  /**
   * Which of `entries` another Kustomization (not `owner`) on `owner`'s cluster builds now. Builds
   * not read yet are rendered, and stop once every entry is claimed.
   */
  async claimants(
    owner: Pick<KustomizationSpec, 'namespace' | 'name' | 'kubeConfig'>,
    entries: readonly Entry[],
  ): Promise<ClaimAnswer> {
    const answer: ClaimAnswer = { claimed: new Map(), unread: [] };
    if (entries.length === 0) return answer;
    const others = this.all.filter((s) => keyOf(s) !== keyOf(owner) && sameTarget(s, owner));
    // The builds already at hand first: a move between Kustomizations of one run needs no render.
    const known = others.filter((s) => this.builds.has(keyOf(s)));
    const rest = others.filter((s) => !this.builds.has(keyOf(s)));
    const ask = async (spec: KustomizationSpec) => {
      if (entries.every((e) => answer.claimed.has(e.id))) return;
      const build = await this.buildOf(spec);
      if ('error' in build) {
        answer.unread.push({ kustomization: keyOf(spec), error: build.error });
        return;
      }
      for (const e of entries)
        if (!answer.claimed.has(e.id) && build.ids.has(e.id)) answer.claimed.set(e.id, keyOf(spec));
    };
    for (const spec of known) await ask(spec);
    await mapLimit(rest, this.concurrency, ask);
    answer.unread.sort((a, b) => a.kustomization.localeCompare(b.kustomization));
    return answer;
  }

  private buildOf(spec: KustomizationSpec): Promise<Build> {
    const key = keyOf(spec);
    let build = this.builds.get(key);
    if (build === undefined) {
      build = this.renderObjects(spec).then(
        (objects): Build => ({ ids: idsOf(objects ?? []) }),
        (err: unknown): Build => ({ error: firstLine(err instanceof Error ? err.message : String(err)) }),
      );
      this.builds.set(key, build);
    }
    return build;
  }
}

const firstLine = (text: string) => {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
};
