import { mapLimit } from '../util/concurrency.js';
import { copyFile, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { stringify } from 'yaml';
import { copyEntries, listTree, type TreeEntry } from './copy.js';
import { generateKustomization, KUSTOMIZATION_FILES, type Entry } from './generate.js';
import { isRemoteRef, mergeKustomization, takeOrigin, type BuildFields, ORIGIN_ANNOTATION } from './merge.js';
import { loadedEntries, localName, mapLoadedEntries, restoreOriginPath, type LoadedEntry } from './references.js';
import { objectKey, parseManifests, type KubeObject } from '../objects/kube.js';
import { cutStderr, DEFAULT_LIMITS, formatBytes, runBounded, type ProcessLimits, type RunResult } from './run.js';
import { jsonPatchProblem, patchTextProblem } from './jsonpatch.js';
import { isIgnored, readPatterns, sourcePatterns, SOURCEIGNORE_FILE, type IgnorePattern } from './sourceignore.js';
import { manifestTextProblem, parseYamlStream, parseYamlValue } from '../objects/yaml.js';

export interface BuildOptions extends Omit<BuildFields, 'components'> {
  /** The source root (the workspace); `path` is relative to it and may not leave it. */
  root: string;
  /** Directory to build, relative to `root`. */
  path: string;
  /** The kustomize binary: a path, or a name looked up on PATH. */
  kustomizeBin: string;
  /** spec.components, relative to `path`; checked to exist (or dropped when missing and ignored). */
  components?: readonly string[];
  ignoreMissingComponents?: boolean;
  /** Allow `resources`/`components` that kustomize would fetch over the network (off by default). */
  allowRemoteBases?: boolean;
  /** Runs on the temporary copy just before kustomize (SOPS decryption of generator files). */
  beforeBuild?: (copyRoot: string, kdir: string) => Promise<void>;
  /** Time and memory kustomize (and what it starts) may use; DEFAULT_LIMITS when absent. */
  limits?: ProcessLimits;
}

export interface BuildResult {
  objects: KubeObject[];
  /** Each object's source file relative to the root, by objectKey (absent for remote bases). */
  origins: Map<string, string>;
  /** True when `path` had no kustomization file and one was generated over its YAML files. */
  generated: boolean;
  /** Components dropped because they are missing and ignoreMissingComponents is set. */
  missingComponents: string[];
}

/**
 * Directories never copied nor looked into: `.git` (source-controller's archive leaves it out
 * whatever `.sourceignore` says) and node_modules, which a workspace may hold after `npm ci` and
 * which would make the copy slow (manifests never live there).
 */
const PRUNED = new Set(['.git', 'node_modules']);
const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

/**
 * The only variables kustomize (and git, which it runs for remote bases) gets from the action's
 * environment: where programs, home, temporary and config directories are, locale, proxies and CA
 * bundles. Never the inputs (`INPUT_*`: the kubeconfig, SOPS keys, secret-vars, the GitHub token),
 * the runner's tokens (`ACTIONS_*`) or cloud credentials: kustomize releases before v5 fill a bare
 * key of a generator's env file from the environment, which would put them into a ConfigMap.
 */
const KUSTOMIZE_ENV =
  /^(?:PATH|PATHEXT|HOME|USERPROFILE|HOMEDRIVE|HOMEPATH|TMPDIR|TMP|TEMP|LANG|LANGUAGE|LC_[A-Z]+|TZ|XDG_CONFIG_HOME|XDG_CACHE_HOME|KUSTOMIZE_PLUGIN_HOME|SYSTEMROOT|SYSTEMDRIVE|WINDIR|COMSPEC|APPDATA|LOCALAPPDATA|PROGRAMDATA|HTTPS?_PROXY|NO_PROXY|ALL_PROXY|SSL_CERT_FILE|SSL_CERT_DIR)$/i;
/** With remote bases allowed, git's own settings as well (credentials, SSH command, ssh-agent). */
const GIT_ENV = /^(?:GIT_[A-Z0-9_]+|SSH_AUTH_SOCK)$/i;

/** The environment kustomize runs with: `env` reduced to KUSTOMIZE_ENV (and GIT_ENV with remote bases). */
export function kustomizeEnv(env: NodeJS.ProcessEnv, allowRemoteBases: boolean): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (KUSTOMIZE_ENV.test(name) || (allowRemoteBases && GIT_ENV.test(name)))) {
      out[name] = value;
    }
  }
  return out;
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
  // A private directory (mkdtemp: mode 0700), removed below; on a runner in RUNNER_TEMP, which the
  // runner empties after the job, so that decrypted files do not outlive a cancelled run.
  const work = await mkdtemp(join(process.env['RUNNER_TEMP'] || tmpdir(), 'kr-build-'));
  const copyRoot = join(work, 'src');
  try {
    // RUNNER_TEMP may lie inside the workspace: the copy must not copy itself.
    const entries = await listTree(realRoot, (name) => PRUNED.has(name), new Set([work, await realpath(work)]));
    // What source-controller would leave out of the artifact: `.sourceignore` files' patterns
    // and its default exclusions.
    const patterns = sourcePatterns(await readSourceIgnores(realRoot, entries));
    await copyEntries(realRoot, copyRoot, entries, { ignore: (path, isDir) => isIgnored(patterns, path, isDir) });
    const realCopyRoot = await realpath(copyRoot);
    const kdir = join(copyRoot, relPath);
    if (!(await stat(kdir).catch(() => undefined))?.isDirectory()) {
      throw new Error(
        `path "${opts.path}" is excluded from the source by a .sourceignore pattern or Flux's default exclusions, as it would be from Flux's artifact; change the pattern or the path`,
      );
    }
    const found = await findKustomizationFile(kdir);
    let existing: Record<string, unknown>;
    if (found) {
      // A symlinked kustomization file may not pull in (nor, below, be written over) a file outside the tree.
      if (!isInside(realCopyRoot, await realpath(join(kdir, found)))) {
        throw new Error(`${toPosix(join(relPath, found))} is a symlink that leaves the source root`);
      }
      existing = await readKustomization(join(kdir, found), join(relPath, found));
    } else {
      existing = { ...generateKustomization(await scan(kdir, ''), relPath === '.' ? '' : toPosix(relPath)) };
    }
    const { components, missing } = await checkComponents(
      kdir,
      relPath,
      opts.components ?? [],
      opts.ignoreMissingComponents ?? false,
    );
    const { kustomization, addedOrigin } = mergeKustomization(
      existing,
      { ...pick(opts), components },
      found ? 'file' : 'generated',
    );
    // Replaced, never written through: the copy keeps the tree's symlinks, and one (even a dangling
    // one) in place of the kustomization file would otherwise make this write land outside the copy.
    const kfile = join(kdir, found ?? 'kustomization.yaml');
    await rm(kfile, { force: true });
    await writeFile(kfile, stringify(kustomization), { flag: 'wx' });
    await checkReferences(copyRoot, realCopyRoot, kdir, opts.allowRemoteBases ?? false, new Set());
    await opts.beforeBuild?.(copyRoot, kdir);
    const renamed = await localiseReferences(realCopyRoot, await realpath(kdir));

    const text = await runKustomize(
      opts.kustomizeBin,
      kdir,
      copyRoot,
      kustomizeEnv(process.env, opts.allowRemoteBases ?? false),
      opts.limits ?? DEFAULT_LIMITS,
      renamed,
    );
    const objects = parseManifests(text, `kustomize build ${relPath}`);
    const origins = new Map<string, string>();
    for (const obj of objects) {
      const annotations = obj.metadata.annotations;
      const raw = annotations?.[ORIGIN_ANNOTATION];
      if (annotations !== undefined && raw !== undefined && renamed.size > 0) {
        annotations[ORIGIN_ANNOTATION] = restoreOriginPath(raw, renamed);
      }
      const origin = takeOrigin(obj, addedOrigin);
      if (origin !== undefined) origins.set(objectKey(obj), toPosix(normalize(join(relPath, origin))));
    }
    return { objects, origins, generated: !found, missingComponents: missing };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The patterns of every `.sourceignore` file (a regular file) among `entries`, each scoped to its
 * directory, shallower files first: the order source-controller loads them in, as far as it
 * matters (only a file's ancestors' patterns can match the same paths as its own).
 */
async function readSourceIgnores(root: string, entries: readonly TreeEntry[]): Promise<IgnorePattern[]> {
  const files = entries
    .filter((e) => e.type === 'file' && e.path[e.path.length - 1] === SOURCEIGNORE_FILE)
    .sort((a, b) => a.path.length - b.path.length);
  const texts = await Promise.all(files.map((f) => readFile(join(root, ...f.path), 'utf8')));
  return files.flatMap((f, i) => readPatterns(texts[i]!, f.path.slice(0, -1)));
}

function pick(o: BuildOptions) {
  return {
    targetNamespace: o.targetNamespace,
    namePrefix: o.namePrefix,
    nameSuffix: o.nameSuffix,
    patches: o.patches,
    images: o.images,
    buildMetadata: o.buildMetadata,
  };
}

/** Joins `path` to `root` and refuses a result outside the root, symlinks resolved. */
export async function resolveInsideRoot(root: string, path: string): Promise<string> {
  const realRoot = await realpath(root);
  const joined = resolve(realRoot, path);
  if (!isInside(realRoot, joined)) {
    throw new Error(`path "${path}" leaves the source root ${realRoot}; it must name a directory inside it`);
  }
  let real: string;
  try {
    real = await realpath(joined);
  } catch {
    throw new Error(`path "${path}" does not exist under the source root ${realRoot}`);
  }
  if (!isInside(realRoot, real)) {
    throw new Error(
      `path "${path}" leaves the source root ${realRoot} through a symlink; it must name a directory inside it`,
    );
  }
  const info = await stat(real);
  if (!info.isDirectory()) {
    throw new Error(`path "${path}" is a file; it must be a directory (with or without a kustomization.yaml)`);
  }
  return real;
}

function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function findKustomizationFile(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) return name;
  }
  return undefined;
}

