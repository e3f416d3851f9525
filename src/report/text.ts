/**
 * Markdown text helpers for the PR comment and the check run: cutting to a length, one-line forms,
 * inline code and fences that the text cannot break out of, numbers as GitHub readers expect them.
 * Lengths are JS string lengths (UTF-16 code units). Text from a tree, a server or a file goes into
 * Markdown through markdown.ts only.
 */
import { mdCode, mdText } from '../util/markdown.js';

/** Longest first line of an error in a table cell or a check run title. */
export const FIRST_LINE_MAX = 100;

/** At most `max` UTF-16 units of `s`, never half a surrogate pair, and how many units were left out. */
export function cutChars(s: string, max: number): { text: string; cut: number } {
  if (s.length <= max) return { text: s, cut: 0 };
  let end = Math.max(0, Math.floor(max));
  const code = s.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return { text: s.slice(0, end), cut: s.length - end };
}

/** At most `limit` characters of `text`, ending at a line break where one is left. */
export function clamp(text: string, limit: number): string {
  const { text: kept, cut } = cutChars(text, limit);
  if (cut === 0) return kept;
  const end = kept.lastIndexOf('\n');
  return end > 0 ? kept.slice(0, end + 1) : kept;
}

export function firstLine(s: string, max: number): string {
  const line = s.split(/\r?\n/, 1)[0] ?? '';
  const { text, cut } = cutChars(line, max);
  return cut > 0 ? `${text}…` : text;
}

/** An object's subject as inline code (outside a table: in a table cell, mdCode(s, 'cell')). */
export function subject(s: string): string {
  return mdCode(s);
}

export function fields(n: number): string {
  return `${fmt(n)} field${n === 1 ? '' : 's'}`;
}

/** A triple backtick cannot close a fence once it is three quotes (as render.ts does). */
export function fence(s: string): string {
  return s.replaceAll('```', "'''");
}

/** A count with thousands separators; what a report file has instead of a number, as escaped text. */
export function fmt(n: number): string {
  return typeof n === 'number' ? n.toLocaleString('en-US') : mdText(String(n));
}

/** A URL as a Markdown link destination: whitespace, angle brackets and parentheses percent-encoded. */
export function safeUrl(url: string): string {
  return url.replace(/[\s<>()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
