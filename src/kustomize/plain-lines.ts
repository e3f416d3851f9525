/**
 * A fast reader for the block-style YAML that manifests are mostly written in, for the plain build
 * (plain-yaml.ts): the documents of a file as JavaScript values, or undefined whenever the file
 * holds anything outside a narrow subset, and the yaml package then reads it. The subset: block
 * mappings and sequences (a sequence may sit at its key's indentation; `- key: value` starts a
 * mapping in an item), plain keys of letters, digits and `_./-`, single-line plain and quoted
 * scalars, `[]` and `{}`, literal block scalars (`|`, `|-`), comments and `---` separators, no
 * tabs and no carriage returns. Every value it gives is the one the yaml package's documents give
 * after plain-yaml.ts's checks: each scalar goes through the same rules (plain-scalars.ts), and
 * anything those would refuse is refused here. The proof is the differential test
 * (__tests__/unit/plain-lines.test.ts) on hand-written cases, the parity corpus and fuzzed files.
 * Parsing with the yaml package's full document model costs about 0.3 ms per small file; this
 * reader, about a tenth of it.
 */
import { CORE_BOOL, CORE_NULL, keyProblem, PLAIN_NUMBER, v3MayReadAsNonString } from './plain-scalars.js';

/** Nesting past this is left to the yaml package (and its depth check). */
const MAX_NESTING = 64;

/** Refusal: the file is left to the yaml package. */
class Refused extends Error {}
const REFUSED = new Refused();

/** A key the subset reads: plain, letters, digits and `_./-`, not starting with `-`. */
const KEY = /^[A-Za-z0-9_./][A-Za-z0-9_./-]*$/;
/** First characters of a plain scalar the subset reads (no indicator, no space, no quote). */
const PLAIN_START = /^[^-?:,[\]{}#&*!|>'"%@`\s]/;

interface Line {
  indent: number;
  /** The text after the indentation. */
  text: string;
}

/** The documents of `text` (non-empty mappings), or undefined when it is outside the subset. */
export function linesDocuments(text: string): Record<string, unknown>[] | undefined {
  if (text.includes('\t') || text.includes('\r')) return undefined;
  try {
    return new Reader(text).documents();
  } catch (err) {
    if (err instanceof Refused) return undefined;
    throw err;
  }
}

class Reader {
  private readonly lines: Line[];
  private i = 0;

  constructor(text: string) {
    this.lines = text.split('\n').map((raw) => {
      let indent = 0;
      while (raw.charCodeAt(indent) === 32) indent++;
      return { indent, text: raw.slice(indent) };
    });
  }

  documents(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (;;) {
      const line = this.peek();
      if (line === undefined) return out;
      if (isSeparator(line)) {
        this.i++;
        continue;
      }
      if (line.indent !== 0) throw REFUSED;
      const value = this.block(0, 1);
      if (!isMapping(value)) throw REFUSED;
      const next = this.peek();
      if (next !== undefined && !isSeparator(next)) throw REFUSED;
      out.push(value);
    }
  }

  /** The next line that is not blank or a comment (the index stays on it). */
  private peek(): Line | undefined {
    for (; this.i < this.lines.length; this.i++) {
      const line = this.lines[this.i]!;
      if (line.text !== '' && !line.text.startsWith('#')) return line;
    }
    return undefined;
  }

  /** The mapping or sequence whose first line (already peeked) is at `indent`. */
  private block(indent: number, depth: number): unknown {
    if (depth > MAX_NESTING) throw REFUSED;
    return isItem(this.lines[this.i]!.text) ? this.sequence(indent, depth) : this.mapping(indent, depth);
  }

  private mapping(indent: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let line = this.peek(); line !== undefined && line.indent === indent; line = this.peek()) {
      if (isSeparator(line) || isItem(line.text)) break;
      const colon = keyEnd(line.text);
      if (colon < 0) throw REFUSED;
      const key = line.text.slice(0, colon);
      if (!KEY.test(key) || keyProblem(key) !== undefined || Object.hasOwn(out, key)) throw REFUSED;
      const read = plainScalar(key);
      if (read !== key) throw REFUSED;
      out[key] = this.value(line.text.slice(colon + 1), indent, depth, true);
    }
    const after = this.peek();
    if (after !== undefined && after.indent > indent) throw REFUSED;
    return out;
  }

  private sequence(indent: number, depth: number): unknown[] {
    const out: unknown[] = [];
    for (let line = this.peek(); line !== undefined && line.indent === indent; line = this.peek()) {
      if (!isItem(line.text)) break;
      const rest = line.text.slice(1);
      const spaces = rest.length - rest.trimStart().length;
      const body = rest.trimStart();
      if (isItem(body) || keyEnd(body) >= 0) {
        // `- key: value` or `- - item`: a block that starts on this line, at the column of its text.
        this.lines[this.i] = { indent: indent + 1 + spaces, text: body };
        out.push(this.block(indent + 1 + spaces, depth + 1));
        continue;
      }
      const item = this.value(rest, indent, depth, false);
      if (item === null) throw REFUSED;
      out.push(item);
    }
    const after = this.peek();
    if (after !== undefined && after.indent > indent) throw REFUSED;
    return out;
  }

  /**
   * The value that follows a key's colon or an item's dash (`rest`, with its leading spaces), on
   * this line or below it; the index moves past it. `indent` is the key's or the dash's column.
   */
  private value(rest: string, indent: number, depth: number, inMapping: boolean): unknown {
    this.i++;
    if (rest !== '' && !rest.startsWith(' ')) throw REFUSED;
    const text = rest.trim();
    if (text === '' || text.startsWith('#')) {
      const next = this.peek();
      if (next === undefined || isSeparator(next)) throw REFUSED;
      if (next.indent > indent) return this.block(next.indent, depth + 1);
      // A sequence may sit at its key's indentation.
      if (inMapping && next.indent === indent && isItem(next.text)) return this.sequence(indent, depth + 1);
      throw REFUSED;
    }
    let value: unknown;
    if (text === '|' || text === '|-') {
      value = this.literal(indent, text === '|');
    } else {
      value = inlineScalar(text);
      const next = this.peek();
      // Below a scalar, only a line at the indentation of its key or item, or less.
      if (next !== undefined && next.indent > indent && !isSeparator(next)) throw REFUSED;
    }
    return value;
  }

  /** A literal block scalar below the line at `indent` (the header is read): clip or strip. */
  private literal(indent: number, clip: boolean): string {
    const start = this.i;
    let end = start;
    let width = -1;
    for (; end < this.lines.length; end++) {
      const line = this.lines[end]!;
      if (line.text === '') {
        // A blank line: spaces no deeper than the block's (still unknown when first) indentation.
        if (width < 0 ? line.indent > 0 : line.indent > width) throw REFUSED;
        continue;
      }
      if (width < 0) {
        if (end !== start) throw REFUSED; // leading blank lines
        if (line.indent < indent + 2) throw REFUSED;
        width = line.indent;
      }
      if (line.indent < width) break;
    }
    if (width < 0) throw REFUSED;
    // Trailing blank lines belong to no content (clip keeps one line break, strip none).
    let last = end;
    while (last > start && this.lines[last - 1]!.text === '') last--;
    const body: string[] = [];
    for (let k = start; k < last; k++) {
      const line = this.lines[k]!;
      body.push(line.text === '' ? '' : ' '.repeat(line.indent - width) + line.text);
    }
    this.i = end;
    const next = this.peek();
    if (next !== undefined && next.indent > indent && !isSeparator(next)) throw REFUSED;
    return body.join('\n') + (clip ? '\n' : '');
  }
}

