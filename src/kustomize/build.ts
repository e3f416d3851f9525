/**
 * Building one Kustomization with the real kustomize. The steps live beside this file: source.ts
 * (the temporary copy), kustomization.ts (the kustomization file, generated and merged), confine.ts
 * (keeping every read inside the copy), invoke.ts (running kustomize and reading its output) and
 * paths.ts (paths inside the source root).
 */
import { realpath, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { KubeObject } from '../objects/kube.js';
import { checkReferences, dropEscapingLinks, localiseReferences } from './confine.js';
import { kustomizeEnv, readOutput, runKustomize } from './invoke.js';
import { prepareKustomization, type SpecFields } from './kustomization.js';
import { PathError, resolveInsideRoot } from './paths.js';
import { buildOverlay, specIsOverlay } from './overlay.js';
import { buildPlain, kustomizeFound, specIsPlain } from './plain.js';
import { DEFAULT_LIMITS, type ProcessLimits } from './run.js';
import { buildKey, cacheDirOf, outputOf, type BuildMemo } from './cache.js';
import { buildReads, type Reads } from './reads.js';
import { copyNeedsOrigins } from './origins-needed.js';
import { copySource } from './source.js';
import { scratchDir } from '../util/scratch.js';

export { kustomizeEnv } from './invoke.js';
export { kustomizationFromText } from './kustomization.js';
export { PathError, resolveInsideRoot } from './paths.js';

export interface BuildOptions extends SpecFields {
  /** The source root (the workspace); `path` is relative to it and may not leave it. */
  root: string;
  /** Directory to build, relative to `root`. */
  path: string;
  /**
   * `root` is a source artifact as Flux stores it (an OCIRepository's or Bucket's content, a made
   * ExternalArtifact): nothing in it is left out, where a Git tree loses what `.sourceignore` and
   * source-controller's default exclusions leave out.
   */
  artifact?: boolean;
  /** The kustomize binary: a path, or a name looked up on PATH. */
  kustomizeBin: string;
  /** Allow `resources`/`components` that kustomize would fetch over the network (off by default). */
  allowRemoteBases?: boolean;
  /**
   * Runs on the temporary copy just before kustomize (SOPS decryption of generator files); returns
   * how many files it decrypted (a build with any is never cached).
   */
  beforeBuild?: (copyRoot: string, kdir: string) => Promise<number>;
  /**
   * A directory that keeps kustomize's output between runs (cache.ts), relative to `root` or
   * absolute, outside the source root; absent: every build runs kustomize.
   */
  cache?: string;
  /** The run's builds by the same key (cache.ts): the same input built once a run, cache or not. */
  memo?: BuildMemo;
  /** Time and memory kustomize (and what it starts) may use; DEFAULT_LIMITS when absent. */
  limits?: ProcessLimits;
  /**
   * Have kustomize name every object's file (origin annotations) whatever the tree holds; without it
   * only a tree that needs them up front asks (origins-needed.ts), the rest leave it to traceOrigins.
   */
  traceOrigins?: boolean;
  /**
   * Build a plain directory (plain.ts) or a kustomization of the common fields (overlay.ts) without
   * kustomize where that is provably its answer (on by default); false always runs kustomize (the
   * differential tests compare the two).
   */
  plain?: boolean;
}

export interface BuildResult {
  objects: KubeObject[];
  /** Each object's source file relative to the root, by objectKey (absent for remote bases). */
  origins: Map<string, string>;
  /** True when `path` had no kustomization file and one was generated over its YAML files. */
  generated: boolean;
  /** Components dropped because they are missing and ignoreMissingComponents is set. */
  missingComponents: string[];
  /** kustomize's output came from the build cache (the same input as an earlier build). */
  cached?: true;
  /**
   * Set when kustomize ran without naming each object's file (origins then holds only what it named
   * anyway): builds the same again with origin annotations and gives every object's file, for a
   * failure's annotations. Costs a kustomize run.
   */
  traceOrigins?: () => Promise<Map<string, string>>;
}

/**
 * Builds one Kustomization with the real kustomize, the way kustomize-controller does: on a copy of
 * the source root (the user's files are never touched), with a kustomization generated over plain
 * YAML when there is none, Flux's spec fields merged into it. Flux loads files from anywhere inside
 * the source root; here every reference is checked to stay inside it, files from outside their
 * kustomization's directory are copied into it (see localiseReferences), and kustomize runs with
 * its load restrictor on, so that nothing it reads can lie outside the copy.
 */
export async function build(opts: BuildOptions): Promise<BuildResult> {
  const realRoot = await realpath(opts.root);
  const dir = await resolveInsideRoot(realRoot, opts.path);
  const relPath = relative(realRoot, dir) || '.';
  // Refused whether kustomize runs or not: a cache inside the root is a mistake for every build.
  const cache = opts.cache === undefined ? undefined : await cacheDirOf(opts.cache, realRoot);
  // kustomize's answer without running it, for a plain directory (plain.ts) or a kustomization of
  // the common fields (overlay.ts), each telling a directory of the other kind at a glance; neither
  // has generator or patch files for beforeBuild to decrypt.
  if (opts.plain !== false && specIsOverlay(opts) && (await kustomizeFound(opts.kustomizeBin))) {
    const answer = await inProcessOnce(opts, realRoot, relPath);
    if (answer !== undefined) return answer;
  }
  // The copy holds only what the build reads (reads.ts): in a repository of many Kustomizations, copying
  // the whole tree for each one costs more than kustomize. Should kustomize miss anything on that copy
  // (a file the reader does not know to follow), the build runs again on the whole tree, whose answer,
  // error or not, is the one given: the limited copy can only make a build fail, never change it.
  const reads = await buildReads(realRoot, relPath, opts.components).catch(() => undefined);
  if (reads !== undefined) {
    try {
      return await buildOnCopy(opts, realRoot, relPath, reads, cache);
    } catch {
      // Built again below on the whole tree, which says what is wrong if anything is.
    }
  }
  return buildOnCopy(opts, realRoot, relPath, undefined);
}

/**
 * The build without kustomize (plain.ts, overlay.ts), or undefined; once a run for one input when
 * the run shares a memo (a reconcile, a claim and a child's foresight ask for the same build), each
 * asker getting its own copy of the objects.
 */
async function inProcessOnce(opts: BuildOptions, realRoot: string, relPath: string): Promise<BuildResult | undefined> {
  const { memo } = opts;
  const fields: SpecFields = {
    targetNamespace: opts.targetNamespace,
    namePrefix: opts.namePrefix,
    nameSuffix: opts.nameSuffix,
    patches: opts.patches,
    images: opts.images,
    components: opts.components,
    ignoreMissingComponents: opts.ignoreMissingComponents,
    buildMetadata: opts.buildMetadata,
  };
  const key = memo === undefined ? undefined : JSON.stringify([realRoot, relPath, opts.artifact === true, fields]);
  let pending = key === undefined ? undefined : (memo!.inProcess.get(key) as Promise<BuildResult | undefined>);
  if (pending === undefined) {
    pending = inProcess(opts, realRoot, relPath);
    if (key !== undefined) memo!.inProcess.set(key, pending);
  } else {
    memo!.inProcessHits++;
  }
  const result = await pending;
  return result && { ...result, objects: structuredClone(result.objects), origins: new Map(result.origins) };
}

async function inProcess(opts: BuildOptions, realRoot: string, relPath: string): Promise<BuildResult | undefined> {
  if (specIsPlain(opts)) {
    const plain = await buildPlain(realRoot, relPath, opts.artifact === true);
    if (plain !== undefined) return { ...plain, generated: true, missingComponents: [] };
  }
  const overlay = await buildOverlay(realRoot, relPath, opts, opts.artifact === true);
  return overlay === undefined ? undefined : { ...overlay, missingComponents: [] };
}

/** build's kustomize run on a scratch copy of the source (only what `reads` lists, when given). */
async function buildOnCopy(
  opts: BuildOptions,
  realRoot: string,
  relPath: string,
  reads: Reads | undefined,
  cache?: string,
): Promise<BuildResult> {
  // A private scratch directory, removed below, so that decrypted files do not outlive a cancelled run.
  const { dir: work, remove } = await scratchDir('kr-build-');
  const copyRoot = join(work, 'src');
  try {
    await copySource(realRoot, work, copyRoot, opts.artifact === true, reads);
    const realCopyRoot = await realpath(copyRoot);
    const kdir = join(copyRoot, relPath);
    if (!(await stat(kdir).catch(() => undefined))?.isDirectory()) {
      throw new PathError(
        opts.path,
        "is excluded from the source by a .sourceignore pattern or Flux's default exclusions, as it would be from Flux's artifact; change the pattern or the path",
      );
    }
    // Origin annotations cost kustomize 16–42 % more CPU: asked for only when a consumer reads the files
    // of objects that built (origins-needed.ts); a failure's annotations trace the build again.
    const trace =
      opts.traceOrigins === true ||
      reads === undefined ||
      opts.allowRemoteBases === true ||
      (await copyNeedsOrigins(copyRoot));
    const { generated, addedOrigin, missingComponents } = await prepareKustomization(
      kdir,
      relPath,
      realCopyRoot,
      opts,
      trace,
    );
    await checkReferences(copyRoot, realCopyRoot, kdir, opts.allowRemoteBases ?? false, new Set());
    // Before anything reads the copy through a link: decryption in place, kustomize.
    await dropEscapingLinks(copyRoot);
    const decrypted = (await opts.beforeBuild?.(copyRoot, kdir)) ?? 0;
    const renamed = await localiseReferences(realCopyRoot, await realpath(kdir));

    const env = kustomizeEnv(process.env, opts.allowRemoteBases ?? false);
    // Only a build of the limited copy, of files as they are in Git, with nothing fetched.
    const keyed =
      (cache !== undefined || opts.memo !== undefined) &&
      reads !== undefined &&
      decrypted === 0 &&
      opts.allowRemoteBases !== true;
    const key = keyed ? await buildKey(opts.kustomizeBin, copyRoot, kdir, env) : undefined;
    const { text, cached } = await outputOf(key, { dir: cache, memo: opts.memo }, work, () =>
      runKustomize(opts.kustomizeBin, kdir, copyRoot, env, opts.limits ?? DEFAULT_LIMITS, renamed),
    );
    return {
      ...readOutput(text, relPath, renamed, addedOrigin),
      generated,
      missingComponents,
      ...(cached ? { cached } : {}),
      ...(trace
        ? {}
        : {
            traceOrigins: () =>
              buildOnCopy({ ...opts, traceOrigins: true }, realRoot, relPath, reads, cache).then((r) => r.origins),
          }),
    };
  } finally {
    await remove();
  }
}
