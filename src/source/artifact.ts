/**
 * An ExternalArtifact as source-watcher's ArtifactGenerator makes it, made here from local trees:
 * the artifact's copy operations run in order over its sources' artifacts (each a directory, by
 * alias) into an empty directory, with source-watcher's cp-like rules:
 * - `from` without glob characters names a file or a directory: a file goes to `to` (or into it when
 *   `to` ends with `/` or is an existing directory); a directory is copied as a subdirectory of `to`;
 * - a glob `from` is matched as Go's fs.Glob matches it (`**` is `*` there); a match is copied to `to`
 *   with its whole path, except that `dir/**` strips `dir/` (the way to copy a directory's contents);
 * - `exclude` patterns (doublestar) are matched against the path from the source root and from the
 *   glob's literal prefix, and a pattern without `/` against the file name too;
 * - strategy Merge deep-merges a YAML file into an existing destination (maps merged, lists
 *   replaced, as Helm merges values); Extract unpacks `.tar.gz`/`.tgz` files into `to`.
 * The result then loses what Flux's archive leaves out (VCS files and the default exclusions).
 *
 * The revision: `@alias` names a source's revision; otherwise `latest@sha256:<digest>` of the
 * content. Flux's digest is that of the tarball it stores, which depends on its gzip encoder; here
 * the digest is over the sorted `sha256(file)  path` lines, so the same content always gives the
 * same revision, but not Flux's bytes.
 */
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { yamlShapeProblem } from '../util/yaml-shape.js';
import type { ArtifactGeneratorDef, CopyOperation } from '../flux/source-defs.js';
import { listTree } from '../kustomize/copy.js';
import { DEFAULT_PATTERNS, isIgnored, readPatterns, VCS_PATTERNS } from '../kustomize/sourceignore.js';
import type { Fetched } from './git.js';
import { BadPattern, doublestarMatch, doublestarPattern, goGlob, hasGlob, type Listed } from './glob.js';
import { byBytes } from '../util/order.js';
import { confinedPath } from '../util/confine.js';
import { scratchDir } from '../util/scratch.js';
import { ExtractBudget } from './budget.js';
import { extractTarGz } from './tar.js';

/** A source's artifact, by alias: its tree and revision. */
export interface ArtifactInput {
  root: string;
  revision: string;
}

/** Made, with the revision of the source `originRevision` names, when it names one. */
export type Generated = Fetched & { originRevision?: string };

/**
 * The tree of `root` as Listed entries (symlinks left out: an artifact never holds them). Every file
 * a copy reads is one of these, so no read goes through a link; a path naming one is refused by
 * util/confine.ts, naming where it points.
 */
async function list(root: string): Promise<Listed[]> {
  return (await listTree(root, () => false))
    .filter((e) => e.type !== 'symlink')
    .map((e) => ({ path: e.path.join('/'), dir: e.type === 'dir' }));
}

/** `path` relative to `base` (both slash-separated, `.` for the root), or undefined when outside it. */
function relativeTo(base: string, path: string): string | undefined {
  if (base === '.' || base === '') return path;
  if (path === base) return '.';
  return path.startsWith(`${base}/`) ? path.slice(base.length + 1) : undefined;
}

/** Whether `path` is excluded by the operation's `exclude` patterns (see the module comment). */
export function excluded(path: string, base: string, patterns: readonly string[]): boolean {
  const test = (p: string) =>
    patterns.some((x) => doublestarMatch(x, p) || (!x.includes('/') && doublestarMatch(x, p.split('/').pop()!)));
  if (patterns.length === 0) return false;
  if (test(path)) return true;
  const rel = relativeTo(base, path);
  return rel !== undefined && rel !== '.' && rel !== path && test(rel);
}

/** The literal directory prefix of a glob (`.` when it starts with one). */
export function selectionRoot(pattern: string): string {
  const parts: string[] = [];
  for (const p of normalize(pattern).split('/')) {
    if (hasGlob(p)) break;
    parts.push(p);
  }
  return parts.length === 0 ? '.' : parts.join('/');
}

