/**
 * The build service: a Kustomization as this run builds it. Its spec as its parent's build makes it
 * (children.ts), its source (this checkout, or its own fetched or made once: source/fetched.ts, with
 * the settings that build that tree), rendered (render.ts), decrypted or not. One per run, for a
 * reconcile and for `build` alike; every caller (the render phase, children, claims, a preview's
 * foresight, a fan-out job's foresight of other jobs, `build`) goes through it, so that a build is
 * made once per run and "built from this checkout" has one answer.
 */
import type { ClusterClient } from '../cluster/client.js';
import type { SourcePlan, SourceVerdict } from '../flux/checkout.js';
import { canonicalJson } from '../flux/source-identity.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { BuildMemo } from '../kustomize/cache.js';
import type { Settings } from '../options/settings.js';
import { runSources, type FetchedSources } from '../source/fetched.js';
import { secretReader } from '../source/secret.js';
import { builtFrom, type BuiltFrom } from './built-from.js';
import { Children } from './children.js';
import { renderSpec, type RenderedSpec } from './render-spec.js';

/** Kustomizations reconciled (or built) at once, as kustomize-controller's default `--concurrent=4`. */
export const KUSTOMIZATIONS_AT_ONCE = 4;

export interface BuildsOptions {
  settings: Settings;
  /** Every Kustomization of the files (of the cluster), selected or not. */
  all: readonly KustomizationSpec[];
  /** The verdicts on the sources of the run's own Kustomizations (resolve.ts checkSources), by `namespace/name`. */
  sources: ReadonlyMap<string, SourceVerdict>;
  /** The action's cluster: substituteFrom, decryption and source Secrets are read from it; none for a `build` without one. */
  client?: ClusterClient;
  /** close() closes `client` too (a `build` that made its own). */
  ownsClient?: boolean;
  /** Every secret value met: credentials of the sources, and what rendering reads. */
  secret: (value: string) => void;
  /** What fetching a source says. */
  log: (line: string) => void;
  /** Judges the sources of Kustomizations, silently (resolve.ts checkSources); without it, those without a verdict are this checkout's. */
  judge?: (specs: readonly KustomizationSpec[]) => Promise<ReadonlyMap<string, SourceVerdict>>;
}

/** A Kustomization ready to render: its spec as its parent's build makes it, and the settings of its source's tree. */
export interface Prepared {
  spec: KustomizationSpec;
  settings: Settings;
  from: Exclude<BuiltFrom, { kind: 'other' }>;
  /** The parent (`namespace/name`) whose build gave the spec. */
  parent?: string;
  /** Why the parent the run was not given could not be built (the file is used as written). */
  unbuilt?: string;
}

/** Where a render tells its caller what it meets: secret values (to mask) and notes. */
export interface RenderHooks {
  secret?: (value: string) => void;
  note?: (line: string) => void;
}

/** One render of the run: its result, and the secret values and notes it made (for the callers after the first). */
interface Render {
  result: Promise<RenderedSpec>;
  secrets: string[];
  notes: string[];
}

export class Builds {
  readonly children: Children;
  private readonly fetched: FetchedSources;
  private readonly renders = new Map<string, Render>();
  private readonly froms = new Map<string, Promise<BuiltFrom>>();
  /**
   * kustomize's outputs this run, by the hash of their whole input (kustomize/cache.ts): a spec
   * rendered decrypted and not (its reconcile, a claim, its children) runs kustomize once when no
   * file was decrypted, and so does the same input under two specs.
   */
  readonly memo = new BuildMemo();

  /**
   * Use Builds.open. `others`: the verdicts on the sources of the Kustomizations the run does not
   * reconcile itself (a fan-out job's other jobs'), judged silently.
   */
  private constructor(
    private readonly opts: BuildsOptions,
    private readonly others: ReadonlyMap<string, SourceVerdict>,
  ) {
    const { settings, client } = opts;
    this.fetched = runSources(settings, {
      secret: opts.secret,
      ...(client ? { readSecret: secretReader(client) } : {}),
      log: opts.log,
    });
    // A parent is rendered for its children as its own reconcile would render it, without decryption
    // (a Kustomization object is not encrypted).
    this.children = new Children(
      settings.root,
      opts.all,
      (parent) => this.objects(parent, { decrypt: false }),
      (spec) => this.buildsHere(spec),
    );
  }