async function readKustomization(file: string, shown: string): Promise<Record<string, unknown>> {
  return kustomizationFromText(await readFile(file, 'utf8'), shown);
}

/** A kustomization file's text as a map, read with the bounded parser; errors name `shown`. */
export function kustomizationFromText(text: string, shown: string): Record<string, unknown> {
  const doc = parseYamlValue(text, shown);
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`${shown}: a kustomization must be a YAML mapping`);
  return doc as Record<string, unknown>;
}

/** Flux's spec.components are relative to the kustomization directory; missing ones fail unless ignored. */
async function checkComponents(kdir: string, relPath: string, components: readonly string[], ignoreMissing: boolean) {
  const present: string[] = [];
  const missing: string[] = [];
  for (const [i, c] of components.entries()) {
    if (await stat(join(kdir, c)).catch(() => undefined)) {
      present.push(c);
    } else if (ignoreMissing) {
      missing.push(c);
    } else {
      throw new Error(
        `spec.components[${i}] "${c}" not found relative to ${relPath}; fix the path or set spec.ignoreMissingComponents: true to skip missing components`,
      );
    }
  }
  return { components: present, missing };
}

/**
 * Walks the kustomizations reachable from `kdir` (resources, bases, components, generators,
 * transformers and validators that are directories) and refuses, as Flux's root-confined file
 * system does, a local directory whose real path leaves the source root (through `..` or a
 * symlink). Unless remote bases are allowed, it also refuses every entry that kustomize would
 * fetch over the network: remote resources, bases and components (git or https), and the https
 * URLs kustomize's loader accepts in place of any file (patches, generator files and env files,
 * replacements, openapi, configurations, crds, generators, transformers, validators).
 */
