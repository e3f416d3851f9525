/**
 * The sources of one run (or one build) that are not this checkout: each fetched (or, for an
 * ExternalArtifact, made) once however many Kustomizations name it, and removed at the end; and the
 * settings a Kustomization is built with from such a tree.
 */
import { cp, lstat, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { FetchedPlan, IncludePlan, SourcePlan } from '../flux/checkout.js';
import { planIdentity } from '../flux/source-identity.js';
import { listTree } from '../kustomize/copy.js';
import { copySource } from '../kustomize/source.js';
import { ConfinementError, confinedPath, escapingLink } from '../util/confine.js';
import type { Settings } from '../options/settings.js';
import { scratchDir } from '../util/scratch.js';
import { generateArtifact, type ArtifactInput } from './artifact.js';
import { ExtractBudget } from './budget.js';
import { fetchBucket } from './bucket.js';
import { fetchGitRepository, redactUrl, type Fetched } from './git.js';
import { guardedFetchers, hopChecker, type Fetchers } from './guarded.js';
import { cappedTimeout } from './tree-timeout.js';
import { sourceName } from './trust.js';
import { fetchOCIRepository } from './oci.js';

export type { Fetchers } from './guarded.js';

/**
 * A fetched or made source tree, with the revision of the source it came from when there is one.
 * `artifact`: the tree already is what Flux stores (a Bucket's objects, an OCI layer kept as it is
 * with `operation: copy`, a made ExternalArtifact), so nothing in it is left out by `.sourceignore`
 * or Flux's default exclusions; a Git tree, or an extracted OCI layer, is filtered as
 * source-controller archives it.
 */
export type SourceTree = Fetched & { originRevision?: string; artifact?: boolean };

/** `GitRepository flux-system/podinfo`, for messages and reports. */
export function describePlan(plan: SourcePlan): string {
  if (plan.kind === 'checkout') return 'this checkout';
  if (plan.kind === 'ExternalArtifact') return `ExternalArtifact ${plan.namespace}/${plan.name}`;
  if (plan.kind === 'GitRepository' && plan.checkout) {
    return `GitRepository ${plan.def.namespace}/${plan.def.name} (this checkout, with its spec.include)`;
  }
  return `${plan.kind} ${plan.def.namespace}/${plan.def.name}`;
}

/**
 * The cache key of a source: its whole definition (flux/source-identity.ts), never its name alone,
 * so that two definitions of one name can never hand one Kustomization the other's tree.
 */
const keyOf = (plan: SourcePlan) => planIdentity(plan);

export class FetchedSources {
  private readonly trees = new Map<string, Promise<SourceTree>>();
  /** Source artifacts as an ArtifactGenerator reads them (a Git tree without what .sourceignore leaves out). */
  private readonly artifacts = new Map<string, Promise<Fetched>>();
  /** Notes on how a source was had (fetched without credentials, and why), by its sourceName. */
  private readonly notes = new Map<string, string>();

  constructor(
    private readonly opts: {
      fetchers: Fetchers;
      /** The run's budget for extracted files, shared by its fetchers and the ArtifactGenerators it runs. */
      budget?: ExtractBudget;
      /** This checkout: its root and revision. */
      checkout: { root: string; revision?: string };
      log: (line: string) => void;
    },
  ) {}

  get(plan: FetchedPlan): Promise<SourceTree> {
    const key = keyOf(plan);
    let tree = this.trees.get(key);
    if (tree === undefined) {
      tree = this.fetch(plan);
      this.trees.set(key, tree);
    }
    return tree;
  }

  private fetch(plan: FetchedPlan): Promise<SourceTree> {
    const { fetchers, log } = this.opts;
    switch (plan.kind) {
      case 'GitRepository':
        return this.git(plan);
      case 'OCIRepository':
        log(`Fetching OCIRepository ${plan.def.namespace}/${plan.def.name} (${redactUrl(plan.def.url)})`);
        return fetchers.OCIRepository(plan.def).then((t) => ({ ...t, artifact: t.filtered === false }));
      case 'Bucket':
        log(`Fetching Bucket ${plan.def.namespace}/${plan.def.name} (${plan.def.endpoint}/${plan.def.bucketName})`);
        return fetchers.Bucket(plan.def).then((t) => ({ ...t, artifact: true }));
      case 'ExternalArtifact':
        return this.make(plan);
    }
  }

  /**
   * A GitRepository's tree: fetched, or, for this checkout with a spec.include, a copy of it; with
   * each included repository's artifact (its `fromPath`) added at `toPath`, as source-controller
   * composes the artifact before it archives it with the including repository's ignore rules.
   */
  private async git(plan: Extract<FetchedPlan, { kind: 'GitRepository' }>): Promise<SourceTree> {
    const { def } = plan;
    const name = `GitRepository ${def.namespace}/${def.name}`;
    let tree: Fetched;
    if (plan.checkout) {
      this.opts.log(`Copying this checkout (${name}) to add what its spec.include names`);
      const copy = await copied(this.opts.checkout.root, 'kr-include-', true);
      tree = { ...copy, revision: this.opts.checkout.revision ?? 'unknown' };
    } else {
      this.opts.log(`Fetching ${name} (${redactUrl(def.url)})`);
      tree = await this.opts.fetchers.GitRepository(def);
    }
    try {
      for (const [index, inc] of (plan.include ?? []).entries()) {
        const from = await this.artifactOf(inc.source);
        await addInclude(from.root, inc, tree.root, { file: def.file, index }).catch((err: unknown) => {
          // A refusal of a path already names the file and the field.
          if (err instanceof ConfinementError)
            throw new ConfinementError(err.ref, err.entry, `${err.problem} (in ${name})`, err.through);
          throw new Error(
            `${name} (${def.file}) spec.include of GitRepository ${def.namespace}/${inc.name}: ${(err as Error).message}`,
            { cause: err },
          );
        });
      }
    } catch (err) {
      await tree.cleanup();
      throw err;
    }
    return tree;
  }

  /** An ExternalArtifact, made from its generator's sources. */
  private async make(plan: Extract<FetchedPlan, { kind: 'ExternalArtifact' }>): Promise<SourceTree> {
    const inputs: Record<string, ArtifactInput> = {};
    for (const [alias, input] of Object.entries(plan.inputs)) {
      const tree = await this.artifactOf(input).catch((err: unknown) => {
        throw new Error(
          `making ExternalArtifact ${plan.namespace}/${plan.name} failed: its source @${alias} (${describePlan(input)}) could not be had: ${(err as Error).message}`,
          { cause: err },
        );
      });
      inputs[alias] = tree;
    }
    const g = plan.generator;
    this.opts.log(
      `Making ExternalArtifact ${plan.namespace}/${plan.name} with ArtifactGenerator ${g.namespace}/${g.name} (${g.file})`,
    );
    return { ...(await generateArtifact(g, plan.name, inputs, this.opts.budget)), artifact: true };
  }

  /**
   * A source's artifact as a generator copies from it: a Git tree (this checkout or a fetched
   * GitRepository) or an extracted OCI layer without what its `.sourceignore` files and Flux's
   * default exclusions leave out, as source-controller archives it; an artifact tree as it is.
   */
  private artifactOf(plan: SourcePlan): Promise<ArtifactInput> {
    const key = keyOf(plan);
    let artifact = this.artifacts.get(key);
    if (artifact === undefined) {
      artifact = (async () => {
        const from: SourceTree =
          plan.kind === 'checkout'
            ? {
                root: this.opts.checkout.root,
                revision: this.opts.checkout.revision ?? 'unknown',
                cleanup: () => Promise.resolve(),
              }
            : await this.get(plan);
        if (from.artifact === true)
          return { root: from.root, revision: from.revision, cleanup: () => Promise.resolve() };
        return { ...(await copied(from.root, 'kr-artifact-src-', false)), revision: from.revision };
      })();
      this.artifacts.set(key, artifact);
    }
    return artifact.then((a) => ({ root: a.root, revision: a.revision }));
  }

  noteFor(source: string, note: string): void {
    this.notes.set(source, note);
  }

  /** The notes on the sources `plan` was had from (an ExternalArtifact's inputs too). */
  notesOf(plan: SourcePlan): string[] {
    const out: string[] = [];
    const visit = (p: SourcePlan): void => {
      if (p.kind === 'checkout') return;
      if (p.kind === 'ExternalArtifact') {
        for (const input of Object.values(p.inputs)) visit(input);
        return;
      }
      const note = this.notes.get(sourceName(p.kind === 'GitRepository' ? { kind: p.kind, ...p.def } : p.def));
      if (note !== undefined && !out.includes(note)) out.push(note);
      if (p.kind === 'GitRepository') for (const inc of p.include ?? []) visit(inc.source);
    };
    visit(plan);
    return out;
  }

  async cleanup(): Promise<void> {
    for (const tree of [...this.trees.values(), ...this.artifacts.values()]) {
      await tree.then((t) => t.cleanup()).catch(() => undefined);
    }
  }
}

/**
 * A copy of the tree at `root` in a new scratch directory: as source-controller archives a Git tree
 * (without what its `.sourceignore` files and Flux's default exclusions leave out), or, for an
 * `artifact`, everything but `.git`.
 */
async function copied(
  root: string,
  prefix: string,
  artifact: boolean,
): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const { dir, remove } = await scratchDir(prefix);
  try {
    await copySource(root, dir, join(dir, 'src'), artifact);
  } catch (err) {
    await remove();
    throw err;
  }
  return { root: join(dir, 'src'), cleanup: remove };
}

