import { glob, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, matchesGlob, relative, resolve, sep } from 'node:path';
import { FLUX_API_VERSION } from '../objects/flux.js';
import { mapLimit } from '../util/concurrency.js';
import { ConfinementError, confinedPath } from '../util/confine.js';
import { builtFiles, decideNamespaces } from './applied-by.js';
import { followFrom, unreachedNotes } from './entry.js';
import { clusterOf } from './clusters.js';
import { generatorNote, generatorOf, objectName, type Generator } from './generators.js';
import {
  DEFAULT_NAMESPACE,
  SpecError,
  DuplicateSpecError,
  deferredProblems,
  normalizeSourcePath,
  type SpecLocation,
  parseKustomizationFile,
  withIdentity,
  writtenNamespace,
} from './parse.js';
import { controlCharacterProblem } from './fields.js';
import type { KustomizationSpec } from './types.js';

/**
 * Splits the `kustomizations` input into patterns. Entries are separated by newlines or commas
 * (except commas inside a glob's `{a,b}`); `#` starts a comment (at the start of a line or after a
 * space), so a YAML block can be annotated.
 */
export function splitPatterns(input: string): string[] {
  return input
    .split(/\r?\n/)
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .flatMap(splitOutsideBraces)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function splitOutsideBraces(line: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (char === '{') depth++;
    if (char === '}') depth = Math.max(0, depth - 1);
    if (char === ',' && depth === 0) {
      entries.push(line.slice(start, i));
      start = i + 1;
    }
  }
  entries.push(line.slice(start));
  return entries;
}

const GLOB_MAGIC = /[*?[\]{}]/;

/** The pattern relative to `root`, or undefined when it would reach outside the root. */
function patternInsideRoot(pattern: string, root: string): string | undefined {
  const relativePattern = isAbsolute(pattern) ? relative(root, pattern).split(sep).join('/') : pattern;
  if (isAbsolute(relativePattern)) return undefined;
  const normal = normalizeSourcePath(relativePattern);
  return normal === undefined || normal === '.' ? undefined : normal;
}

/** Files (not directories) a pattern matches, relative to root with `/` separators, sorted. */
async function matchFiles(pattern: string, root: string, realRoot: string): Promise<string[]> {
  const files: string[] = [];
  for await (const match of glob(pattern, { cwd: root })) {
    const absolute = resolve(root, match);
    const info = await stat(absolute).catch(() => undefined);
    if (info?.isFile() !== true) continue;
    // A file name is printed in logs, comments and annotations: one with a line break could start lines of its own.
    const control = controlCharacterProblem(match);
    if (control !== undefined) {
      throw new SpecError([
        `kustomizations pattern ${JSON.stringify(pattern)}: the file name ${JSON.stringify(match)} ${control}; rename the file`,
      ]);
    }
    // A symlink in the tree could point anywhere; the files read must stay in the checkout (util/confine.ts).
    const problem = await confinedPath(realRoot, relative(root, absolute), { file: '', field: 'file' }).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof ConfinementError) return err.problem;
        throw err;
      },
    );
    if (problem !== undefined) {
      throw new SpecError([
        `kustomizations pattern ${JSON.stringify(pattern)}: ${match} links outside the root: it ${problem}`,
      ]);
    }
    files.push(match.split(sep).join('/'));
  }
  return files.sort();
}

/**
 * Every file the patterns match (relative to `root`, `/`-separated, sorted, each once), for the
 * plan's grouping by cluster; patterns that match nothing or leave the root are left to
 * loadKustomizations to refuse.
 */
export async function kustomizationFiles(
  patterns: readonly string[],
  root: string,
  exclude: readonly string[] = [],
): Promise<string[]> {
  const absoluteRoot = resolve(root);
  const realRoot = await realpath(absoluteRoot);
  const files = new Set<string>();
  const excluded = excludedBy(exclude);
  for (const pattern of patterns) {
    const inside = patternInsideRoot(pattern, absoluteRoot);
    if (inside === undefined) continue;
    for (const f of await matchFiles(inside, absoluteRoot, realRoot)) if (!excluded(f)) files.add(f);
  }
  return [...files].sort();
}

interface Located {
  file: string;
  document: number;
}

function where({ file, document }: Located): string {
  return `${file}, document ${document}`;
}