async function checkReferences(
  copyRoot: string,
  realCopyRoot: string,
  kdir: string,
  allowRemoteBases: boolean,
  seen: Set<string>,
): Promise<void> {
  if (seen.has(kdir)) return;
  seen.add(kdir);
  const file = await findKustomizationFile(kdir);
  if (!file) return;
  const shown = toPosix(relative(copyRoot, join(kdir, file)));
  if (!isInside(realCopyRoot, await realpath(join(kdir, file)))) {
    throw new Error(`${shown} is a symlink that leaves the source root; it is not read`);
  }
  // Read with the bounded parser: a nested kustomization with an alias bomb or deep nesting fails
  // here, naming it, instead of in kustomize (where it cost gigabytes or a Go stack dump).
  const k = await readKustomization(join(kdir, file), shown);
  const inline = inlinePatchProblem(k);
  if (inline !== undefined) throw new Error(`${shown}: ${inline}`);
  // The entries are checked concurrently (a plain directory lists every file as a resource: read one
  // by one, a thousand files cost more than the build); the first problem in entry order is thrown.
  const problems = await mapLimit(loadedEntries(k), REFERENCE_CONCURRENCY, (e) =>
    checkEntry(copyRoot, realCopyRoot, kdir, shown, e, allowRemoteBases, seen).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    ),
  );
  const first = problems.find((p) => p !== undefined);
  if (first !== undefined) throw first;
}

