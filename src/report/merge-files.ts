/**
 * The edge of the merge (mode: report, CLI `report`): finds the report files the jobs of a fan-out
 * wrote (report-file) and downloaded again, and reads them for mergeReports (merge.ts).
 */
import { glob, lstat, readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ReportFileError } from './file-error.js';
import { MAX_REPORT_FILE_BYTES, parseReportFile } from './file.js';
import type { NamedReportFile } from './merge.js';

/** At most this many report files in one merge (a matrix runs at most 256 jobs). */
export const MAX_REPORT_FILES = 2000;
/** At most this many bytes of report files in one merge. */
export const MAX_REPORT_BYTES = 512 * 1024 * 1024;

/**
 * The report files `patterns` match (globs relative to `root`, or absolute), each read and parsed,
 * sorted by name; a folder matched stands for the `.json` files in it and below it (what
 * actions/download-artifact leaves without merge-multiple). Names are relative to `root` where the
 * file is inside it. The files are untrusted (a fork's run may have written them): a symbolic link,
 * a file over MAX_REPORT_FILE_BYTES, more than MAX_REPORT_FILES files or MAX_REPORT_BYTES in all
 * are refused before anything is read. Throws when no file matches (saying how to download them) or
 * when any file is not a report file (naming each).
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
  if (named.length > MAX_REPORT_FILES) {
    throw new Error(`${named.length} report files match: more than ${MAX_REPORT_FILES} are not merged`);
  }
  const problems: string[] = [];
  const sizes = new Map<string, number>();
  for (const { path, name } of named) {
    const info = await lstat(path);
    if (info.isSymbolicLink()) problems.push(`${name}: a symbolic link; report files are plain files`);
    else if (info.size > MAX_REPORT_FILE_BYTES)
      problems.push(
        `${name}: ${info.size} bytes, over ${MAX_REPORT_FILE_BYTES / 1024 / 1024} MiB: not a report file this version writes`,
      );
    else sizes.set(path, info.size);
  }
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  if (total > MAX_REPORT_BYTES) {
    throw new Error(`the report files hold ${total} bytes in all, over ${MAX_REPORT_BYTES / 1024 / 1024} MiB`);
  }
  const files: NamedReportFile[] = [];
  for (const { path, name } of named) {
    if (!sizes.has(path)) continue;
    try {
      files.push({ name, file: parseReportFile(await readBounded(path), name) });
    } catch (err) {
      problems.push(ReportFileError.of(name, err).message);
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `${problems.length === 1 ? 'a report file' : `${problems.length} report files`} cannot be merged:\n${problems.join('\n')}`,
    );
  }
  return files;
}

/** A file's text, refused when it grew past the bound since it was looked at. */
async function readBounded(path: string): Promise<string> {
  const data = await readFile(path);
  if (data.length > MAX_REPORT_FILE_BYTES) throw new Error(`over ${MAX_REPORT_FILE_BYTES / 1024 / 1024} MiB`);
  return data.toString('utf8');
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
    // A symbolic link is kept, to be refused by name; a folder behind one is not walked.
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile() === true || info?.isSymbolicLink() === true) out.push(path);
    if (info?.isDirectory() === true) {
      for await (const inner of glob('**/*.json', { cwd: path })) {
        const file = resolve(path, inner);
        const kind = await lstat(file).catch(() => undefined);
        if (kind?.isFile() === true || kind?.isSymbolicLink() === true) out.push(file);
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
