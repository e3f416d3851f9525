/**
 * The edge of the merge (mode: report, CLI `report`): finds the report files the jobs of a fan-out
 * wrote (report-file) and downloaded again, and reads them for mergeReports (merge.ts).
 */
import { glob, readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { parseReportFile } from './file.js';
import type { NamedReportFile } from './merge.js';

/**
 * The report files `patterns` match (globs relative to `root`, or absolute), each read and parsed,
 * sorted by name; a folder matched stands for the `.json` files in it and below it (what
 * actions/download-artifact leaves without merge-multiple). Names are relative to `root` where the
 * file is inside it. Throws when no file matches (saying how to download them) or when any file is
 * not a report file (naming each).
 */
export async function readReportFiles(patterns: readonly string[], root: string): Promise<NamedReportFile[]> {
  const base = resolve(root);
  const paths = new Set<string>();
  for (const pattern of patterns) for (const p of await matches(pattern, base)) paths.add(p);
  if (paths.size === 0) {
    const quoted = patterns.map((p) => JSON.stringify(p)).join(', ');
    throw new Error(
      `no report file matches ${quoted || 'the reports input (empty)'} under ${base}: download the jobs' report files ` +
        'before this step, e.g. actions/download-artifact with pattern: (the artifacts of report-file) and merge-multiple: true, ' +
        'and set reports to where they went (such as reports/*.json)',
    );
  }
  const named = [...paths].map((p) => ({ path: p, name: nameOf(p, base) })).sort((a, b) => compare(a.name, b.name));
  const problems: string[] = [];
  const files: NamedReportFile[] = [];
  for (const { path, name } of named) {
    try {
      files.push({ name, file: parseReportFile(await readFile(path, 'utf8'), name) });
    } catch (err) {
      const message = (err as Error).message;
      problems.push(message.startsWith(`${name}:`) ? message : `${name}: ${message}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `${problems.length === 1 ? 'a report file' : `${problems.length} report files`} cannot be merged:\n${problems.join('\n')}`,
    );
  }
  return files;
}

/** The absolute paths of the files one pattern matches; a folder matched gives its `.json` files. */
async function matches(pattern: string, base: string): Promise<string[]> {
  // Node's glob does not climb out of its cwd: a pattern that does is made absolute.
  const climbs = pattern.split(/[\\/]/).includes('..');
  const absolute = isAbsolute(pattern) || climbs;
  const out: string[] = [];
  const found = glob(absolute ? resolve(base, pattern) : pattern, { cwd: base });
  for await (const match of found) {
    const path = resolve(base, match);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() === true) out.push(path);
    if (info?.isDirectory() === true) {
      for await (const inner of glob('**/*.json', { cwd: path })) {
        const file = resolve(path, inner);
        if ((await stat(file).catch(() => undefined))?.isFile() === true) out.push(file);
      }
    }
  }
  return out;
}

/** A file's name in errors and notes: relative to the root, with `/`, when it is inside it. */
function nameOf(path: string, base: string): string {
  const rel = relative(base, path);
  const inside = rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
  return (inside ? rel : path).split(sep).join('/');
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
