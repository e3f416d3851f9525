/*
 * Evaluation of parsed envsubst nodes (drone/envsubst's eval.go and template.go): looks variables up, applies the
 * strict-mode rule and maps each operator to its string function.
 */

import { EnvsubstError } from './errors.js';
import { lowerRune, mapFirstRune, mapRunes, replace, substring, trimPrefix, trimSuffix, upperRune } from './funcs.js';
import type { TemplateNode } from './parse.js';
import { fromBytes, toBytes } from './utf8.js';

/** Operators that tolerate an unset variable in strict mode (`isDefaultOp` in Go; `-` `+` `?` never parse). */
const DEFAULT_OPS = new Set(['-', '+', '=', '?', ':-', ':+', ':=', ':?']);

export class Evaluator {
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
