import { mapLimit } from '../concurrency.js';
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { stringify } from 'yaml';
import { copyTree } from './copy.js';
import { generateKustomization, KUSTOMIZATION_FILES, type Entry } from './generate.js';
import { isRemoteRef, mergeKustomization, referencedPaths, takeOrigin, type BuildFields } from './merge.js';
import { objectKey, parseManifests, type KubeObject } from './parse.js';
import { cutStderr, DEFAULT_LIMITS, formatBytes, runBounded, type ProcessLimits, type RunResult } from './run.js';
import { jsonPatchProblem, patchTextProblem } from './jsonpatch.js';
import { manifestTextProblem, parseYamlStream, parseYamlValue } from './yaml.js';

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
  /** YAML files left out of a generated kustomization because they hold no Kubernetes objects. */
  skipped: string[];
  /** Components dropped because they are missing and ignoreMissingComponents is set. */
  missingComponents: string[];
}

/**
 * Files and directories left out of the build copy: Flux's default source-ignore set, which
 * source-controller drops before kustomize-controller ever sees the tree, and node_modules, which
 * a workspace may hold after `npm ci` and which would make the copy slow (manifests never live there).
 */
const IGNORED_NAMES = new Set([
  'node_modules',
  '.git',
  '.gitignore',
  '.gitmodules',
  '.gitattributes',
  '.github',
  '.circleci',
  '.travis.yml',
  '.gitlab-ci.yml',
  'appveyor.yml',
  '.drone.yml',
  'cloudbuild.yaml',
  'codeship-services.yml',
  'codeship-steps.yml',
  '.goreleaser.yml',
  '.sops.yaml',
  '.flux.yaml',
]);
const IGNORED_EXTENSIONS = /\.(jpe?g|gif|png|wmv|flv|zip|tar\.gz)$/i;
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
 * YAML when there is none, Flux's spec fields merged into it, and the load restrictor on.
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
    await copyTree(realRoot, copyRoot, {
      skip: (name) => IGNORED_NAMES.has(name) || IGNORED_EXTENSIONS.test(name),
      // RUNNER_TEMP may lie inside the workspace: the copy must not copy itself.
      exclude: new Set([work, await realpath(work)]),
    });
    const realCopyRoot = await realpath(copyRoot);
    const kdir = join(copyRoot, relPath);
    const found = await findKustomizationFile(kdir);
    let existing: Record<string, unknown>;
    let skipped: string[] = [];
    if (found) {
      // A symlinked kustomization file may not pull in (nor, below, be written over) a file outside the tree.
      if (!isInside(realCopyRoot, await realpath(join(kdir, found)))) {
        throw new Error(`${toPosix(join(relPath, found))} is a symlink that leaves the source root`);
      }
      existing = await readKustomization(join(kdir, found), join(relPath, found));
    } else {
      const generated = generateKustomization(await scan(kdir, ''), relPath === '.' ? '' : toPosix(relPath));
      existing = { ...generated.kustomization };
      skipped = generated.skipped.map((f) => join(relPath, f));
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

    const text = await runKustomize(
      opts.kustomizeBin,
      kdir,
      copyRoot,
      kustomizeEnv(process.env, opts.allowRemoteBases ?? false),
      opts.limits ?? DEFAULT_LIMITS,
    );
    const objects = parseManifests(text, `kustomize build ${relPath}`);
    const origins = new Map<string, string>();
    for (const obj of objects) {
      const origin = takeOrigin(obj, addedOrigin);
      if (origin !== undefined) origins.set(objectKey(obj), toPosix(normalize(join(relPath, origin))));
    }
    return { objects, origins, generated: !found, skipped, missingComponents: missing };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
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
  const remote = dir ? isRemoteRef(entry) && !info?.isFile() : /^https?:\/\//i.test(entry.trim());
  if (remote) {
    if (allowRemoteBases) return;
    throw new Error(
      `${shown}: ${field} entry "${entry}" is ${dir ? 'a remote base' : 'a remote file'}; remote bases are refused so that the build uses only the checked-out source (allow them with the allow-remote-bases input or --allow-remote-bases)`,
    );
  }
  if (info?.isFile() && YAML_FIELDS.has(field)) {
    // kustomize drops content after a `...` document end and a List whose items is not a list without a word.
    const text = await readFile(target, 'utf8');
    const where = toPosix(relative(copyRoot, target));
    const problem =
      manifestTextProblem(text, where) ?? (field.startsWith('patches') ? patchTextProblem(text, where) : undefined);
    if (problem !== undefined) throw new Error(problem.startsWith(where) ? problem : `${where}: ${problem}`);
  }
  if (!dir || !info?.isDirectory()) return;
  if (!isInside(realCopyRoot, await realpath(target))) {
    throw new Error(
      `${shown}: ${field} entry "${entry}" leaves the source root; only directories inside it can be used`,
    );
  }
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

/** Fields whose files kustomize reads as Kubernetes YAML (resources and patches), checked before it runs. */
const YAML_FIELDS = new Set(['resources', 'patchesStrategicMerge', 'patches[].path', 'patchesJson6902[].path']);

/**
 * Every entry of a kustomization that kustomize reads through its loader, which takes a local path
 * or a URL; `dir` marks the fields whose entries may also be kustomization directories.
 */
function loadedEntries(k: Readonly<Record<string, unknown>>): { field: string; entry: string; dir: boolean }[] {
  const out = referencedPaths(k).map(({ field, entry }) => ({ field, entry, dir: field !== 'crds' }));
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  const add = (field: string, entry: unknown, dir = false) => {
    if (typeof entry === 'string') out.push({ field, entry, dir });
  };
  for (const field of ['generators', 'transformers', 'validators']) {
    for (const entry of list(k[field])) add(field, entry, true);
  }
  for (const field of ['patchesStrategicMerge', 'configurations']) {
    for (const entry of list(k[field])) add(field, entry);
  }
  for (const field of ['patches', 'patchesJson6902', 'replacements']) {
    for (const entry of list(k[field])) add(`${field}[].path`, (entry as { path?: unknown } | null)?.path);
  }
  for (const field of ['configMapGenerator', 'secretGenerator']) {
    for (const gen of list(k[field])) {
      const g = (gen ?? {}) as { files?: unknown; envs?: unknown; env?: unknown };
      for (const entry of list(g.files)) {
        // `key=path` names the key; the path is what is loaded.
        add(`${field}[].files`, typeof entry === 'string' ? entry.slice(entry.indexOf('=') + 1) : entry);
      }
      for (const entry of list(g.envs)) add(`${field}[].envs`, entry);
      add(`${field}[].env`, g.env);
    }
  }
  add('openapi.path', (k['openapi'] as { path?: unknown } | null | undefined)?.path);
  return out;
}

/** Lists YAML files and kustomization sub-directories below `dir`, paths relative to the top. */
async function scan(top: string, rel: string): Promise<Entry[]> {
  const dirents = await readdir(join(top, rel), { withFileTypes: true });
  const sorted = dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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
): Promise<string> {
  const args = ['build', kdir, '--load-restrictor=LoadRestrictionsRootOnly'];
  // Messages name files in the temporary copy; show them relative to the source root instead.
  const shorten = (text: string) =>
    text.replaceAll(`${copyRoot}${sep}`, '').replaceAll(copyRoot, '.').replaceAll(dirname(copyRoot), '<build>');
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