/** Files read at once while checking a kustomization's entries. */
const REFERENCE_CONCURRENCY = 16;

/** One entry of the kustomization `shown` in `kdir`; see {@link checkReferences}. */
async function checkEntry(
  copyRoot: string,
  realCopyRoot: string,
  kdir: string,
  shown: string,
  { field, entry, dir }: { field: string; entry: string; dir: boolean },
  allowRemoteBases: boolean,
  seen: Set<string>,
): Promise<void> {
  const target = resolve(kdir, entry);
  const info = await stat(target).catch(() => undefined);
  // An existing file is loaded as a file; otherwise a git or https reference (in the fields that
  // take directories) or an https URL (in any field) is fetched.
  if (isRemoteEntry({ field, entry, dir }, info?.isFile() ?? false)) {
    if (allowRemoteBases) return;
    throw new Error(
      `${shown}: ${field} entry "${entry}" is ${dir ? 'a remote base' : 'a remote file'}; remote bases are refused so that the build uses only the checked-out source (allow them with the allow-remote-bases input or --allow-remote-bases)`,
    );
  }
  if (info === undefined) return;
  // Flux builds without kustomize's load restrictor inside a file system confined to the source
  // root: a file or directory may be anywhere inside the root, never outside it (symlinks resolved).
  if (!isInside(realCopyRoot, await realpath(target))) {
    const how = isInside(copyRoot, target) ? ' through a symlink' : '';
    throw new Error(
      `${shown}: ${field} entry "${entry}" leaves the source root${how}; only files and directories inside it can be used`,
    );
  }
  if (info.isFile() && YAML_FIELDS.has(field)) {
    // kustomize drops content after a `...` document end and a List whose items is not a list without a word.
    const text = await readFile(target, 'utf8');
    const where = toPosix(relative(copyRoot, target));
    const problem =
      manifestTextProblem(text, where) ?? (field.startsWith('patches') ? patchTextProblem(text, where) : undefined);
    if (problem !== undefined) throw new Error(problem.startsWith(where) ? problem : `${where}: ${problem}`);
  }
  if (!dir || !info.isDirectory()) return;
  await checkReferences(copyRoot, realCopyRoot, target, allowRemoteBases, seen);
}

/**
 * The first problem of the patches written inline in a kustomization (bad YAML, an alias bomb, a
 * bad JSON 6902 operation), naming the entry: kustomize parses them without such bounds.
 */