/** How loadKustomizations picks files and where it says what it skipped. */
export interface LoadOptions {
  /** Picks files (one cluster's, see clusters.ts): a pattern whose files it all leaves out is not a problem. */
  keep?: (file: string) => boolean;
  /** Where the notes go: each matched file that holds no Kustomization, each generator of Kustomizations. */
  note?: (line: string) => void;
  /**
   * Which of `files` a Kustomization of the repository's other files builds: a child file that leaves
   * fields to its parent (deferredProblems) and is passed without it is kept when its parent is there.
   */
  builtElsewhere?: (files: readonly string[]) => Promise<ReadonlySet<string>>;
  /** Globs (relative to the root) of files never loaded, whatever the patterns match or an entry point reaches. */
  exclude?: readonly string[];
  /** Whether a Kustomization is built from this checkout (an entry point must be); all are without it. */
  fromCheckout?: (spec: KustomizationSpec) => Promise<boolean>;
}

/** A matched file without a Kustomization, with what it holds instead. */
interface Skipped {
  file: string;
  holds: string[];
}

/** At most this many files are named one by one as skipped; the rest are counted. */
const NOTED_FILES = 20;

/** `clusters/prod/apps.yaml holds no … Kustomization (ResourceSet flux-system/apps): skipped`. */
function skippedNote({ file, holds }: Skipped): string {
  const shown = holds.slice(0, 5).join(', ') + (holds.length > 5 ? `, and ${holds.length - 5} more` : '');
  return `${file} holds no ${FLUX_API_VERSION} Kustomization${holds.length > 0 ? ` (${shown})` : ''}: skipped`;
}

/** The notes on the skipped files: one a file, at most NOTED_FILES, then a count. */
export function skippedNotes(skipped: readonly Skipped[]): string[] {
  const notes = skipped.slice(0, NOTED_FILES).map(skippedNote);
  const more = skipped.length - NOTED_FILES;
  if (more > 0) notes.push(`${more} more matched files hold no ${FLUX_API_VERSION} Kustomization: skipped`);
  return notes;
}

/** What reading the files of the patterns found, before deciding whether finding none is a problem. */
interface Found {
  specs: KustomizationSpec[];
  skipped: Skipped[];
  generators: Generator[];
  /** Why there is no Kustomization, a sentence per pattern that matched files (used when there is none at all). */
  none: string[];
  /** Files only globs matched: one that cannot stand alone and that no Kustomization builds is skipped. */
  globbed: Set<string>;
  /** The notes on the entry points followed (entry.ts). */
  followed: string[];
}

/**
 * Loads the Flux Kustomizations that `patterns` (file paths or globs relative to `root`) point at,
 * in pattern order and, within a pattern, in sorted file order. A matched file that holds no
 * Kustomization (a ResourceSet, a FluxInstance, another source, plain manifests: a clusters/ folder
 * holds all kinds) is skipped with a note; the ResourceSets and FluxInstances among them are named
 * in a note as generating Kustomizations this run does not see. Refuses patterns that match no file
 * or leave the root, files that together hold no Kustomization at all (naming each pattern), and two
 * Kustomizations with the same namespace/name. Problems of all files are reported together in one
 * SpecError.
 */
export async function loadKustomizations(
  patterns: string[],
  root: string,
  options: LoadOptions = {},
): Promise<KustomizationSpec[]> {
  const found = await findKustomizations(patterns, root, options.keep, options);
  if (found.specs.length === 0 && found.none.length > 0) throw new SpecError(noneProblems(found));
  const { specs, unreached } = await placed(found, root, options.builtElsewhere);
  for (const line of foundNotes(found, specs, unreached)) options.note?.(line);
  return specs;
}

/**
 * loadKustomizations for each of `clusters` (the files clusterOf puts in it): a cluster whose files hold
 * no Kustomization is left out with a note, unless no cluster has any (then refused as loadKustomizations
 * refuses files without any).
 */
export async function loadClusters(
  patterns: string[],
  root: string,
  clusters: readonly string[],
  options: Pick<LoadOptions, 'note' | 'builtElsewhere' | 'exclude' | 'fromCheckout'> = {},
): Promise<Map<string, KustomizationSpec[]>> {
  const out = new Map<string, KustomizationSpec[]>();
  let empty = 0;
  const notes: string[] = [];
  for (const c of clusters) {
    const found = await findKustomizations(patterns, root, (f) => clusterOf(f) === c, options);
    if (found.specs.length === 0 && found.none.length > 0) {
      empty++;
      const files = found.skipped.map((s) => s.file);
      const shown = files.slice(0, 5).join(', ') + (files.length > 5 ? `, and ${files.length - 5} more` : '');
      notes.push(
        `cluster ${c || '(none)'}: no ${FLUX_API_VERSION} Kustomization in its files that kustomizations matches (${shown}): left out of the plan`,
        ...foundNotes({ ...found, skipped: [] }, [], []),
      );
      continue;
    }
    const { specs, unreached } = await placed(found, root, options.builtElsewhere);
    notes.push(...foundNotes(found, specs, unreached));
    out.set(c, specs);
  }
  // No cluster has any: refused as loadKustomizations refuses it, each pattern's files named together.
  if (out.size === 0 && empty > 0)
    throw new SpecError(noneProblems(await findKustomizations(patterns, root, undefined, options)));
  for (const line of notes) options.note?.(line);
  return out;
}