/** Go's filepath.Clean for a relative slash path (no `..` reaches above the root: refused earlier). */
function normalize(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return out.length === 0 ? '.' : out.join('/');
}

const join2 = (a: string, b: string) => normalize(`${a}/${b}`);

/** Where a glob match goes: `dir/**` strips `dir/`, any other glob keeps the match's whole path. */
export function globDestination(pattern: string, match: string, dest: string): string {
  if (pattern.endsWith('/**')) {
    const prefix = pattern.slice(0, -3);
    if (match.startsWith(`${prefix}/`)) return join2(dest, match.slice(prefix.length + 1));
  }
  return join2(dest, match);
}

/** Deep merge of YAML maps: maps merged key by key, anything else replaced by the overlay's. */
export function mergeMaps(base: Record<string, unknown>, overlay: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(overlay)) {
    const b = out[k];
    out[k] = isMap(v) && isMap(b) ? mergeMaps(b, v) : v;
  }
  return out;
}
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A YAML file's documents merged into one map (source-watcher reads multi-document files so). */
function yamlMap(text: string, file: string): Record<string, unknown> {
  let out: Record<string, unknown> = {};
  const shape = yamlShapeProblem(text, file);
  if (shape !== undefined) throw new Error(shape);
  for (const doc of parseAllDocuments(text, { logLevel: 'error' })) {
    if (doc.errors.length > 0) throw new Error(`${file} is not valid YAML: ${doc.errors[0]!.message}`);
    const v: unknown = doc.toJS({ maxAliasCount: 100 });
    if (v === null || v === undefined) continue;
    if (!isMap(v)) throw new Error(`${file} is not a YAML map, so it cannot be merged`);
    out = mergeMaps(out, v);
  }
  return out;
}

/** Limits on what one artifact may hold. */
const MAX_BYTES = 256 * 1024 * 1024;

/** Takes a file's bytes from the run's budget before it is written; `what` names it (`copy of @src/a.yaml`). */
type Charge = (bytes: number, files: number, what: string) => void;
/** The same for one copy operation's files, by their path in the source. */
type Take = (bytes: number, path: string) => void;

