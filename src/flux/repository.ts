/**
 * The repository's Flux Kustomization files beyond those a run was given: where a child passed alone
 * finds its parent (children.ts). git's index names the files when the root is a checkout (fast,
 * and what a clone holds); otherwise the tree is walked. Only YAML files that mention Flux's group
 * are parsed; a file that does not parse is skipped (the run that loads it reports it).
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { parseKustomizations } from './parse.js';
import type { KustomizationSpec } from './types.js';
import { FLUX_GROUP } from '../objects/flux.js';
import { mapLimit } from '../util/concurrency.js';

const run = promisify(execFile);
const YAML = /\.ya?ml$/i;
/** A repository larger than this is not searched (a parent is then found only among the given files). */
const MAX_FILES = 20_000;
const MAX_BYTES = 1024 * 1024;
const SKIP_DIRS = new Set(['.git', 'node_modules']);

/** The YAML files under `root` (relative, `/`-separated): git's tracked files, or a walk of the tree. */
async function yamlFiles(root: string): Promise<string[]> {
  try {
    const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout.split('\0').filter((f) => YAML.test(f));
  } catch {
    const out: string[] = [];
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isFile() || !YAML.test(e.name)) continue;
      const rel = relative(root, join(e.parentPath, e.name)).split(sep).join('/');
      if (rel.split('/').some((part) => SKIP_DIRS.has(part))) continue;
      out.push(rel);
    }
    return out;
  }
}

/**
 * The repository's YAML files that may define a Flux Kustomization (they mention its group and kind),
 * other than `exclude`, sorted, each with its text; none for a repository past MAX_FILES files.
 */
export async function fluxKustomizationTexts(
  root: string,
  exclude: ReadonlySet<string> = new Set(),
): Promise<{ file: string; text: string }[]> {
  const files = (await yamlFiles(root)).filter((f) => !exclude.has(f)).sort();
  if (files.length > MAX_FILES) return [];
  const found = await mapLimit(files, 8, async (file) => {
    const text = await readFile(join(root, file), 'utf8').catch(() => '');
    if (text.length > MAX_BYTES || !text.includes(FLUX_GROUP) || !text.includes('Kustomization')) return [];
    return [{ file, text }];
  });
  return found.flat();
}

/** Every Flux Kustomization defined in the repository's files other than `exclude` (relative paths). */
export async function repositoryKustomizations(
  root: string,
  exclude: ReadonlySet<string>,
): Promise<KustomizationSpec[]> {
  return (await fluxKustomizationTexts(root, exclude)).flatMap(({ file, text }) => {
    try {
      return parseKustomizations(text, file);
    } catch {
      return [];
    }
  });
}
