/**
 * Cutting long texts (error messages, a child process's stderr) to a readable size, with a count of
 * what was left out, so that a 4 MB error or a 300-line runtime dump never fills a report or a log.
 */

export interface TruncateLimits {
  /** At most this many characters (UTF-16 code units) of the text are kept. */
  chars?: number;
  /** At most this many lines are kept. */
  lines?: number;
}

/** The limits used when none are given: enough for any sentence, short enough for a log line. */
export const DEFAULT_LIMITS: Required<TruncateLimits> = { chars: 2000, lines: 20 };

/**
 * `text` cut to `limits` (each default from DEFAULT_LIMITS), followed on the same line by
 * `[… N more characters left out]`, or `[… N more lines (M characters) left out]` when whole lines
 * were dropped. A text within the limits is returned unchanged. The cut never splits a surrogate
 * pair, and trailing blanks before it are dropped.
 */
export function truncate(text: string, limits: TruncateLimits = {}): string {
  const maxChars = Math.max(0, Math.floor(limits.chars ?? DEFAULT_LIMITS.chars));
  const maxLines = Math.max(1, Math.floor(limits.lines ?? DEFAULT_LIMITS.lines));
  let end = Math.min(text.length, maxChars);
  let newlines = 0;
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10 && ++newlines === maxLines) {
      end = i;
      break;
    }
  }
  if (end >= text.length) return text;
  // Do not keep the first half of a surrogate pair without its second.
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  const kept = text.slice(0, end).replace(/\s+$/, '');
  const left = text.length - kept.length;
  const rest = text.slice(end);
  const moreLines = rest.startsWith('\n') ? countLines(rest.slice(1)) : countLines(rest) - 1;
  const marker =
    moreLines > 0
      ? `[… ${count(moreLines)} more ${moreLines === 1 ? 'line' : 'lines'} (${count(left)} characters) left out]`
      : `[… ${count(left)} more ${left === 1 ? 'character' : 'characters'} left out]`;
  return kept === '' ? marker : `${kept} ${marker}`;
}

/**
 * A value quoted in a one-line message: `text` when it is at most `max` characters, else its first
 * `max` characters and `…`, with its whole length when `counted`; so that a message does not grow
 * with a hostile input.
 */
export function clip(text: string, max: number, counted = false): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}…${counted ? ` (${text.length} characters)` : ''}`;
}

/** The number of lines of a text: its line breaks plus one, not counting a final line break. */
function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = 0; i < text.length - 1; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