/** Runs one copy operation; throws source-watcher's reasons. */
async function applyCopy(
  op: CopyOperation,
  inputs: Readonly<Record<string, ArtifactInput>>,
  staging: string,
  charge: Charge,
): Promise<void> {
  const m = /^@([^/]+)\/(.*)$/.exec(op.from);
  if (!m) throw new Error(`source must be @alias/pattern`);
  const [, alias, rawPattern] = m as unknown as [string, string, string];
  if (!op.to.startsWith('@artifact/')) throw new Error(`destination must start with '@artifact/'`);
  const destRaw = op.to.slice('@artifact/'.length);
  if (destRaw.split('/').includes('..') || rawPattern.split('/').includes('..')) {
    throw new Error(`".." is not allowed in a copy path`);
  }
  const dest = normalize(destRaw);
  const src = inputs[alias];
  if (src === undefined) throw new Error(`source alias '${alias}' not found`);
  const take: Take = (bytes, path) => {
    charge(bytes, 1, `copy of @${alias}/${path}`);
  };
  const extract = (path: string) =>
    extractTo(src.root, path, staging, dest, (bytes, files) => {
      charge(bytes, files, `Extract of @${alias}/${path}`);
    });
  for (const x of op.exclude) {
    try {
      doublestarPattern(x);
    } catch (err) {
      throw new Error(`invalid exclude pattern '${x}'`, { cause: err });
    }
  }
  const entries = await list(src.root);
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const destIsDir = async (p: string) => (await stat(join(staging, p)).catch(() => undefined))?.isDirectory() === true;

  if (!hasGlob(rawPattern)) {
    const path = normalize(rawPattern);
    const entry = path === '.' ? { path: '.', dir: true } : byPath.get(path);
    if (entry === undefined) {
      // The listing holds no symlink nor what is below one: a path through a link out is refused as such.
      await confinedPath(src.root, path, { file: '', field: `copy from @${alias}` });
      throw new Error(`source '${path}' does not exist`);
    }
    if (entry.dir) {
      if (op.strategy === 'Extract')
        throw new Error(`extract strategy is not supported for directories, got '${path}'`);
      const name = path === '.' ? '' : path.split('/').pop()!;
      await copyDir(op, src.root, entries, path, staging, join2(dest, name), path, take);
      return;
    }
    if (excluded(path, '.', op.exclude)) return;
    if (op.strategy === 'Extract') {
      if (!isTarball(path)) throw new Error(`extract strategy requires tarball file (.tar.gz or .tgz), got '${path}'`);
      await extract(path);
      return;
    }
    const base = path.split('/').pop()!;
    const target = destRaw.endsWith('/') || destRaw === '' || (await destIsDir(dest)) ? join2(dest, base) : dest;
    await copyFileOp(op, src.root, path, staging, target, take);
    return;
  }

  let matches: string[];
  try {
    matches =
      op.strategy === 'Extract'
        ? entries.filter((e) => doublestarMatch(rawPattern, e.path)).map((e) => e.path)
        : goGlob(entries, rawPattern);
  } catch (err) {
    if (err instanceof BadPattern) {
      throw new Error(`invalid glob pattern '${rawPattern}': ${err.message}`, { cause: err });
    }
    throw err;
  }
  if (matches.length === 0) {
    await confinedPath(src.root, selectionRoot(rawPattern), { file: '', field: `copy from @${alias}` });
    throw new Error(`no files match pattern '${rawPattern}' in source '${alias}'`);
  }
  const base = selectionRoot(rawPattern);
  const kept = matches.filter((p) => p !== '.' && !excluded(p, base, op.exclude));
  if (kept.length === 0)
    throw new Error(`all files matching pattern '${rawPattern}' in source '${alias}' were excluded`);
  for (const match of kept) {
    if (op.strategy === 'Extract') {
      if (isTarball(match) && byPath.get(match)?.dir !== true) await extract(match);
      continue;
    }
    const target = globDestination(rawPattern, match, dest);
    if (byPath.get(match)?.dir === true) await copyDir(op, src.root, entries, match, staging, target, base, take);
    else await copyFileOp(op, src.root, match, staging, target, take);
  }
}

const isTarball = (p: string) => /\.(?:tar\.gz|tgz)$/i.test(p);

async function extractTo(
  srcRoot: string,
  path: string,
  staging: string,
  dest: string,
  spend: (bytes: number, files: number) => void,
): Promise<void> {
  const target = join(staging, dest);
  await mkdir(target, { recursive: true });
  try {
    await extractTarGz(await readFile(join(srcRoot, path)), target, { spend });
  } catch (err) {
    throw new Error(`failed to extract tarball '${path}' to '${dest}': ${(err as Error).message}`, { cause: err });
  }
}

/** A directory and what it holds (excluded entries and what is below them left out). */
async function copyDir(
  op: CopyOperation,
  srcRoot: string,
  entries: readonly Listed[],
  dir: string,
  staging: string,
  dest: string,
  excludeBase: string,
  take: Take,
): Promise<void> {
  await mkdir(join(staging, dest), { recursive: true });
  const skipped: string[] = [];
  for (const e of entries) {
    const rel = relativeTo(dir, e.path);
    if (rel === undefined || rel === '.') continue;
    if (skipped.some((s) => e.path.startsWith(`${s}/`))) continue;
    if (excluded(e.path, excludeBase, op.exclude)) {
      if (e.dir) skipped.push(e.path);
      continue;
    }
    const target = join2(dest, rel);
    if (e.dir) await mkdir(join(staging, target), { recursive: true });
    else await copyRegular(srcRoot, e.path, staging, target, take);
  }
}