  /** The run's builds. The sources of Kustomizations without a verdict in `sources` are judged now, once. */
  static async open(opts: BuildsOptions): Promise<Builds> {
    const unjudged = opts.all.filter((s) => s.sourceRef !== undefined && !opts.sources.has(keyOf(s)));
    // When they cannot be judged, they are taken as this checkout's (as a job takes one without a verdict).
    const none: ReadonlyMap<string, SourceVerdict> = new Map();
    const others = unjudged.length === 0 || !opts.judge ? none : await opts.judge(opts.all).catch(() => none);
    return new Builds(opts, others);
  }

  /**
   * Whether `spec` is built from this checkout: the one test. By its source's verdict (the run's, or
   * for one of another job the verdict judged at open); one with no verdict (no spec.sourceRef, or a
   * Kustomization of the repository the run did not load) is this checkout's.
   */
  buildsHere(spec: KustomizationSpec): boolean {
    return (this.verdictOf(spec)?.kind ?? 'checkout') === 'checkout';
  }

  /** Where `spec` is built from, its tree fetched (once a run) when it is not this checkout; a failed fetch throws. */
  source(spec: KustomizationSpec): Promise<BuiltFrom> {
    const key = keyOf(spec);
    let from = this.froms.get(key);
    if (from === undefined) {
      const verdict = this.verdictOf(spec);
      const sources = new Map(verdict === undefined ? [] : [[key, verdict]]);
      from = builtFrom(this.opts.settings, spec, sources, this.fetched);
      this.froms.set(key, from);
    }
    return from;
  }

  /** `spec` as its parent's build makes it (children.ts); throws when that parent cannot be built. */
  asBuilt(spec: KustomizationSpec): ReturnType<Children['asBuilt']> {
    return this.children.asBuilt(spec);
  }

  /** `spec` as the run builds it: as its parent's build makes it, with the settings of its source; throws when it cannot be had. */
  async prepared(spec: KustomizationSpec): Promise<Prepared> {
    const built = await this.asBuilt(spec);
    const from = await this.source(built.spec);
    if (from.kind === 'other') throw new Error(`${describeSpec(built.spec)}: ${from.problem}`);
    return { ...built, settings: from.settings, from };
  }

  /**
   * `spec` (as given: pass a prepared one's spec) rendered with its source's settings, decrypted or
   * not: once a run for the same spec, whoever asks. The first caller hears the secret values and
   * notes as they come; later ones hear them once the render is done. `hooks.secret` must pass each
   * value on to the run's (a scoped registry does); without it values go to the run's directly.
   */
  async objects(spec: KustomizationSpec, opts: { decrypt: boolean }, hooks: RenderHooks = {}): Promise<RenderedSpec> {
    const from = await this.source(spec);
    if (from.kind === 'other') throw new Error(`${describeSpec(spec)}: ${from.problem}`);
    const key = renderKey(spec, from.settings, opts.decrypt);
    const known = this.renders.get(key);
    if (known === undefined) {
      const secrets: string[] = [];
      const notes: string[] = [];
      const sink = hooks.secret ?? this.opts.secret;
      const render = {
        secret: (value: string) => {
          secrets.push(value);
          sink(value);
        },
        note: (line: string) => {
          notes.push(line);
          hooks.note?.(line);
        },
      };
      const result = renderSpec(from.settings, spec, this.opts.client, render, {
        decrypt: opts.decrypt,
        memo: this.memo,
      });
      this.renders.set(key, { result, secrets, notes });
      return result;
    }
    try {
      return await known.result;
    } finally {
      if (hooks.secret) for (const value of known.secrets) hooks.secret(value);
      if (hooks.note) for (const line of known.notes) hooks.note(line);
    }
  }

  /** The notes fetching a source made (for the report of each Kustomization built from it). */
  notesOf(plan: SourcePlan): string[] {
    return this.fetched.notesOf(plan);
  }

  /** The fetched sources removed; the client closed when it is the builds' own. */
  async close(): Promise<void> {
    try {
      await this.fetched.cleanup();
    } finally {
      if (this.opts.ownsClient) this.opts.client?.close();
    }
  }

  private verdictOf(spec: KustomizationSpec): SourceVerdict | undefined {
    const key = keyOf(spec);
    return this.opts.sources.get(key) ?? this.others.get(key);
  }
}

const keyOf = (s: Pick<KustomizationSpec, 'namespace' | 'name'>) => `${s.namespace}/${s.name}`;

/** What a render depends on: the spec (whatever order its fields were read in), the tree, decryption. */
function renderKey(spec: KustomizationSpec, settings: Settings, decrypt: boolean): string {
  return canonicalJson([decrypt, settings.root, spec]);
}