const isSeparator = (line: Line) => line.indent === 0 && /^---[ ]*$/.test(line.text);
const isItem = (text: string) => text === '-' || text.startsWith('- ');
const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0;

/** The index of the colon that ends a plain key (`key:` then a space or the line's end), or -1. */
function keyEnd(text: string): number {
  const m = /^[A-Za-z0-9_./][A-Za-z0-9_./-]*:(?= |$)/.exec(text);
  return m ? m[0].length - 1 : -1;
}

/** A scalar written on one line (comment and spaces trimmed off), or a refusal. */
function inlineScalar(text: string): unknown {
  const c = text[0];
  if (c === '"') return closed(text, doubleQuoted(text));
  if (c === "'") return closed(text, singleQuoted(text));
  if (text === '[]' || text.startsWith('[] ')) return closed(text, { value: [], end: 2 });
  if (text === '{}' || text.startsWith('{} ')) return closed(text, { value: {}, end: 2 });
  if (!PLAIN_START.test(text)) throw REFUSED;
  const hash = text.indexOf(' #');
  const raw = (hash < 0 ? text : text.slice(0, hash)).trimEnd();
  if (raw.includes(': ') || raw.endsWith(':')) throw REFUSED;
  return plainScalar(raw);
}

/** The value, when what follows its end on the line is spaces and a comment at most. */
function closed(text: string, read: { value: unknown; end: number }): unknown {
  const tail = text.slice(read.end);
  if (tail !== '' && !/^ +(?:#.*)?$/.test(tail)) throw REFUSED;
  return read.value;
}

/** A plain scalar's value under the core schema, where yaml.v3 reads it alike (plain-yaml.ts's rule). */
function plainScalar(raw: string): unknown {
  if (CORE_NULL.has(raw)) {
    if (raw === '') throw REFUSED;
    return null;
  }
  if (CORE_BOOL.has(raw)) return raw[0] === 't' || raw[0] === 'T';
  if (!v3MayReadAsNonString(raw)) return raw;
  if (!PLAIN_NUMBER.test(raw)) throw REFUSED;
  const n = Number(raw);
  if (!Number.isFinite(n) || Object.is(n, -0)) throw REFUSED;
  if (!/[.eE]/.test(raw) && !Number.isSafeInteger(n)) throw REFUSED;
  return n;
}

/** `'…'` on one line, `''` for a quote. */
function singleQuoted(text: string): { value: string; end: number } {
  let value = '';
  for (let k = 1; ;) {
    const q = text.indexOf("'", k);
    if (q < 0) throw REFUSED;
    value += text.slice(k, q);
    if (text[q + 1] !== "'") return { value, end: q + 1 };
    value += "'";
    k = q + 2;
  }
}

/** `"…"` on one line, with only the escapes every reader takes alike (plain-yaml.ts). */
function doubleQuoted(text: string): { value: string; end: number } {
  let value = '';
  for (let k = 1; k < text.length; k++) {
    const ch = text[k]!;
    if (ch === '"') return { value, end: k + 1 };
    if (ch !== '\\') {
      value += ch;
      continue;
    }
    const e = text[++k];
    if (e === '\\' || e === '"') value += e;
    else if (e === 'n') value += '\n';
    else if (e === 't') value += '\t';
    else if (e === 'r') value += '\r';
    else if (
      e === 'u' &&
      /^[0-9a-fA-F]{4}$/.test(text.slice(k + 1, k + 5)) &&
      !/^[dD][89a-fA-F]/.test(text.slice(k + 1))
    ) {
      value += String.fromCharCode(parseInt(text.slice(k + 1, k + 5), 16));
      k += 4;
    } else throw REFUSED;
  }
  throw REFUSED;
}
