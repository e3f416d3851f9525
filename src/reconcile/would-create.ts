/**
 * What each Kustomization of a preview sees as "would be created" (issue 34). A preview writes
 * nothing, so an object in a Namespace that another Kustomization of the run would create cannot be
 * dry-run. What a Kustomization sees must not depend on which of its siblings happened to plan
 * first, so each gets a view of its own when it starts:
 *
 * - what its dependencies, directly or not, would create: they have all finished by then (the
 *   graph runner starts it after them), so their views are complete;
 * - what its own earlier stages would create (apply.ts adds to the view as it plans);
 * - never what a Kustomization it does not depend on adds concurrently. Where its dry-run finds the
 *   Namespace missing, `foresee` tells which other Kustomizations of the run would create it, from
 *   their builds (made by the run's build service, once a run, and only then): the object is
 *   planned with a note saying so (under Flux it fails until that one has been applied, then
 *   succeeds on a retry; when that one is its parent, which applies it, the Namespace exists
 *   first), or, when only its own dependants would create it, fails with a hint (Flux would never
 *   get there).
 */
import type { KustomizationSpec } from '../flux/types.js';
import type { Created, Foreseen } from '../ssa/apply.js';
import { mapLimit } from '../util/concurrency.js';
import type { Logger, RunContext } from './context.js';

const keyOf = (s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`;

/** Builds of other Kustomizations at once while foreseeing. */
const FORESEE_CONCURRENCY = 2;

export class PreviewViews {
  /** Each started Kustomization's view, by `namespace/name`: complete once it has finished. */
  private readonly views = new Map<string, Map<string, Created>>();
  /** The Kustomizations whose build a foresight asked for (the run's build service renders each once). */
  private readonly asked = new Set<string>();

  constructor(
    private readonly ctx: RunContext,
    /** This job's Kustomizations by `namespace/name`. */
    private readonly specs: ReadonlyMap<string, KustomizationSpec>,
    /** Whether a Kustomization is built from this checkout (others are not foreseen). */
    private readonly fromCheckout: (spec: KustomizationSpec) => boolean,
  ) {}

  /**
   * The view of `spec` as it starts (its RunContext's wouldCreate): a copy of what its dependencies
   * would create, by cluster, and on the run's cluster the foresight of the others.
   */
  viewOf(spec: KustomizationSpec, log: Logger): Map<string, Created> {
    const view = new Map<string, Created>();
    const deps = this.dependencies(spec);
    for (const dep of [...deps].sort()) {
      for (const [server, created] of this.views.get(dep) ?? []) {
        const into = view.get(server) ?? { namespaces: new Set(), kinds: new Set() };
        for (const n of created.namespaces) into.namespaces.add(n);
        for (const k of created.kinds) into.kinds.add(k);
        view.set(server, into);
      }
    }
    if (spec.kubeConfig === undefined) {
      const server = this.ctx.client.server;
      const own = view.get(server) ?? { namespaces: new Set(), kinds: new Set() };
      const foreseen = new Map<string, Promise<Foreseen>>();
      own.foresee = (namespace) => {
        let answer = foreseen.get(namespace);
        if (answer === undefined) {
          answer = this.foresee(spec, deps, namespace, log);
          foreseen.set(namespace, answer);
        }
        return answer;
      };
      view.set(server, own);
    }
    this.views.set(keyOf(spec), view);
    return view;
  }

  /** The Kustomizations of this job `spec` depends on, directly or not. */
  private dependencies(spec: KustomizationSpec): Set<string> {
    const seen = new Set<string>();
    const visit = (s: KustomizationSpec) => {
      for (const d of s.dependsOn) {
        const key = keyOf(d);
        const next = this.specs.get(key);
        if (!next || seen.has(key)) continue;
        seen.add(key);
        visit(next);
      }
    };
    visit(spec);
    return seen;
  }

  /** Which Kustomizations of this job, other than `spec` and its dependencies, would create `namespace`. */
  private async foresee(
    spec: KustomizationSpec,
    deps: ReadonlySet<string>,
    namespace: string,
    log: Logger,
  ): Promise<Foreseen> {
    const self = keyOf(spec);
    const candidates = [...this.specs.values()]
      .filter((s) => {
        const key = keyOf(s);
        return key !== self && !deps.has(key) && s.kubeConfig === undefined && this.fromCheckout(s);
      })
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    const unbuilt = candidates.filter((s) => !this.asked.has(keyOf(s))).length;
    if (unbuilt > 0)
      log.info(
        `Namespace ${namespace} does not exist: building ${unbuilt} other Kustomization(s) to see which would create it`,
      );
    // The parent whose build is this Kustomization's object (children.ts) applies it: under Flux, after its Namespaces.
    const parent = await this.ctx.children?.parentOf(spec).then(
      (p) => (p ? keyOf(p.spec) : undefined),
      () => undefined,
    );
    const holds = await mapLimit(candidates, FORESEE_CONCURRENCY, async (s) => ({
      key: keyOf(s),
      creates: (await this.namespacesOf(s)).has(namespace),
      dependant: this.dependencies(s).has(self),
    }));
    const creators = holds.filter((h) => h.creates);
    return {
      parents: creators.filter((h) => h.key === parent).map((h) => h.key),
      independent: creators.filter((h) => h.key !== parent && !h.dependant).map((h) => h.key),
      dependants: creators.filter((h) => h.key !== parent && h.dependant).map((h) => h.key),
    };
  }

  /** The Namespaces in the build of `spec`, built without decryption (none when it cannot be built). */
  private async namespacesOf(spec: KustomizationSpec): Promise<ReadonlySet<string>> {
    this.asked.add(keyOf(spec));
    const builds = this.ctx.builds;
    if (builds === undefined) return new Set();
    try {
      // A child as its parent's build has it, when the run knows its parent (children.ts).
      const built = await builds.asBuilt(spec).then(
        (b) => b.spec,
        () => spec,
      );
      const { objects } = await builds.objects(built, { decrypt: false });
      return new Set(
        objects.filter((o) => o.kind === 'Namespace' && o.apiVersion === 'v1').map((o) => o.metadata.name),
      );
    } catch {
      return new Set();
    }
  }
}