/**
 * `settings` for a Kustomization built from `tree`: its root, its revision as the run's (and the
 * origin revision a generated artifact records).
 */
export function settingsFor(settings: Settings, tree: SourceTree, plan: FetchedPlan): Settings {
  return {
    ...settings,
    root: tree.root,
    run: {
      ...settings.run,
      revision: tree.revision,
      sourceRef: describePlan(plan),
      ...(tree.artifact === true ? { artifact: true } : {}),
      ...(tree.originRevision !== undefined ? { originRevision: tree.originRevision } : {}),
    },
  };
}

/**
 * The sources of a run with `settings`: git's fetcher with the git-credentials input, and the
 * others; each source's address checked first (address.ts, guarded.ts) and its credentials
 * given only as the trust rule allows (trust.ts): otherwise it is fetched anonymously, with a note.
 */
export function runSources(
  settings: Settings,
  opts: {
    secret: (value: string) => void;
    readSecret?: (namespace: string, name: string) => Promise<Record<string, string>>;
    log: (line: string) => void;
  },
): FetchedSources {
  /** The run's budget for extracted files: every git checkout, OCI layer, Bucket and ArtifactGenerator of the run. */
  const budget = new ExtractBudget();
  /** A source's spec.timeout, capped in an untrusted run (tree-timeout.ts). */
  const timeoutOf = (def: { timeoutMs?: number }): { timeoutMs?: number } => {
    const ms = cappedTimeout(def.timeoutMs, settings);
    return ms !== undefined ? { timeoutMs: ms } : {};
  };
  /** The fetchers with every credential the run has, or (`anonymous`: why) with none. */
  const fetchersWith = (anonymous?: string): Fetchers => {
    const shared = {
      secret: opts.secret,
      ...(opts.readSecret && anonymous === undefined ? { readSecret: opts.readSecret } : {}),
      ...(anonymous !== undefined ? { anonymous } : {}),
    };
    return {
      GitRepository: (def) =>
        fetchGitRepository(def, {
          // In an untrusted tree, redirects could lead past the address rule: not followed.
          followRedirects: settings.untrustedTree === undefined,
          credentials: anonymous === undefined ? settings.gitCredentials : {},
          ...shared,
          budget,
          ...timeoutOf(def),
        }),
      OCIRepository: (def) =>
        fetchOCIRepository(def, {
          checkUrl: hopChecker(def, settings.allowPrivateSourceHosts),
          credentials: anonymous === undefined ? settings.registryCredentials : {},
          ...(settings.github.token && anonymous === undefined ? { githubToken: settings.github.token } : {}),
          ...shared,
          log: opts.log,
          budget,
          ...timeoutOf(def),
        }),
      Bucket: (def) =>
        fetchBucket(def, {
          ...shared,
          env: anonymous === undefined ? settings.env : {},
          log: opts.log,
          budget,
          ...timeoutOf(def),
        }),
    };
  };
  const sources: FetchedSources = new FetchedSources({
    fetchers: guardedFetchers(settings, fetchersWith, (def, why) => {
      const line = `${sourceName(def)} is fetched without credentials: ${why}`;
      opts.log(line);
      sources.noteFor(sourceName(def), line);
    }),
    budget,
    checkout: { root: settings.root, ...(settings.run.revision ? { revision: settings.run.revision } : {}) },
    log: opts.log,
  });
  return sources;
}