function inlinePatchProblem(k: Readonly<Record<string, unknown>>): string | undefined {
  const strategic = k['patchesStrategicMerge'];
  if (Array.isArray(strategic)) {
    for (const [i, entry] of strategic.entries()) {
      // An entry is a file name or, when it spans lines, the patch itself.
      if (typeof entry !== 'string' || !entry.includes('\n')) continue;
      const bad = parseYamlStream(entry, `patchesStrategicMerge[${i}]`).find((d) => d.error !== undefined);
      if (bad?.error !== undefined) return bad.error;
    }
  }
  for (const field of ['patches', 'patchesJson6902']) {
    const list = k[field];
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      const patch = (entry as { patch?: unknown } | null)?.patch;
      if (typeof patch !== 'string') continue;
      const at = `${field}[${i}].patch`;
      const docs = parseYamlStream(patch, at);
      const bad = docs.find((d) => d.error !== undefined);
      const problem = bad?.error ?? jsonPatchProblem(docs[0]?.value);
      if (problem !== undefined) return problem.startsWith(at) ? problem : `${at}: ${problem}`;
    }
  }
  return undefined;
}

/**
 * True when kustomize would fetch the entry over the network: a git or https reference in the
 * fields that take directories (unless a file of that name exists), an https URL in any field.
 */
function isRemoteEntry({ entry, dir }: LoadedEntry, isFile: boolean): boolean {
  return dir ? isRemoteRef(entry) && !isFile : /^https?:\/\//i.test(entry.trim());
}

/**
 * Lets kustomize load, with its load restrictor on, the files that Flux's build (no restrictor, a
 * file system confined to the source root) loads from outside a kustomization's directory: each
 * such file of a kustomization reachable from `kdir` (already checked to lie inside the root, by
 * {@link checkReferences}) is copied into a new directory inside that kustomization's, under its
 * own base name (a generator's default key), and the entry rewritten to name the copy. kustomize
 * still refuses any other file outside a kustomization's directory, which keeps every read inside
 * the copy. Returns each rewritten entry with the entry as written, for messages and origins.
 */
async function localiseReferences(realCopyRoot: string, realKdir: string): Promise<Map<string, string>> {
  const renamed = new Map<string, string>();
  const seen = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const file = await findKustomizationFile(dir);
    if (!file) return;
    const kfile = join(dir, file);
    const realKfile = await realpath(kfile);
    if (!isInside(realCopyRoot, realKfile)) {
      throw new Error(`${toPosix(relative(realCopyRoot, kfile))} is a symlink that leaves the source root`);
    }
    const k = await readKustomization(kfile, toPosix(relative(realCopyRoot, kfile)));
    const copies = new Map<string, string>();
    let refsDir: string | undefined;
    let n = 0;
    const subdirs: string[] = [];
    for (const e of loadedEntries(k)) {
      const target = resolve(dir, e.entry);
      const info = await stat(target).catch(() => undefined);
      if (info === undefined || isRemoteEntry(e, info.isFile())) continue;
      const real = await realpath(target);
      // Checked before; a file system that changed since would end here.
      if (!isInside(realCopyRoot, real)) throw new Error(`${e.field} entry "${e.entry}" leaves the source root`);
      if (info.isDirectory()) {
        if (e.dir) subdirs.push(real);
        continue;
      }
      if (!info.isFile() || isInside(dir, real) || copies.has(e.entry)) continue;
      refsDir ??= await mkdtemp(join(dir, '.kr-refs-'));
      const name = localName(n++, e.entry);
      await mkdir(dirname(join(refsDir, name)), { recursive: true });
      await copyFile(real, join(refsDir, name));
      const written = `${basename(refsDir)}/${name}`;
      copies.set(e.entry, written);
      renamed.set(written, e.entry);
    }
    // A kustomization file that is a symlink (to a file elsewhere inside the root) is replaced by
    // its text: kustomize would refuse to load it from outside the directory.
    if (copies.size > 0 || realKfile !== kfile) {
      const { kustomization } = mapLoadedEntries(k, (e) => copies.get(e.entry));
      // Replaced, never written through (see build()).
      await rm(kfile, { force: true });
      await writeFile(kfile, stringify(kustomization), { flag: 'wx' });
    }
    for (const sub of subdirs) await visit(sub);
  };
  await visit(realKdir);
  return renamed;
}

