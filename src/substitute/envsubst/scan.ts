/*
 * The envsubst scanner (drone/envsubst's parse/scan.go). Mirrors the Go scanner's observable behaviour: it works on
 * the UTF-8 bytes, remembers the width of the last rune read (stepping back always uses that width, even after a
 * peek), treats rune 0 as end of input, and drops the first character of an escape pair from the token.
 */

import { decodeRune } from './utf8.js';

const EOF = 0;
const DOLLAR = 0x24;
const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const COLON = 0x3a;
export const SLASH = 0x2f;
const BACKSLASH = 0x5c;
export const HASH = 0x23;
export const PERCENT = 0x25;
export const EQUAL = 0x3d;

export type Accept = (rune: number, offset: number) => boolean;

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

export class Scanner {
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
