/**
 * Keeping everything kustomize reads inside the temporary copy of the source root. Flux builds
 * without kustomize's load restrictor in a file system confined to the root; here checkReferences
 * refuses what would leave the root (or, unless allowed, fetch over the network), and
 * localiseReferences copies the files a kustomization loads from outside its directory into it, so
 * that kustomize can run with its load restrictor on.
 */
import { copyFile, mkdir, mkdtemp, readFile, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { manifestTextProblem, parseYamlStream } from '../objects/yaml.js';
import { yamlAliasProblem } from '../util/bounded.js';
import { mapLimit } from '../util/concurrency.js';
import { jsonPatchProblem, patchTextProblem } from './jsonpatch.js';
import { findKustomizationFile, READ_CONCURRENCY, readKustomization, replaceKustomization } from './kustomization.js';
import { isRemoteRef } from './merge.js';
import { confinedPath, escapingLink } from '../util/confine.js';
import { listTree } from './copy.js';
import { isInside, kustomizationFileInside, toPosix } from './paths.js';
import { loadedEntries, localName, mapLoadedEntries, type LoadedEntry } from './references.js';

/** Fields whose files kustomize reads as Kubernetes YAML (resources and patches), checked before it runs. */
const YAML_FIELDS = new Set(['resources', 'patchesStrategicMerge', 'patches[].path', 'patchesJson6902[].path']);

/**
 * Fields whose files kustomize parses as YAML (or JSON) of any kind: their aliases are bounded
 * before it runs. A generator's files and env files are data, never parsed.
 */
const PARSED_FIELDS = new Set([
  ...YAML_FIELDS,
  'crds',
  'configurations',
  'replacements[].path',
  'openapi.path',
  'generators',
  'transformers',
  'validators',
]);

/**
 * Walks the kustomizations reachable from `kdir` (resources, bases, components, generators,
 * transformers and validators that are directories) and refuses, as Flux's root-confined file
 * system does, a local directory whose real path leaves the source root (through `..` or a
 * symlink). Unless remote bases are allowed, it also refuses every entry that kustomize would
 * fetch over the network: remote resources, bases and components (git or https), and the https
 * URLs kustomize's loader accepts in place of any file (patches, generator files and env files,
 * replacements, openapi, configurations, crds, generators, transformers, validators).
 */
export async function checkReferences(
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
  await kustomizationFileInside(copyRoot, kdir, file, shown);
  // Read with the bounded parser: a nested kustomization with an alias bomb or deep nesting fails
  // here, naming it, instead of in kustomize (where it cost gigabytes or a Go stack dump).
  const k = await readKustomization(join(kdir, file), shown);
  const inline = inlinePatchProblem(k);
  if (inline !== undefined) throw new Error(`${shown}: ${inline}`);
  // The entries are checked concurrently (a plain directory lists every file as a resource: read one
  // by one, a thousand files cost more than the build); the first problem in entry order is thrown.
  const problems = await mapLimit(loadedEntries(k), READ_CONCURRENCY, (e) =>
    checkEntry(copyRoot, realCopyRoot, kdir, shown, e, allowRemoteBases, seen).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    ),
  );
  const first = problems.find((p) => p !== undefined);
  if (first !== undefined) throw first;
}

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
  // Flux builds without kustomize's load restrictor inside a file system confined to the source
  // root: a file or directory may be anywhere inside the root, never outside it, each symlink on the
  // way followed and judged (util/confine.ts), a missing or dangling one too.
  const real = await confinedPath(copyRoot, entry, { file: shown, field: `${field} entry` }, { from: kdir });
  if (info === undefined) return;
  if (info.isFile() && PARSED_FIELDS.has(field)) {
    const text = await readFile(real, 'utf8');
    const where = toPosix(relative(copyRoot, target));
    // An alias inside the node it names, or a "billion laughs": kustomize would recurse until its
    // stack is gone (a Go stack dump naming no file) or expand it without bound.
    let problem = yamlAliasProblem(text, where);
    // kustomize drops content after a `...` document end and a List whose items is not a list without a word.
    if (problem === undefined && YAML_FIELDS.has(field)) {
      problem =
        manifestTextProblem(text, where) ?? (field.startsWith('patches') ? patchTextProblem(text, where) : undefined);
    }
    if (problem !== undefined) throw new Error(problem.startsWith(where) ? problem : `${where}: ${problem}`);
  }
  if (!dir || !info.isDirectory()) return;
  // The directory the kernel reads (a `..` after a link climbs from the link's target).
  await checkReferences(copyRoot, realCopyRoot, join(copyRoot, relative(realCopyRoot, real)), allowRemoteBases, seen);
}

