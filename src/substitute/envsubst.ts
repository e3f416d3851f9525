/**
 * Flux's variable substitution (`github.com/fluxcd/pkg/envsubst`, a fork of drone/envsubst), re-implemented in
 * TypeScript. kustomize-controller runs it over the YAML text of every resource (`spec.postBuild`).
 *
 * The goal is byte-for-byte parity with the Go library (checked against envsubst v1.10.0), quirks included. The
 * Go package is a hand-written scanner whose edge cases are defined by its mechanics more than by any grammar, so
 * this module models the same scanner state (byte position, width of the last rune read, escape removal) and
 * every answer in `__tests__/unit/envsubst.test.ts` comes from running the real Go library.
 *
 * Internally every Go `string` is a "byte string": a JS string whose char codes are bytes (0-255). Slicing,
 * lengths, `indexOf` and comparisons on such strings are exactly Go's byte-level operations. Templates and
 * variable values are UTF-8 encoded on the way in (a lone UTF-16 surrogate, which UTF-8 cannot hold, becomes
 * U+FFFD); the result is decoded on the way out.
 *
 * Invalid UTF-8 in the result: Go strings may hold any bytes and several operations below cut inside a multi-byte
 * character. Such bytes are rendered as U+FFFD, one U+FFFD per invalid byte, which is what Go's own decoders
 * (`for range`, `[]rune(s)`, `encoding/json`) produce. (This is not the WHATWG `TextDecoder` rule, which folds a
 * truncated sequence into a single U+FFFD.)
 *
 * Where Flux differs from bash (all confirmed with the Go library):
 * - Only `${...}` is expanded. `$var` is plain text; `$$` is an escape for `$`, so `$${v}` produces `${v}` and
 *   `$$v` produces `$v`. Outside `${}` a backslash is plain text. Inside `${}` escapes (`$$`, `\/`, `\\`) exist
 *   only in the two arguments of the replace forms; in defaults, offsets and trim patterns they are literal text
 *   (`${e:-$$}` gives `$$`), and trim patterns see `\` as a glob escape.
 * - `${v-d}`, `${v+d}`, `${v?d}` are not recognised: after a name only `}`, `:`, `=`, `,`, `^`, `/`, `#`, `%` may
 *   follow, so these fail with "missing closing brace". (Flux's docs list them as supported or "unsupported"; in
 *   fact they break the whole resource.)
 * - `${v=d}`, `${v:=d}`, `${v:-d}` and the parse-only `${v:+d}`, `${v:?d}` all mean the same thing: "use d when
 *   the value is EMPTY". Unset and empty are not distinguished, nothing is assigned, `:+` is not "alternate value"
 *   and `:?` never raises an error.
 * - Default arguments are evaluated eagerly, before the variable is looked up: `${set:-${unset}}` fails in strict
 *   mode although the default is not used.
 * - Strict mode rejects an unset variable in `${v}` and in every value-reading form (`${#v}`, `${v^^}`, `${v:1}`,
 *   `${v/a/b}`, `${v#p}` ...), but not in the default forms (`=`, `:=`, `:-`, `:+`, `:?`).
 * - Lengths, offsets and substrings count UTF-8 bytes, not characters: `${#v}` of "héllo" is 6, `${v:1:2}` of
 *   "héllo" is "é", `${v:1}` of "日本" starts inside a character (rendered as U+FFFD).
 * - `${v:off:len}`: a non-numeric offset or length returns the value unchanged; an offset past the end gives "";
 *   a negative length counts back from the end (`${v:1:-1}`), but gives "" if it ends before the offset. The
 *   numbers are Go `strconv.Atoi` (optional sign, ASCII digits, 64-bit). Offset + length overflowing 64 bits is a
 *   Go runtime panic; here it throws `EnvsubstError` with the panic text. A negative offset counts from the end,
 *   but can only be written through a nested expression (`${v:${n}}`): `${v:-3}` is a default and `${v: -3}`
 *   is not a number.
 * - `${v: -1}` is not bash's "last character" (the space makes the offset non-numeric: value unchanged) and
 *   `${v:-1}` is the default form (default "1").
 * - A non-ASCII character right after `${v:` (e.g. `${v:é}`) is "bad substitution": the scanner steps back by the
 *   width of the peeked rune instead of the `:`.
 * - `${v#p}`, `${v##p}`, `${v%p}`, `${v%%p}` use a modified Go `path.Match`: `*` and `?` DO match `/`, a trailing
 *   `*` matches everything, `[...]` classes use `^` (not `!`) for negation, `\` escapes. A malformed pattern
 *   (`[`, `[]`, trailing `\`) leaves the value unchanged. Prefixes are tried at every byte length but the empty
 *   prefix is never tried, so `${v#*}` removes the first byte (bash removes nothing), `${v%*}` the last
 *   character, and `?` may match a single byte of a multi-byte character (leaving invalid UTF-8).
 * - `%` and `%%` reverse the value AND the pattern rune by rune and strip a prefix, so patterns are read
 *   backwards: `${v%[0-9]}` becomes `]9-0[` (malformed, value unchanged) and `${v%\.txt}` becomes `txt.\`
 *   (a lone trailing backslash: malformed). Simple patterns like `.*`, `/*`, `-*` work as in bash. A cut inside a
 *   character of the reversed value comes back as real U+FFFD characters (`${v%?}` of "日本" is "日" + two
 *   U+FFFD).
 * - `${v/p/r}`, `${v//p/r}`, `${v/#p/r}`, `${v/%p/r}` use literal substrings, not globs. In the pattern and the
 *   replacement `\/` is `/`, `\\` is `\` and `$$` is `$`. The pattern ends at the first `/` only, not at `}`:
 *   `${v/a}` is "bad substitution" and `${v/a} b/c}` replaces "a} b" with "c". An empty replacement deletes for
 *   `/` and `//`, but `${v/#p/}` and `${v/%p/}` leave the value unchanged. An empty pattern (from a nested
 *   `${}`) inserts the replacement before the value (`/`, `/#`), after it (`/%`) or between every character
 *   (`//`).
 * - `${v^}`, `${v^^}`, `${v,}`, `${v,,}` use Go's simple (one rune to one rune) Unicode case mapping: `ß`
 *   stays `ß`, `ﬁ` stays `ﬁ`, and there is no final-sigma rule. Any other mix of up to two `^`/`,` (`${v^,}`)
 *   returns the value unchanged.
 * - Names are Unicode letters, digits and `_` (`${日本}` and `${1a}` are valid references). `${}` and `${-x}` are
 *   "unable to parse variable name".
 * - `${#v}` must be exactly that; `${#}`, `${##v}` and `${#v:1}` are "bad substitution". In the trim forms
 *   `${v###}` strips a literal `#`.
 * - A NUL character in the template ends it: the rest of the text is dropped (inside `${` it is an error).
 *   Go's scanner uses rune 0 as its end-of-input marker.
 * - The whole template is parsed before anything is evaluated, so a syntax error anywhere wins over a strict-mode
 *   error earlier in the text.
 */

