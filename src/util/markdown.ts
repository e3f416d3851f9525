/**
 * Text from a tree, a server or a report file as GitHub Markdown that shows the text and nothing
 * else: the one place the renderings (PR comment, check run, job summary) put such text into
 * Markdown. Pure.
 *
 * GitHub renders Markdown (cmark-gfm), then runs filters over the HTML's text nodes outside code and
 * links: @-mentions (which notify), issue references (#1, GH-1, which cross-link), emoji. So:
 * - Markdown syntax is escaped with backslashes, only where a character could start markup: `\`,
 *   `` ` ``, `*`, `~`, `|` anywhere; `_` unless between two letters or digits (where GFM never reads
 *   it as emphasis: `my_app` stays as it is); `]` before `(`, `[` or `:` or at the end (every link,
 *   image, reference and footnote needs one, so `[flux-system/apps]` stays as it is); and at the
 *   start (where the text may start a line) a task box `[x]`, or `#`, `-`, `+`, `=`, `1.` (a
 *   heading, list item or setext underline);
 * - `<`, `>`, `&` become entities (raw HTML, autolinks, entities of the text's own), and `$` too
 *   (GitHub's math: an entity is text to its parser, where a backslash is not always enough);
 * - what the text filters would link is broken with a WORD JOINER (U+2060, invisible, no line
 *   break): after the `@` of a mention, a mail address or a commit reference, after `#` before a
 *   digit and `GH` before `-1` (issue references), after `:` in `://` and after `www` (bare URLs,
 *   which GFM autolinks). Backslashes or entities do not help there: the filters read the decoded text. An
 *   HTML comment (`@<!-- -->name`) would, but only where raw HTML is read, and the text's own `<`
 *   is an entity;
 * - line breaks (and U+2028, U+2029) become one space, so a text stays in its table cell, list item
 *   or line; other control characters and the bidirectional overrides (which can make a line read
 *   backwards) become U+FFFD.
 * Emoji shortcodes (`:+1:`) are left alone: GitHub draws them from its own images.
 */

/** U+2060 WORD JOINER: breaks a mention, a reference or an autolink, invisibly. */
export const WORD_JOINER = '\u2060';

const LINE_BREAKS = /[ \t]*(?:\r\n|[\n\r\v\f\u0085\u2028\u2029])\s*/g;
/** Controls (the line breaks and tabs are spaces by then), and the bidirectional embeddings, overrides and isolates. */
const UNSHOWABLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;

/** `s` on one line: line breaks as one space, tabs as spaces, other controls and bidi overrides as U+FFFD. */
export function oneLineText(s: string): string {
  return s.replace(LINE_BREAKS, ' ').replace(/\t/g, ' ').replace(UNSHOWABLE, '\uFFFD');
}

/**
 * Where a joiner goes: after an `@` that starts a mention (no ASCII word character before it; a
 * revision's `main@sha1:…` is left alone), a mail address (a dotted domain after it) or a commit
 * reference (`repo@0123abc`); after `#` before a digit, `GH` before `-1`, `:` before `//`, `www`
 * before `.`.
 */
const LINKABLE =
  /(?<![A-Za-z0-9_])@(?=[\p{L}\p{N}_])|@(?=[\p{L}\p{N}_-]+\.[\p{L}\p{N}])|@(?=[0-9a-f]{7,40}\b)|#(?=\p{N})|(?<![\p{L}\p{N}_])gh(?=-\p{N})|:(?=\/\/)|(?<![\p{L}\p{N}_])www(?=\.)/giu;

/** `s` with a word joiner wherever a mention, issue reference or bare URL would start. */
function defuse(s: string): string {
  return s.replace(LINKABLE, (m) => m + WORD_JOINER);
}

const ENTITY: Record<string, string> = {
  '<': '&lt;',
  '>': '&gt;',
  '&': '&amp;',
  '"': '&quot;',
  "'": '&#39;',
  $: '&#36;',
};
const WORDLIKE = /[\p{L}\p{N}]/u;

/**
 * The text as Markdown inline text, on one line: in a paragraph, list item, heading or table cell
 * (a `|` is escaped the way GFM tables take it), it renders as `s`.
 */
export function mdText(s: string): string {
  const text = defuse(oneLineText(s));
  // A task box (`[x] `) is markup only where the text starts (a list item's first line).
  const box = /^ *\[[ xX]\]/.exec(text) === null ? -1 : text.indexOf('[');
  const out = text.replace(/[\\`*_~[\]|<>&$]/g, (c, at: number) => {
    const after = text.charAt(at + 1);
    if (c === '_' && WORDLIKE.test(text.charAt(at - 1)) && WORDLIKE.test(after)) return c;
    // A link, an image, a reference or a footnote needs `](`, `][` or `]:` (or what follows the
    // text); escaping that `]` leaves its `[` text.
    if (c === ']' && after !== '' && !'([:'.includes(after)) return c;
    if (c === '[' && at !== box) return c;
    return ENTITY[c] ?? `\\${c}`;
  });
  // What only starts a block at the start of a line: a heading, a list item, a setext underline.
  return out.replace(/^( *)([#+=-])/, '$1\\$2').replace(/^( *)(\d{1,9})([.)])/, '$1$2\\$3');
}

/**
 * The text inside a line of raw HTML (the `<summary>` of a `<details>` block, where Markdown is not
 * read and a backslash would show): entities, one line, mentions and references broken.
 */
export function htmlText(s: string): string {
  return defuse(oneLineText(s)).replace(/[<>&"']/g, (c) => ENTITY[c]!);
}

/**
 * The text where GitHub shows plain text (a check run's title): one line, mentions, references and
 * URLs broken (invisibly) should it ever be read as more; nothing escaped that would show.
 */
export function plainText(s: string): string {
  return defuse(oneLineText(s));
}

/**
 * The text as an inline code span, on one line. A code span cannot be escaped: its fence is one
 * backtick longer than the longest run of backticks in the text, with a space inside either end
 * when the text starts or ends with a backtick (or with a space at both). In a table cell (`cell`),
 * each `|` is written `\|`, which GFM takes out before it reads the code span; a backslash before
 * it is kept apart by a word joiner, or the two would pair up and the `|` end the cell.
 */
export function mdCode(s: string, where: 'text' | 'cell' = 'text'): string {
  let body = oneLineText(s);
  if (where === 'cell') body = body.replace(/(\\?)\|/g, (_, bs: string) => `${bs ? `\\${WORD_JOINER}` : ''}\\|`);
  if (body === '') return '` `';
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad =
    body.startsWith('`') || body.endsWith('`') || (body.startsWith(' ') && body.endsWith(' ') && body.trim() !== '');
  return pad ? `${fence} ${body} ${fence}` : `${fence}${body}${fence}`;
}
