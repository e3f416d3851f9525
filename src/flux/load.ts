import { glob, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { FLUX_API_VERSION } from '../objects/flux.js';
import { mapLimit } from '../util/concurrency.js';
import { builtFiles, decideNamespaces } from './applied-by.js';
import {
  DEFAULT_NAMESPACE,
  SpecError,
  normalizeSourcePath,
  type SpecLocation,
  parseKustomizations,
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

/** True when `path` (real, symlinks resolved) is `root` or below it. */
function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
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
    // A symlink in the tree could point anywhere; the files read must stay in the checkout.
    if (!isInside(await realpath(absolute), realRoot)) {
      throw new SpecError([`kustomizations pattern ${JSON.stringify(pattern)}: ${match} links outside the root`]);
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
export async function kustomizationFiles(patterns: readonly string[], root: string): Promise<string[]> {
  const absoluteRoot = resolve(root);
  const realRoot = await realpath(absoluteRoot);
  const files = new Set<string>();
  for (const pattern of patterns) {
    const inside = patternInsideRoot(pattern, absoluteRoot);
    if (inside === undefined) continue;
    for (const f of await matchFiles(inside, absoluteRoot, realRoot)) files.add(f);
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

/**
 * Loads the Flux Kustomizations that `patterns` (file paths or globs relative to `root`) point at,
 * in pattern order and, within a pattern, in sorted file order. Refuses patterns that match no file
 * or leave the root, a file named without a glob that holds no v1 Kustomization, a glob whose files
 * hold none, and two Kustomizations with the same namespace/name. Problems of all files are
 * reported together in one SpecError. `keep` picks files (one cluster's, see clusters.ts): a
 * pattern whose files it all leaves out is not a problem.
 */
export async function loadKustomizations(
  patterns: string[],
  root: string,
  keep: (file: string) => boolean = () => true,
): Promise<KustomizationSpec[]> {
  const absoluteRoot = resolve(root);
  const realRoot = await realpath(absoluteRoot);
  const problems: string[] = [];
  const locations: SpecLocation[] = [];
  const specs: KustomizationSpec[] = [];
  /** How many Kustomizations (valid or not) each file read so far holds; a file is read once. */
  const counts = new Map<string, number>();

  const readKustomizationFile = async (file: string): Promise<number> => {
    try {
      const parsed = parseKustomizations(await readFile(resolve(absoluteRoot, file), 'utf8'), file);
      specs.push(...parsed);
      return parsed.length;
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
    const matched = await matchFiles(inside, absoluteRoot, realRoot);
    const files = matched.filter(keep);
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
      // A glob over a Flux repository also matches plain manifests and kustomization.yaml files,
      // so only a file named outright must hold a Kustomization.
      if (count === 0 && !GLOB_MAGIC.test(inside)) problems.push(`no ${FLUX_API_VERSION} Kustomization in ${file}`);
    }
    if (found === 0 && GLOB_MAGIC.test(inside)) {
      problems.push(
        `no ${FLUX_API_VERSION} Kustomization in the files that kustomizations pattern ${quoted} matches: ${files.join(', ')}`,
      );
    }
  }
  if (problems.length > 0) throw new SpecError(problems, locations);
  const placed = await placeInNamespaces(specs, absoluteRoot);
  if (placed.problems.length > 0) throw new SpecError(placed.problems);
  const duplicates = duplicateProblems(placed.specs);
  if (duplicates.length > 0) throw new SpecError(duplicates);
  return placed.specs;
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
): Promise<{ specs: KustomizationSpec[]; problems: string[] }> {
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
  const placed = decideNamespaces(candidates).map((decision, i) => {
    const spec = specs[i]!;
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
  return { specs: placed, problems };
}