import { Buffer, isUtf8 } from 'node:buffer';

/** Options of {@link envsubst}. */
export interface EnvsubstOptions {
  /** Flux's `StrictPostBuildSubstitutions`: an unset variable read without a default is an error. */
  strict: boolean;
  /**
   * Called after each top-level `${...}` expression is evaluated, with the UTF-8 byte range of its
   * output in the result; the lookups it made came just before (for provenance: which fields a
   * variable went into).
   */
  onExpression?: (start: number, end: number) => void;
}

/** A parse or strict-mode error, with the texts of the Go library. */
export class EnvsubstError extends Error {
  /** The unset variable, for strict-mode errors. */
  readonly variable?: string;

  constructor(message: string, variable?: string) {
    super(message);
    this.name = 'EnvsubstError';
    if (variable !== undefined) this.variable = variable;
  }
}

const BAD_SUBSTITUTION = 'bad substitution';
const MISSING_CLOSING_BRACE = 'missing closing brace';
const BAD_VARIABLE_NAME = 'unable to parse variable name';
const BAD_FUNCTION_ARGUMENT = 'unable to parse substitution within function';
const BAD_DEFAULT = 'unable to parse default function';

/**
 * Expands the `${...}` expressions of `template` like Flux. `lookup` returns undefined for an unset variable.
 * Throws {@link EnvsubstError}.
 */
