/*
 * The envsubst parser (drone/envsubst's parse/parse.go and node.go): turns the template's bytes into text and
 * `${...}` nodes. The whole template is parsed before anything is evaluated.
 */

import { EnvsubstError } from './errors.js';
import { type Accept, COLON, EQUAL, HASH, PERCENT, RBRACE, SLASH, Scanner } from './scan.js';

const BAD_SUBSTITUTION = 'bad substitution';
const MISSING_CLOSING_BRACE = 'missing closing brace';
const BAD_VARIABLE_NAME = 'unable to parse variable name';
const BAD_FUNCTION_ARGUMENT = 'unable to parse substitution within function';
const BAD_DEFAULT = 'unable to parse default function';

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

export type TemplateNode = TextNode | ExprNode;

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
/** Parses a template (a byte string) into its nodes. Throws {@link EnvsubstError}. */
export function parseTemplate(bytes: string): TemplateNode[] {
  return new Parser(bytes).parseTemplate();
}

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