/** A relative path inside a root as components, or undefined when it would leave the root. */
function inside(path: string): string[] | undefined {
  const out: string[] = [];
  for (const c of path.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(c);
  }
  return out;
}

/**
 * Copies `fromPath` of an included artifact to `toPath` of the including tree. As in
 * source-controller, which moves the directory into place, `toPath` must not hold anything yet.
 */
export async function addInclude(
  included: string,
  inc: Pick<IncludePlan, 'fromPath' | 'toPath'>,
  root: string,
  where: { file: string; index: number } = { file: '', index: 0 },
): Promise<void> {
  const from = inside(inc.fromPath);
  const to = inside(inc.toPath);
  if (from === undefined) throw new Error(`fromPath ${JSON.stringify(inc.fromPath)} leaves the included repository`);
  if (to === undefined || to.length === 0) {
    throw new Error(`toPath ${JSON.stringify(inc.toPath)} must name a directory inside the repository`);
  }
  const field = (name: string) => ({ file: where.file, field: `spec.include[${where.index}].${name}` });
  // Both ends with symlinks followed: a link in the included tree (`l -> /`) must not make the copy
  // read the runner's files, nor one in the including tree make it write outside.
  const source = await confinedPath(included, inc.fromPath, field('fromPath'));
  if ((await stat(source).catch(() => undefined)) === undefined) {
    throw new Error(`fromPath ${JSON.stringify(inc.fromPath)} does not exist in the included repository's artifact`);
  }
  const target = await confinedPath(root, inc.toPath, field('toPath'));
  const there = await lstat(target).catch(() => undefined);
  if (there !== undefined && (!there.isDirectory() || (await readdir(target)).length > 0)) {
    throw new Error(`toPath ${JSON.stringify(inc.toPath)} already exists in the including repository`);
  }
  await mkdir(dirname(target), { recursive: true });
  await cp(source, target, { recursive: true, verbatimSymlinks: true });
  // The links copied keep their targets, now judged from their new place: one that leaves the
  // including tree there is refused (and the tree, with the copy, removed by the caller).
  const realRoot = await realpath(root);
  const copied = relative(realRoot, target).split(sep);
  // `source` is a real path (links resolved), so `target` is a file or a directory, never a link.
  const links = (await lstat(target)).isDirectory()
    ? (await listTree(target, () => false)).filter((e) => e.type === 'symlink').map((e) => e.path)
    : [];
  for (const link of links) {
    const escape = await escapingLink(realRoot, [...copied, ...link]);
    if (escape !== undefined) {
      throw new ConfinementError(
        field('fromPath'),
        inc.fromPath,
        `holds the symlink ${JSON.stringify([...from, ...link].join('/'))}, which at toPath ${JSON.stringify(inc.toPath)} ${escape.problem}`,
        escape.through,
      );
    }
  }
}