/** Fields whose files kustomize reads as Kubernetes YAML (resources and patches), checked before it runs. */
const YAML_FIELDS = new Set(['resources', 'patchesStrategicMerge', 'patches[].path', 'patchesJson6902[].path']);

/**
 * Lists YAML files and kustomization sub-directories below `dir`, paths relative to the top, in the
 * order of Flux's walk: depth first, each directory's entries sorted by name (byte order), a
 * directory with a kustomization file listed instead of its contents. A file counts by its
 * extension (`.yaml` or `.yml`, case-sensitive), hidden files included, as in Flux.
 */
async function scan(top: string, rel: string): Promise<Entry[]> {
  const dirents = await readdir(join(top, rel), { withFileTypes: true });
  const sorted = dirents.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  // Read concurrently, kept in name order.
  const parts = await mapLimit(sorted, REFERENCE_CONCURRENCY, async (d): Promise<Entry[]> => {
    const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) {
      if (await findKustomizationFile(join(top, childRel)))
        return [{ kind: 'dir', path: childRel, hasKustomization: true }];
      return scan(top, childRel);
    }
    if (d.isFile() && /\.ya?ml$/.test(d.name)) {
      return [{ kind: 'file', path: childRel, text: await readFile(join(top, childRel), 'utf8') }];
    }
    return [];
  });
  return parts.flat();
}

async function runKustomize(
  bin: string,
  kdir: string,
  copyRoot: string,
  env: NodeJS.ProcessEnv,
  limits: ProcessLimits,
  renamed: ReadonlyMap<string, string>,
): Promise<string> {
  const args = ['build', kdir, '--load-restrictor=LoadRestrictionsRootOnly'];
  // Messages name files in the temporary copy: show them relative to the source root instead, and
  // the copies of files from outside a kustomization's directory as the entries that named them.
  const shorten = (text: string) => {
    let out = text;
    for (const [written, original] of renamed) out = out.replaceAll(written, original);
    return out.replaceAll(`${copyRoot}${sep}`, '').replaceAll(copyRoot, '.').replaceAll(dirname(copyRoot), '<build>');
  };
  const what = `kustomize build ${shorten(kdir)}`;
  let r: RunResult;
  try {
    r = await runBounded(bin, args, { env, limits, maxOutputBytes: MAX_OUTPUT_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        `kustomize binary "${bin}" not found: install kustomize v5 or set the kustomize-path input / --kustomize-path flag`,
        { cause: err },
      );
    }
    throw new Error(`${what} could not start: ${(err as Error).message}`, { cause: err });
  }
  if (r.stopped === 'timeout') {
    throw new Error(
      `${what} did not finish within ${formatMs(limits.timeoutMs)} and was stopped; if the tree really needs longer, raise the build-timeout input / --build-timeout`,
    );
  }
  if (r.stopped === 'memory') {
    throw new Error(
      `${what} used more than ${formatBytes(limits.memoryBytes)} of memory and was stopped (YAML aliases that expand without end, or a huge generator, do this); if the tree really needs more, raise the build-memory-limit input / --build-memory-limit`,
    );
  }
  if (r.stopped === 'output') {
    throw new Error(`${what} printed more than ${formatBytes(MAX_OUTPUT_BYTES)} and was stopped`);
  }
  if (r.code !== 0) {
    const dropped = r.stderrDropped > 0 ? `\n(${r.stderrDropped} more bytes of output left out)` : '';
    const detail = cutStderr(shorten(r.stderr)) || `exited with ${r.signal ? `signal ${r.signal}` : `code ${r.code}`}`;
    throw new Error(`${what} failed: ${detail}${dropped}`);
  }
  return r.stdout;
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}` : `${s}s`;
}

function toPosix(p: string): string {
  return p.split(sep).join('/');
}