/** One file, merged into the destination when the strategy is Merge and the destination exists. */
async function copyFileOp(
  op: CopyOperation,
  srcRoot: string,
  path: string,
  staging: string,
  dest: string,
  take: Take,
): Promise<void> {
  const target = join(staging, dest);
  if (op.strategy === 'Merge' && (await stat(target).catch(() => undefined)) !== undefined) {
    const merged = mergeMaps(
      yamlMap(await readFile(target, 'utf8'), `@artifact/${dest}`),
      yamlMap(await readFile(join(srcRoot, path), 'utf8'), path),
    );
    const text = stringify(merged, { sortMapEntries: true });
    take(Buffer.byteLength(text), path);
    await writeFile(target, text);
    return;
  }
  await copyRegular(srcRoot, path, staging, dest, take);
}

async function copyRegular(srcRoot: string, path: string, staging: string, dest: string, take: Take): Promise<void> {
  const target = join(staging, dest);
  await mkdir(dirname(target), { recursive: true });
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new Error(`cannot overwrite directory '${dest}' with file '${path}'`);
  const from = await stat(join(srcRoot, path));
  take(from.size, path);
  await copyFile(join(srcRoot, path), target);
  await chmod(target, from.mode & 0o777);
}

/** Removes what Flux's archive leaves out of an artifact: VCS files and its default exclusions. */
async function archiveFilter(root: string): Promise<void> {
  const patterns = readPatterns([...VCS_PATTERNS, ...DEFAULT_PATTERNS].join('\n'), []);
  for (const e of await list(root)) {
    const parts = e.path.split('/');
    // `.sourceignore` files copied in are not read by Flux for an ExternalArtifact: leave none for the build to read.
    if (!e.dir && (isIgnored(patterns, parts, false) || parts[parts.length - 1] === '.sourceignore')) {
      await unlink(join(root, e.path)).catch(() => undefined);
    }
  }
}

/** The content digest: sha256 over the sorted `sha256(file)  path` lines. */
export async function contentDigest(root: string): Promise<string> {
  const files = (await list(root)).filter((e) => !e.dir).map((e) => e.path);
  files.sort(byBytes);
  const h = createHash('sha256');
  let total = 0;
  for (const f of files) {
    const data = await readFile(join(root, f));
    total += data.length;
    if (total > MAX_BYTES) throw new Error(`the artifact is larger than ${MAX_BYTES / 1024 / 1024} MiB`);
    h.update(`${createHash('sha256').update(data).digest('hex')}  ${f}\n`);
  }
  return h.digest('hex');
}

/**
 * Makes artifact `name` of `gen` from its sources' artifacts; throws a sentence naming what failed.
 * Every file written is taken from `budget`, the run's (budget.ts), when one is given.
 */
export async function generateArtifact(
  gen: ArtifactGeneratorDef,
  name: string,
  inputs: Readonly<Record<string, ArtifactInput>>,
  budget: ExtractBudget = new ExtractBudget(),
): Promise<Generated> {
  const spec = gen.artifacts.find((a) => a.name === name);
  const where = `ExternalArtifact ${gen.namespace}/${name} (ArtifactGenerator ${gen.namespace}/${gen.name}, ${gen.file})`;
  if (spec === undefined) throw new Error(`${where}: the generator has no such artifact`);
  const { dir: root, remove: cleanup } = await scratchDir('kr-artifact-');
  try {
    for (const op of spec.copy) {
      try {
        await applyCopy(op, inputs, root, (bytes, files, what) => {
          budget.take(bytes, files, `ArtifactGenerator ${gen.namespace}/${gen.name}, ${what}`);
        });
      } catch (err) {
        throw new Error(`copy from '${op.from}' to '${op.to}' failed: ${(err as Error).message}`, { cause: err });
      }
    }
    await archiveFilter(root);
    const revisionOf = (ref: string | undefined) => (ref === undefined ? undefined : inputs[ref.slice(1)]?.revision);
    const revision = revisionOf(spec.revision) ?? `latest@sha256:${await contentDigest(root)}`;
    const originRevision = revisionOf(spec.originRevision);
    return { root, revision, cleanup, ...(originRevision !== undefined ? { originRevision } : {}) };
  } catch (err) {
    await cleanup();
    throw new Error(`making ${where} failed: ${(err as Error).message}`, { cause: err });
  }
}