export function envsubst(
  template: string,
  lookup: (name: string) => string | undefined,
  options: EnvsubstOptions,
): string {
  const nodes = new Parser(toBytes(template)).parseTemplate();
  const evaluator = new Evaluator(lookup, options.strict);
  const parts: string[] = [];
  let at = 0;
  for (const n of nodes) {
    const out = evaluator.evaluate(n);
    if (n.kind !== 'text') options.onExpression?.(at, at + out.length);
    parts.push(out);
    at += out.length;
  }
  return fromBytes(parts.join(''));
}

// ---------------------------------------------------------------------------------------------------------------
// Byte strings and Go-style UTF-8.

const REPLACEMENT = 0xfffd;

function toBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Go's `utf8.DecodeRuneInString`: [rune, width]; an invalid or truncated sequence is [U+FFFD, 1]. */
function decodeRune(bytes: string, at: number): [number, number] {
  if (at >= bytes.length) return [REPLACEMENT, 0];
  const b0 = bytes.charCodeAt(at);
  if (b0 < 0x80) return [b0, 1];
  let size: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) size = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    if (b0 === 0xe0) lo = 0xa0;
    if (b0 === 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f;
  } else return [REPLACEMENT, 1];
  if (at + size > bytes.length) return [REPLACEMENT, 1];
  const b1 = bytes.charCodeAt(at + 1);
  if (b1 < lo || b1 > hi) return [REPLACEMENT, 1];
  let rune = b0 & (0xff >> (size + 1));
  rune = (rune << 6) | (b1 & 0x3f);
  for (let k = 2; k < size; k++) {
    const b = bytes.charCodeAt(at + k);
    if (b < 0x80 || b > 0xbf) return [REPLACEMENT, 1];
    rune = (rune << 6) | (b & 0x3f);
  }
  return [rune, size];
}

function runesOf(bytes: string): number[] {
  const runes: number[] = [];
  for (let at = 0; at < bytes.length;) {
    const [rune, width] = decodeRune(bytes, at);
    runes.push(rune);
    at += width;
  }
  return runes;
}

function encodeRune(rune: number): string {
  return toBytes(String.fromCodePoint(rune));
}