/** The problems of files without any Kustomization: a sentence per pattern, then what generates them. */
function noneProblems(found: Found): string[] {
  return [...found.none, ...found.generators.flatMap((g) => generatorNote(g, new Set()) ?? [])];
}

/** The notes of a load that found Kustomizations: entry points followed, the files skipped, then the generators. */
function foundNotes(found: Found, specs: readonly KustomizationSpec[], unreached: readonly string[]): string[] {
  const loaded = new Set(specs.map((s) => `${s.namespace}/${s.name}`));
  return [
    ...found.followed,
    ...unreachedNotes(unreached),
    ...skippedNotes(found.skipped),
    ...found.generators.flatMap((g) => generatorNote(g, loaded) ?? []),
  ];
}

/**
 * The specs with their namespaces under Flux (placeInNamespaces), refusing the same namespace/name twice
 * and a child file with fields left to a parent that no Kustomization builds (LoadOptions.builtElsewhere),
 * unless only a glob matched it: such a file is one Flux never applies (no parent lists it any more), and
 * is left out (`unreached`, the files) with a note rather than refusing the run.
 */
async function placed(
  found: Pick<Found, 'specs' | 'globbed'>,
  root: string,
  builtElsewhere?: LoadOptions['builtElsewhere'],
): Promise<{ specs: KustomizationSpec[]; unreached: string[] }> {
  let specs = found.specs;
  const unreached = new Set<string>();
  for (;;) {
    const result = await placeInNamespaces(specs, resolve(root));
    const orphans =
      result.orphans.length === 0 || builtElsewhere === undefined
        ? new Set<string>()
        : await builtElsewhere(result.orphans.map((s) => located(s).file));
    const problems = [...result.problems];
    const skip = new Set<string>();
    for (const spec of result.orphans) {
      const file = located(spec).file;
      if (orphans.has(file)) continue;
      if (found.globbed.has(file)) {
        skip.add(file);
        continue;
      }
      const hint =
        "; no Kustomization builds this file (a parent whose spec.patches or postBuild would set it: add the field, or pass the parent's file)";
      problems.push(...deferredProblems(spec)!.problems.map((p) => p + hint));
    }
    // Without the files left out, the others are placed again (one of them may have built another).
    if (skip.size > 0) {
      for (const f of skip) unreached.add(f);
      specs = specs.filter((s) => !skip.has(located(s).file));
      continue;
    }
    if (problems.length > 0) throw new SpecError(problems);
    const duplicates = duplicateProblems(result.specs);
    if (duplicates.length > 0) throw new DuplicateSpecError(duplicates);
    return { specs: result.specs, unreached: [...unreached].sort() };
  }
}