/**
 * The first problem of the patches and plugin configurations written inline in a kustomization (bad
 * YAML, an alias that recurses or an alias bomb, a bad JSON 6902 operation), naming the entry:
 * kustomize parses them without such bounds.
 */
function inlinePatchProblem(k: Readonly<Record<string, unknown>>): string | undefined {
  // An entry is a file name or, when it spans lines, the patch (or the plugin's configuration) itself.
  for (const field of ['patchesStrategicMerge', 'generators', 'transformers', 'validators']) {
    const list = k[field];
    if (!Array.isArray(list)) continue;
    for (const [i, entry] of list.entries()) {
      if (typeof entry !== 'string' || !entry.includes('\n')) continue;
      const at = `${field}[${i}]`;
      const aliases = yamlAliasProblem(entry, at);
      if (aliases !== undefined) return aliases;
      if (field !== 'patchesStrategicMerge') continue;
      const bad = parseYamlStream(entry, at).find((d) => d.error !== undefined);
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
      const aliases = yamlAliasProblem(patch, at);
      if (aliases !== undefined) return aliases;
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
export async function localiseReferences(realCopyRoot: string, realKdir: string): Promise<Map<string, string>> {
  const renamed = new Map<string, string>();
  const seen = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const file = await findKustomizationFile(dir);
    if (!file) return;
    const kfile = join(dir, file);
    const realKfile = await kustomizationFileInside(realCopyRoot, dir, file, toPosix(relative(realCopyRoot, kfile)));
    const k = await readKustomization(kfile, toPosix(relative(realCopyRoot, kfile)));
    const copies = new Map<string, string>();
    let refsDir: string | undefined;
    let n = 0;
    const subdirs: string[] = [];
    for (const e of loadedEntries(k)) {
      const target = resolve(dir, e.entry);
      const info = await stat(target).catch(() => undefined);
      if (info === undefined || isRemoteEntry(e, info.isFile())) continue;
      // Checked before; a file system that changed since would end here.
      const shown = toPosix(relative(realCopyRoot, kfile));
      const real = await confinedPath(realCopyRoot, e.entry, { file: shown, field: `${e.field} entry` }, { from: dir });
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
      await replaceKustomization(kfile, kustomization);
    }
    for (const sub of subdirs) await visit(sub);
  };
  await visit(realKdir);
  return renamed;
}

/**
 * Removes from the copy every symlink whose target, followed to the end, leaves it. kustomize's load
 * restrictor judges the directory of a file it loads, not the file, so a link beside a kustomization
 * (`secret.txt -> /home/runner/work/repo/repo/.git/config`) in a field the checks above do not know
 * (a plugin's configuration, a field of a later kustomize) would still be read through. Every entry
 * the checks know is refused with its file and field before this runs; a link nothing names is
 * harmless to drop.
 */
export async function dropEscapingLinks(copyRoot: string): Promise<void> {
  for (const e of await listTree(copyRoot, () => false)) {
    if (e.type === 'symlink' && (await escapingLink(copyRoot, e.path)) !== undefined) {
      await unlink(join(copyRoot, ...e.path));
    }
  }
}