/** Renders a Go string: valid UTF-8 as is, each invalid byte as U+FFFD. */
function fromBytes(bytes: string): string {
  // Fast path: pure ASCII.
  if (!/[\x80-\xff]/.test(bytes)) return bytes;
  const buffer = Buffer.from(bytes, 'latin1');
  if (isUtf8(buffer)) return buffer.toString('utf8');
  const runes = runesOf(bytes);
  let out = '';
  for (let i = 0; i < runes.length; i += 4096) out += String.fromCodePoint(...runes.slice(i, i + 4096));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Scanner. Mirrors the Go scanner's observable behaviour: it works on the UTF-8 bytes, remembers the width of
// the last rune read (stepping back always uses that width, even after a peek), treats rune 0 as end of input,
// and drops the first character of an escape pair from the token.

const EOF = 0;
const DOLLAR = 0x24;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const COLON = 0x3a;
const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const HASH = 0x23;
const PERCENT = 0x25;
const EQUAL = 0x3d;

type Accept = (rune: number, offset: number) => boolean;

interface ScanMode {
  /** Runs of accepted runes form a text token. */
  text?: boolean;
  /** `${` is a token (and ends a text token). */
  open?: boolean;
  /** `}` is a token. */
  close?: boolean;
  /** Escape pairs (`$$`, and `\/` `\\` when enabled) are reduced to their second character. */
  escapes?: boolean;
}

type Token = 'end' | 'open' | 'close' | 'text' | 'illegal';

class Scanner {
  private pos = 0;
  private start = 0;
  private width = 0;
  /** Escape characters removed from the current token (indexes into `buf`, ascending). */
  private dropped: number[] = [];
  /** `\/` and `\\` are escapes (inside `${...}`); `$$` always is when escapes are scanned. */
  backslashEscapes = false;

  constructor(private readonly buf: string) {}

  /** The text of the last token, without the dropped escape characters. */
  get token(): string {
    let text = '';
    let from = this.start;
    for (const at of this.dropped) {
      text += this.buf.slice(from, at);
      from = at + 1;
    }
    return text + this.buf.slice(from, this.pos);
  }

  /** Length of the current token so far (what the accept functions receive). */
  private get offset(): number {
    return this.pos - this.start - this.dropped.length;
  }

  next(): number {
    if (this.pos >= this.buf.length) {
      this.width = 0;
      return EOF;
    }
    const byte = this.buf.charCodeAt(this.pos);
    if (byte < 0x80) {
      this.width = 1;
      this.pos += 1;
      return byte;
    }
    const [rune, width] = decodeRune(this.buf, this.pos);
    this.width = width;
    this.pos += width;
    return rune;
  }

  back(): void {
    this.pos -= this.width;
  }

  peek(): number {
    const rune = this.next();
    this.back();
    return rune;
  }

  scan(mode: ScanMode, accept: Accept): Token {
    this.start = this.pos;
    this.dropped = [];
    const rune = this.next();
    if (rune === EOF) return 'end';
    if (mode.open === true && this.isOpen(rune)) return 'open';
    if (mode.close === true && rune === RBRACE) return 'close';
    if (mode.text === true && this.scanText(rune, mode, accept)) return 'text';
    return 'illegal';
  }

  private scanText(first: number, mode: ScanMode, accept: Accept): boolean {
    if (this.isEscape(first, mode)) this.dropPrevious();
    else if (!accept(first, this.offset)) return false;
    for (;;) {
      const rune = this.next();
      if (rune === EOF) {
        this.back();
        return true;
      }
      if (mode.open === true && this.isOpen(rune)) {
        this.back();
        this.back();
        return true;
      }
      if (this.isEscape(rune, mode)) {
        this.dropPrevious();
        continue;
      }
      if (!accept(rune, this.offset)) {
        this.back();
        return true;
      }
    }
  }

  /** After reading `rune`: is it the `$` of `${`? Consumes the `{` if so. */
  private isOpen(rune: number): boolean {
    if (rune !== DOLLAR) return false;
    if (this.next() === LBRACE) return true;
    this.back();
    return false;
  }

  private isEscape(rune: number, mode: ScanMode): boolean {
    if (mode.escapes !== true) return false;
    if (rune === DOLLAR && this.peek() === DOLLAR) return true;
    if (rune === BACKSLASH && this.backslashEscapes) {
      const following = this.peek();
      return following === SLASH || following === BACKSLASH;
    }
    return false;
  }

  /**
   * Drops the (single-byte) escape character just read and takes the escaped one (also a single byte) into the
   * token without looking at it. Go deletes the byte from its buffer and keeps its position, which comes to the
   * same; the buffer is left untouched here so that long templates with many escapes stay linear.
   */
  private dropPrevious(): void {
    this.dropped.push(this.pos - 1);
    this.pos += 1;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parser.

interface TextNode {
  readonly kind: 'text';
  readonly value: string;
}

interface ExprNode {
  readonly kind: 'expr';
  /** Variable name (bytes). */
  readonly name: string;
  /** Operator as scanned: '' for `${v}`, '#', '##', ':', ':-', '//', '^^', ... */
  readonly op: string;
  readonly args: readonly TemplateNode[];
}

type TemplateNode = TextNode | ExprNode;

const anyRune: Accept = () => true;
const LETTER_OR_DIGIT = /^[\p{L}\p{Nd}]$/u;
const identRune: Accept = (r) =>
  r < 0x80
    ? r === 0x5f || (r >= 0x30 && r <= 0x39) || ((r | 0x20) >= 0x61 && (r | 0x20) <= 0x7a)
    : LETTER_OR_DIGIT.test(String.fromCodePoint(r));
const notClose: Accept = (r) => r !== RBRACE;
const notColonOrClose: Accept = (r) => r !== COLON && r !== RBRACE;
const notSlash: Accept = (r) => r !== SLASH;
const onlyColon: Accept = (r) => r === COLON;
const onlySlash: Accept = (r) => r === SLASH;
const lengthOp: Accept = (r, i) => r === HASH && i === 1;
const substringOp: Accept = (r, i) => r === COLON && i === 1;
const hashOp: Accept = (r, i) => r === HASH && i < 3;
const percentOp: Accept = (r, i) => r === PERCENT && i < 3;
const caseOp: Accept = (r, i) => (r === 0x2c || r === 0x5e) && i < 3;
const equalOp: Accept = (r, i) => r === EQUAL && i === 1;
const isDefaultSecond = (r: number): boolean => r === EQUAL || r === 0x2d || r === 0x3f || r === 0x2b;
const defaultOp: Accept = (r, i) => (i === 1 && r === COLON) || (i === 2 && isDefaultSecond(r));
const replaceOp: Accept = (r, i) =>
  (i === 1 && r === SLASH) || (i === 2 && (r === SLASH || r === HASH || r === PERCENT));

class Parser {
  private readonly s: Scanner;

  constructor(bytes: string) {
    this.s = new Scanner(bytes);
  }

  parseTemplate(): TemplateNode[] {
    const nodes: TemplateNode[] = [];
    for (;;) {
      this.s.backslashEscapes = false;
      switch (this.s.scan({ text: true, open: true, escapes: true }, anyRune)) {
        case 'text':
          nodes.push({ kind: 'text', value: this.s.token });
          break;
        case 'open':
          nodes.push(this.parseExpression());
          break;
        case 'end':
          return nodes;
        default:
          throw new EnvsubstError(BAD_SUBSTITUTION);
      }
    }
  }

  /** After `${`. */
  private parseExpression(): ExprNode {
    this.s.backslashEscapes = true;
    if (this.s.peek() === HASH) return this.parseLength();
    if (this.s.scan({ text: true }, identRune) !== 'text') throw new EnvsubstError(BAD_VARIABLE_NAME);
    const name = this.s.token;
    switch (this.s.peek()) {
      case COLON:
        return this.parseColon(name);
      case EQUAL:
        return this.parseDefault(name);
      case 0x2c: // ,
      case 0x5e: // ^
        return this.expr(name, this.operator(caseOp), []);
      case SLASH:
        return this.parseReplace(name);
      case HASH:
        return this.parseTrim(name, hashOp);
      case PERCENT:
        return this.parseTrim(name, percentOp);
    }
    if (this.s.scan({ close: true }, identRune) !== 'close') throw new EnvsubstError(MISSING_CLOSING_BRACE);
    return { kind: 'expr', name, op: '', args: [] };
  }

  /** `${#name}` */
  private parseLength(): ExprNode {
    const op = this.operator(lengthOp);
    if (this.s.scan({ text: true }, identRune) !== 'text') throw new EnvsubstError(BAD_SUBSTITUTION);
    return this.expr(this.s.token, op, []);
  }

  /** `${name:` is either a default (`:-` `:=` `:+` `:?`) or a substring. */
  private parseColon(name: string): ExprNode {
    this.s.next();
    const following = this.s.peek();
    // Steps back by the width of `following`, not of the colon (Go does the same).
    this.s.back();
    if (isDefaultSecond(following)) return this.parseDefault(name);
    const op = this.operator(substringOp);
    const offset = this.parseArgument(notColonOrClose, false);
    switch (this.s.scan({ text: true, close: true }, onlyColon)) {
      case 'close':
        return { kind: 'expr', name, op, args: [offset] };
      case 'text':
        return this.expr(name, op, [offset, this.parseArgument(notClose, false)]);
      default:
        throw new EnvsubstError(BAD_SUBSTITUTION);
    }
  }

  /** `${name#p}` `${name##p}` `${name%p}` `${name%%p}` */
  private parseTrim(name: string, accept: Accept): ExprNode {
    const op = this.operator(accept);
    return this.expr(name, op, [this.parseArgument(notClose, false)]);
  }

  /** `${name/p/r}` `${name//p/r}` `${name/#p/r}` `${name/%p/r}` */
  private parseReplace(name: string): ExprNode {
    const op = this.operator(replaceOp);
    const pattern = this.parseArgument(notSlash, true);
    if (this.s.scan({ text: true }, onlySlash) !== 'text') throw new EnvsubstError(BAD_SUBSTITUTION);
    if (this.s.peek() === RBRACE) return this.expr(name, op, [pattern]);
    return this.expr(name, op, [pattern, this.parseArgument(notClose, true)]);
  }

  /** `${name=d}` `${name:=d}` `${name:-d}` `${name:+d}` `${name:?d}`; d is any mix of text and `${...}`. */
  private parseDefault(name: string): ExprNode {
    const accept = this.s.peek() === EQUAL ? equalOp : defaultOp;
    if (this.s.scan({ text: true }, accept) !== 'text') throw new EnvsubstError(BAD_DEFAULT);
    const op = this.s.token;
    const args: TemplateNode[] = [];
    while (this.s.peek() !== RBRACE) args.push(this.parseArgument(notClose, false));
    return this.expr(name, op, args);
  }

  private operator(accept: Accept): string {
    if (this.s.scan({ text: true }, accept) !== 'text') throw new EnvsubstError(BAD_SUBSTITUTION);
    return this.s.token;
  }

  /** One function argument: a nested `${...}` or a run of accepted text. */
  private parseArgument(accept: Accept, escapes: boolean): TemplateNode {
    switch (this.s.scan({ text: true, open: true, escapes }, accept)) {
      case 'open':
        return this.parseExpression();
      case 'text':
        return { kind: 'text', value: this.s.token };
      default:
        throw new EnvsubstError(BAD_FUNCTION_ARGUMENT);
    }
  }

  /** Consumes the closing brace and builds the node. */
  private expr(name: string, op: string, args: TemplateNode[]): ExprNode {
    if (this.s.scan({ close: true }, anyRune) !== 'close') throw new EnvsubstError(BAD_SUBSTITUTION);
    return { kind: 'expr', name, op, args };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation.

/** Operators that tolerate an unset variable in strict mode (`isDefaultOp` in Go; `-` `+` `?` never parse). */
const DEFAULT_OPS = new Set(['-', '+', '=', '?', ':-', ':+', ':=', ':?']);

class Evaluator {
  constructor(
    private readonly lookup: (name: string) => string | undefined,
    private readonly strict: boolean,
  ) {}

  evaluate(node: TemplateNode): string {
    if (node.kind === 'text') return node.value;
    // Arguments first (so a default's nested expressions are evaluated, and may fail, even when unused).
    const args = node.args.map((arg) => this.evaluate(arg));
    const name = fromBytes(node.name);
    const value = this.lookup(name);
    if (value === undefined && this.strict && !DEFAULT_OPS.has(node.op)) {
      throw new EnvsubstError(`variable not set (strict mode): "${name}"`, name);
    }
    return applyOperator(node.op, toBytes(value ?? ''), args);
  }
}

function applyOperator(op: string, value: string, args: string[]): string {
  const [first = '', second = ''] = args;
  switch (op) {
    case ',':
      return mapFirstRune(value, lowerRune);
    case ',,':
      return mapRunes(value, lowerRune);
    case '^':
      return mapFirstRune(value, upperRune);
    case '^^':
      return mapRunes(value, upperRune);
    case '#':
      return args.length === 0 ? String(value.length) : trimPrefix(value, first, false);
    case '##':
      return trimPrefix(value, first, true);
    case '%':
      return trimSuffix(value, first, false);
    case '%%':
      return trimSuffix(value, first, true);
    case ':':
      return substring(value, args);
    case '/#':
      if (args.length !== 2 || !value.startsWith(first)) return value;
      return replace(value, first, second, 1);
    case '/%':
      if (args.length !== 2 || !value.endsWith(first)) return value;
      return value.slice(0, value.length - first.length) + second;
    case '/':
      return replace(value, first, second, 1);
    case '//':
      return replace(value, first, second, -1);
    default:
      // `${v}`, all default forms and unknown case operators such as `^,`.
      return value === '' && args.length > 0 ? args.join('') : value;
  }
}

// Case mapping: Go's unicode.ToUpper / ToLower are one-rune-to-one-rune ("simple") mappings. JS only has the full
// mappings; where the full mapping yields several runes the simple one is usually "unchanged", except for these.
const SIMPLE_UPPER_EXCEPTIONS = new Map<number, number>([
  ...[0x1f80, 0x1f90, 0x1fa0].flatMap((base) =>
    Array.from({ length: 8 }, (_, k): [number, number] => [base + k, base + k + 8]),
  ),
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
]);
const SIMPLE_LOWER_EXCEPTIONS = new Map<number, number>([[0x130, 0x69]]);

function simpleCase(rune: number, full: string, exceptions: Map<number, number>): number {
  const exception = exceptions.get(rune);
  if (exception !== undefined) return exception;
  const mapped = full.codePointAt(0);
  return mapped !== undefined && full.length === String.fromCodePoint(mapped).length ? mapped : rune;
}

function upperRune(rune: number): number {
  return rune < 0x80
    ? rune >= 0x61 && rune <= 0x7a
      ? rune - 0x20
      : rune
    : simpleCase(rune, String.fromCodePoint(rune).toUpperCase(), SIMPLE_UPPER_EXCEPTIONS);
}

function lowerRune(rune: number): number {
  return rune < 0x80
    ? rune >= 0x41 && rune <= 0x5a
      ? rune + 0x20
      : rune
    : simpleCase(rune, String.fromCodePoint(rune).toLowerCase(), SIMPLE_LOWER_EXCEPTIONS);
}

/** strings.ToUpper/ToLower: rune by rune (an invalid byte becomes U+FFFD). */
function mapRunes(value: string, map: (rune: number) => number): string {
  return runesOf(value)
    .map((r) => encodeRune(map(r)))
    .join('');
}

function mapFirstRune(value: string, map: (rune: number) => number): string {
  if (value === '') return value;
  const [rune, width] = decodeRune(value, 0);
  return encodeRune(map(rune)) + value.slice(width);
}

// strconv.Atoi on a 64-bit platform.
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function atoi(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function wrapInt64(n: bigint): bigint {
  return BigInt.asIntN(64, n);
}

/** `${v:offset}` / `${v:offset:length}`, in bytes. */
function substring(value: string, args: string[]): string {
  const size = BigInt(value.length);
  let pos = atoi(args[0] ?? '');
  if (pos === undefined) return value;
  if (pos < 0n) pos = size + pos > 0n ? size + pos : 0n;
  const rest = (): string => (pos < size ? value.slice(Number(pos)) : '');
  if (args.length === 1) return rest();
  const length = atoi(args[1] ?? '');
  if (length === undefined) return value;
  if (length < 0n) {
    const end = size + length;
    return end < pos ? '' : value.slice(Number(pos), Number(end));
  }
  const end = wrapInt64(pos + length);
  if (end >= size) return rest();
  // Only reachable when pos + length overflowed: Go panics on the negative slice bound.
  if (end < 0n) throw new EnvsubstError(`panic: runtime error: slice bounds out of range [:${end.toString()}]`);
  return value.slice(Number(pos), Number(end));
}

/** strings.Replace(s, old, replacement, n); n < 0 means all. An empty `old` matches before every rune and at the end. */
function replace(s: string, old: string, replacement: string, n: number): string {
  if (old === replacement || n === 0) return s;
  let out = '';
  let start = 0;
  for (let i = 0; n < 0 || i < n; i++) {
    let at: number;
    if (old === '') {
      if (i > 0) {
        if (start >= s.length) break;
        at = start + decodeRune(s, start)[1];
      } else at = 0;
    } else {
      at = s.indexOf(old, start);
      if (at < 0) break;
    }
    out += s.slice(start, at) + replacement;
    start = at + old.length;
  }
  return out + s.slice(start);
}

function reverseRunes(s: string): string {
  return runesOf(s).reverse().map(encodeRune).join('');
}

/**
 * Removes the shortest or longest non-empty prefix of `value` that matches `pattern`. Prefixes are tried at every
 * byte length; a malformed pattern leaves the value unchanged.
 */
function trimPrefix(value: string, pattern: string, longest: boolean): string {
  let match = '';
  for (let end = value.length; end > 0; end--) {
    const prefix = value.slice(0, end);
    const matched = globMatch(pattern, prefix);
    if (matched === undefined) return value;
    if (matched) {
      match = prefix;
      if (longest) break;
    }
  }
  return value.slice(match.length);
}

function trimSuffix(value: string, pattern: string, longest: boolean): string {
  return reverseRunes(trimPrefix(reverseRunes(value), reverseRunes(pattern), longest));
}

// Glob matching of envsubst's fork of Go's path.Match. Returns undefined for a malformed pattern, which is only
// detected when the matcher reaches the malformed part while there is still input to match.

function globMatch(pattern: string, name: string): boolean | undefined {
  let rest = pattern;
  let input = name;
  nextChunk: while (rest.length > 0) {
    const { star, chunk, after } = splitChunk(rest);
    rest = after;
    if (star && chunk === '') return true;
    const here = matchChunk(chunk, input);
    if (here.ok && (here.rest.length === 0 || rest.length > 0)) {
      input = here.rest;
      continue;
    }
    if (here.malformed) return undefined;
    if (star) {
      for (let skip = 1; skip <= input.length; skip++) {
        const there = matchChunk(chunk, input.slice(skip));
        if (there.ok) {
          if (rest.length === 0 && there.rest.length > 0) continue;
          input = there.rest;
          continue nextChunk;
        }
        if (there.malformed) return undefined;
      }
    }
    return false;
  }
  return input.length === 0;
}

/** Splits off leading stars and the following run of single-rune matchers. */
function splitChunk(pattern: string): { star: boolean; chunk: string; after: string } {
  let from = 0;
  while (pattern.charCodeAt(from) === 0x2a) from++;
  let inRange = false;
  let i = from;
  scan: for (; i < pattern.length; i++) {
    switch (pattern[i]) {
      case '\\':
        if (i + 1 < pattern.length) i++;
        break;
      case '[':
        inRange = true;
        break;
      case ']':
        inRange = false;
        break;
      case '*':
        if (!inRange) break scan;
    }
  }
  return { star: from > 0, chunk: pattern.slice(from, i), after: pattern.slice(i) };
}

interface ChunkResult {
  ok: boolean;
  rest: string;
  malformed: boolean;
}

const NO_MATCH: ChunkResult = { ok: false, rest: '', malformed: false };
const MALFORMED: ChunkResult = { ok: false, rest: '', malformed: true };

function matchChunk(chunk: string, input: string): ChunkResult {
  let c = chunk;
  let s = input;
  while (c.length > 0) {
    if (s.length === 0) return NO_MATCH;
    switch (c[0]) {
      case '[': {
        const [rune, width] = decodeRune(s, 0);
        s = s.slice(width);
        c = c.slice(1);
        const negated = c[0] === '^';
        if (negated) c = c.slice(1);
        let matched = false;
        for (let ranges = 0; ; ranges++) {
          if (c[0] === ']' && ranges > 0) {
            c = c.slice(1);
            break;
          }
          const lo = classRune(c);
          if (lo === undefined) return MALFORMED;
          let hiRune = lo.rune;
          c = lo.after;
          if (c[0] === '-') {
            const hi = classRune(c.slice(1));
            if (hi === undefined) return MALFORMED;
            hiRune = hi.rune;
            c = hi.after;
          }
          if (lo.rune <= rune && rune <= hiRune) matched = true;
        }
        if (matched === negated) return NO_MATCH;
        break;
      }
      case '?':
        s = s.slice(decodeRune(s, 0)[1]);
        c = c.slice(1);
        break;
      case '\\':
        c = c.slice(1);
        if (c.length === 0) return MALFORMED;
        if (c[0] !== s[0]) return NO_MATCH;
        s = s.slice(1);
        c = c.slice(1);
        break;
      default:
        if (c[0] !== s[0]) return NO_MATCH;
        s = s.slice(1);
        c = c.slice(1);
    }
  }
  return { ok: true, rest: s, malformed: false };
}

/** One (possibly escaped) rune of a character class; undefined when malformed. */
function classRune(chunk: string): { rune: number; after: string } | undefined {
  let c = chunk;
  if (c.length === 0 || c[0] === '-' || c[0] === ']') return undefined;
  if (c[0] === '\\') {
    c = c.slice(1);
    if (c.length === 0) return undefined;
  }
  const [rune, width] = decodeRune(c, 0);
  const after = c.slice(width);
  if ((rune === REPLACEMENT && width === 1) || after.length === 0) return undefined;
  return { rune, after };
}