/** Reads the files of `patterns` that `keep` picks; throws the problems of patterns and files. */
async function findKustomizations(
  patterns: string[],
  root: string,
  keep: (file: string) => boolean = () => true,
  { exclude = [], fromCheckout }: Pick<LoadOptions, 'exclude' | 'fromCheckout'> = {},
): Promise<Found> {
  const excluded = excludedBy(exclude);
  const named = new Set<string>();
  const globbed = new Set<string>();
  const absoluteRoot = resolve(root);
  const realRoot = await realpath(absoluteRoot);
  const problems: string[] = [];
  const locations: SpecLocation[] = [];
  const specs: KustomizationSpec[] = [];
  const skipped: Skipped[] = [];
  const generators: Generator[] = [];
  const none: string[] = [];
  /** How many Kustomizations (valid or not) each file read so far holds; a file is read once. */
  const counts = new Map<string, number>();

  const readKustomizationFile = async (file: string): Promise<number> => {
    try {
      const parsed = parseKustomizationFile(await readFile(resolve(absoluteRoot, file), 'utf8'), file, {
        lenient: true,
      });
      specs.push(...parsed.specs);
      generators.push(...parsed.others.flatMap((doc) => generatorOf(doc, file) ?? []));
      if (parsed.specs.length === 0) {
        skipped.push({ file, holds: parsed.others.flatMap((doc) => objectName(doc) ?? []) });
      }
      return parsed.specs.length;
    } catch (error) {
      if (!(error instanceof SpecError)) throw error;
      problems.push(...error.problems);
      locations.push(...error.locations);
      // Counted as holding one, so that the file is not also reported as holding none.
      return 1;
    }
  };

  for (const pattern of patterns) {
    const quoted = JSON.stringify(pattern);
    const inside = patternInsideRoot(pattern, absoluteRoot);
    if (inside === undefined) {
      problems.push(`kustomizations pattern ${quoted} must stay inside the root ${absoluteRoot}`);
      continue;
    }
    const matched = (await matchFiles(inside, absoluteRoot, realRoot)).filter((f) => !excluded(f));
    const files = matched.filter(keep);
    for (const f of files) (GLOB_MAGIC.test(inside) ? globbed : named).add(f);
    if (matched.length > 0 && files.length === 0) continue;
    if (files.length === 0) {
      problems.push(`kustomizations pattern ${quoted} matches no file under ${absoluteRoot}`);
      continue;
    }
    let found = 0;
    for (const file of files) {
      const count = counts.get(file) ?? (await readKustomizationFile(file));
      counts.set(file, count);
      found += count;
    }
    if (found > 0) continue;
    none.push(
      GLOB_MAGIC.test(inside)
        ? `no ${FLUX_API_VERSION} Kustomization in the files that kustomizations pattern ${quoted} matches: ${files.join(', ')}`
        : `no ${FLUX_API_VERSION} Kustomization in ${files.join(', ')}`,
    );
  }
  if (problems.length > 0) throw new SpecError(problems, locations);
  // Flux's entry point named alone: what it applies is loaded too (entry.ts).
  const followed = await followFrom(absoluteRoot, specs, named, new Set(counts.keys()), excluded, fromCheckout);
  for (const file of followed.files) {
    counts.set(file, await readKustomizationFile(file));
    named.add(file);
  }
  if (problems.length > 0) throw new SpecError(problems, locations);
  for (const f of named) globbed.delete(f);
  return { specs, skipped, generators, none, globbed, followed: followed.notes };
}

function located(spec: KustomizationSpec): Located {
  return spec.origin.kind === 'file'
    ? { file: spec.origin.file, document: spec.origin.document }
    : { file: '', document: 0 };
}

/** Two Kustomizations with the same namespace/name, each pair as a sentence naming both places. */
function duplicateProblems(specs: readonly KustomizationSpec[]): string[] {
  const seen = new Map<string, Located>();
  const problems: string[] = [];
  for (const spec of specs) {
    const key = `${spec.namespace}/${spec.name}`;
    const earlier = seen.get(key);
    if (earlier === undefined) seen.set(key, located(spec));
    else problems.push(`Kustomization ${key} is defined twice: in ${where(earlier)} and in ${where(located(spec))}`);
  }
  return problems;
}

/**
 * Gives each Kustomization the namespace and name it has under Flux when another loaded Kustomization
 * builds its file (see applied-by.ts), reading it again with them.
 */
async function placeInNamespaces(
  specs: readonly KustomizationSpec[],
  root: string,
): Promise<{ specs: KustomizationSpec[]; problems: string[]; orphans: KustomizationSpec[] }> {
  const files = [...new Set(specs.map((spec) => located(spec).file))];
  const candidates = await mapLimit(specs, 4, async (spec) => ({
    key: `${writtenNamespace(spec) ?? DEFAULT_NAMESPACE}/${spec.name}`,
    name: spec.name,
    file: located(spec).file,
    ownNamespace: writtenNamespace(spec),
    targetNamespace: spec.targetNamespace,
    builds: await builtFiles(root, spec, files),
  }));
  const problems: string[] = [];
  const orphans: KustomizationSpec[] = [];
  const placed = decideNamespaces(candidates).map((decision, i) => {
    const spec = specs[i]!;
    // A field left out or a variable to substitute is the parent's to fix: one among these files
    // builds it, or else one of the repository's others must (see placed).
    if (deferredProblems(spec) !== undefined && decision.appliedBy === undefined) orphans.push(spec);
    if (decision.namespace === undefined) {
      problems.push(decision.problem);
      return spec;
    }
    try {
      return withIdentity(spec, decision);
    } catch (error) {
      // A prefix or suffix can make the name too long or invalid; say who gave it.
      if (!(error instanceof SpecError)) throw error;
      const by = `; Kustomization ${decision.appliedBy ?? ''}, which builds this file, gives it that name with its name prefix or suffix`;
      problems.push(...error.problems.map((p) => p + by));
      return spec;
    }
  });
  return { specs: placed, problems, orphans };
}

/** Whether a file (relative to the root) is one that `exclude`'s globs leave out. */
export function excludedBy(exclude: readonly string[]): (file: string) => boolean {
  const globs = exclude.map((g) => g.replace(/^\.\//, ''));
  return (file) => globs.some((g) => matchesGlob(file, g));
}
