/**
 * A field change's values as text for the CLI's diff and the PR comment's diff block: JSON at most
 * 80 characters, two long values cut around where they first differ, and a list whose length
 * changed as the edits of its elements. The mask markers are shown bare and never cut. Pure.
 */
import { deepEqual } from './drift.js';

export const MASK = '***';
export const MASK_BEFORE = '*** (before)';
export const MASK_AFTER = '*** (after)';
const MASKS: readonly unknown[] = [MASK, MASK_BEFORE, MASK_AFTER];

/** The most characters a rendered value takes, `…` marks included. */
export const VALUE_WIDTH = 80;
/** Characters kept before the first difference when a value is cut there. */
const CONTEXT = 20;

/** True for the markers a masked value is replaced by (`***`, `*** (before)`, `*** (after)`). */
export function isMask(v: unknown): boolean {
  return MASKS.includes(v);
}

/** JSON of a value (`undefined` for none); a mask marker bare. */
function text(v: unknown): string {
  if (isMask(v)) return v as string;
  return v === undefined ? 'undefined' : JSON.stringify(v);
}

/** True when the value is shown whole, uncut. */
export function fitsWidth(v: unknown): boolean {
  return text(v).length <= VALUE_WIDTH;
}

/** JSON, at most 80 characters (cut with `…`); the mask markers are shown bare. */
export function renderValue(v: unknown): string {
  return window(text(v), 0);
}

/**
 * The two sides of a changed value, each at most 80 characters. Where the head of each (what
 * renderValue shows) would not show where they differ, both are cut at one place: `…`, the 20
 * characters before the first difference, then as much as fits. A masked side is never cut: both
 * sides are then rendered as renderValue renders them, nothing of either is picked out.
 */
export function renderPair(before: unknown, after: unknown): [string, string] {
  if (isMask(before) || isMask(after)) return [renderValue(before), renderValue(after)];
  const a = text(before);
  const b = text(after);
  const first = commonPrefix(a, b);
  // The head shows VALUE_WIDTH - 1 characters: cut elsewhere only when it would show fewer than
  // CONTEXT characters from the first difference on.
  const start = first + CONTEXT < VALUE_WIDTH - 1 ? 0 : noSplit(a, first - CONTEXT);
  return [window(a, start), window(b, start)];
}

/** `s` from `start` (after a `…` when that is not 0), at most VALUE_WIDTH characters with the marks. */
function window(s: string, start: number): string {
  const lead = start > 0 ? '…' : '';
  const rest = s.slice(start);
  if (lead.length + rest.length <= VALUE_WIDTH) return lead + rest;
  const room = VALUE_WIDTH - lead.length - 1;
  return lead + s.slice(start, noSplit(s, start + room)) + '…';
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** `at`, moved back one where it would split a surrogate pair (never below 0). */
function noSplit(s: string, at: number): number {
  const i = Math.max(0, at);
  const code = s.charCodeAt(i);
  return i > 0 && code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

/** Elements of one list: index in the list it is in (removed: the old one; added: the new one). */
export interface Element {
  index: number;
  value: unknown;
}

/** A run of edits between elements both lists keep: these removed from the old, these added in the new. */
export interface Hunk {
  removed: Element[];
  added: Element[];
}

/**
 * The edits from list `a` to list `b`, as runs between the elements both keep (a longest common
 * subsequence, elements compared deeply). Past `maxCells` (the part between the common head and
 * tail, old length × new length) that part is one run.
 */
export function listHunks(a: readonly unknown[], b: readonly unknown[], maxCells = 10_000): Hunk[] {
  let head = 0;
  while (head < a.length && head < b.length && deepEqual(a[head], b[head])) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && deepEqual(a[a.length - 1 - tail], b[b.length - 1 - tail]))
    tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const at = (list: readonly unknown[]): Element[] => list.map((value, i) => ({ index: head + i, value }));
  if (x.length === 0 && y.length === 0) return [];
  if (x.length * y.length > maxCells) return [{ removed: at(x), added: at(y) }];
  // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--)
      lcs[i]![j] = deepEqual(x[i], y[j]) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const hunks: Hunk[] = [];
  let run: Hunk | undefined;
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && deepEqual(x[i], y[j])) {
      run = undefined;
      i++;
      j++;
      continue;
    }
    if (!run) hunks.push((run = { removed: [], added: [] }));
    if (i < x.length && (j >= y.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      run.removed.push({ index: head + i, value: x[i] });
      i++;
    } else {
      run.added.push({ index: head + j, value: y[j] });
      j++;
    }
  }
  return hunks;
}
