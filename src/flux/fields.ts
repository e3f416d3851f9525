/*
 * Reading untyped YAML into typed fields while collecting problems: each reader reports what is wrong with
 * the field at `at` (a path such as `spec.patches[0].target.kind`) and returns undefined, so a file's
 * problems are all gathered before one SpecError is thrown.
 */

import { UserError } from '../util/user-error.js';

/** Longest problem line of a SpecError, and how many of them its message lists. */
const MAX_PROBLEM = 500;
const PROBLEMS_SHOWN = 30;

/** A Kustomization file or action input that breaks Flux's rules; `problems` has one line per problem. */
export class SpecError extends UserError {
  readonly problems: string[];
  /** Where problems point, for those whose file (and field) is known: annotations on the file. */
  readonly locations: SpecLocation[];

  constructor(problems: string[], locations: readonly SpecLocation[] = []) {
    // Each line cut, and the list after PROBLEMS_SHOWN counted: a message must not grow with the input.
    const lines = problems.map((p) => (p.length > MAX_PROBLEM ? `${p.slice(0, MAX_PROBLEM)}… (cut)` : p));
    const shown = lines.slice(0, PROBLEMS_SHOWN);
    const more = lines.length > PROBLEMS_SHOWN ? `\n- and ${lines.length - PROBLEMS_SHOWN} more problems` : '';
    super(lines.length === 1 ? lines[0]! : `${lines.length} problems:\n- ${shown.join('\n- ')}${more}`);
    this.name = 'SpecError';
    this.problems = lines;
    this.locations = [...locations];
  }
}

/** A SpecError whose problems are Kustomizations defined twice (one namespace/name in two places). */
export class DuplicateSpecError extends SpecError {
  constructor(problems: string[]) {
    super(problems);
    this.name = 'DuplicateSpecError';
  }
}

/** Where one problem of a Kustomization file is: the file, its document, and the field's path. */
export interface SpecLocation {
  message: string;
  file: string;
  /** 1-based document number in the file. */
  document: number;
  /** `spec.patches[0].target.kind`; undefined for the document as a whole. */
  field?: string;
}

/**
 * Problems of one Kustomization, each `field: message`. `field` is a path such as
 * `spec.patches[0].target.kind` for files or `input "timeout"` for the action's inputs.
 */
export class Problems {
  readonly items: string[] = [];
  /** The field of each item, where it has one (same order as items). */
  readonly fields: (string | undefined)[] = [];

  add(field: string, message: string): void {
    this.items.push(`${field}: ${message}`);
    this.fields.push(field);
  }

  addRaw(text: string): void {
    this.items.push(text);
    this.fields.push(undefined);
  }
}

export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a field that is left out; YAML `key:` with no value (null) counts as left out, as in Kubernetes. */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

export function quote(text: string): string {
  return JSON.stringify(text);
}

/** Describes a value for a message: strings quoted, numbers and booleans as written, else their YAML shape. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (value === null || value === undefined) return 'nothing';
  return Array.isArray(value) ? 'a list' : 'a mapping';
}

/** `parent.key`, or `parent["odd/key"]` when the key is not a plain identifier, or `parent[3]`. */
export function child(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (parent === '') return key;
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${quote(key)}]`;
}

export function reportMissing(p: Problems, at: string, required: boolean): void {
  if (required) p.add(at, 'is required');
}

/** Levenshtein distance, small inputs only: for "did you mean" hints on unknown fields. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known field closest to `key` (a case slip first, then the fewest edits, at most 2), as a hint. */
function suggestion(key: string, known: readonly string[]): string {
  const lower = key.toLowerCase();
  let close = known.find((k) => k.toLowerCase() === lower);
  if (close === undefined) {
    let best = 3;
    for (const k of known) {
      const d = editDistance(k, key);
      if (d < best) [best, close] = [d, k];
    }
  }
  return close === undefined ? '' : ` (did you mean ${close}?)`;
}

interface MappingOptions {
  required?: boolean;
  /** Fields that older API versions had, with what to do instead. */
  removed?: Readonly<Record<string, string>>;
}

/** Reads a mapping and reports every key outside `known`, as Flux's CRD (strict field validation) would. */
export function readMapping(
  p: Problems,
  value: unknown,
  at: string,
  known: readonly string[],
  options: MappingOptions = {},
): Mapping | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, options.required ?? false);
    return undefined;
  }
  if (!isMapping(value)) {
    p.add(at, `must be a mapping, got ${describe(value)}`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const removed = options.removed?.[key];
    const field = child(at, key);
    p.addRaw(removed === undefined ? `unknown field ${field}${suggestion(key, known)}` : `${field}: ${removed}`);
  }
  return value;
}

interface StringOptions {
  required?: boolean;
  /** Minimum length; 1 means an empty string is an error rather than "not set". */
  min?: number;
  max?: number;
  /** Line breaks and tabs are part of the value (a patch, a CEL expression); other control characters never are. */
  multiline?: boolean;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Why `text` is refused for its control characters, or undefined. A name, a path or a reference
 * with a line break (or another control character) is never meant, and one printed in a log
 * could start a line of its own.
 */
export function controlCharacterProblem(text: string, multiline = false): string | undefined {
  const m = (multiline ? CONTROL_BUT_LINES : CONTROL).exec(text);
  if (m === null) return undefined;
  const code = `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  const what =
    m[0] === '\n'
      ? 'a line break'
      : m[0] === '\r'
        ? 'a carriage return'
        : m[0] === '\t'
          ? 'a tab'
          : 'a control character';
  return `must not contain ${what} (${code}, at character ${m.index + 1})`;
}

/**
 * A text from a tree as a message shows it: as it is, or quoted with its control characters escaped
 * (`"x\n::y"`) when it has any, so that a refused name reads as one name on one line.
 */
export function shownText(text: string): string {
  return CONTROL.test(text) ? JSON.stringify(text) : text;
}

/**
 * Reads a string. An empty optional string means "not set", as Go's omitempty does, unless the CRD
 * gives a minimum length; an empty required string is an error.
 */
export function readString(p: Problems, value: unknown, at: string, options: StringOptions = {}): string | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, options.required ?? false);
    return undefined;
  }
  if (typeof value !== 'string') {
    const hint = typeof value === 'number' || typeof value === 'boolean' ? ` (quote it: "${String(value)}")` : '';
    p.add(at, `must be a string, got ${describe(value)}${hint}`);
    return undefined;
  }
  const control = controlCharacterProblem(value, options.multiline);
  if (control !== undefined) {
    p.add(at, control);
    return undefined;
  }
  const min = options.min ?? (options.required ? 1 : 0);
  if (value === '') {
    if (min > 0) p.add(at, 'must not be empty');
    return undefined;
  }
  if (value.length < min) {
    p.add(at, `${quote(value)} is shorter than ${min} characters`);
    return undefined;
  }
  if (options.max !== undefined && value.length > options.max) {
    p.add(at, `is ${value.length} characters long, more than the ${options.max} allowed`);
    return undefined;
  }
  return value;
}

/** Reads a string (see readString) that must also pass `problemOf`, which says why a text is refused. */
export function readCheckedString(
  p: Problems,
  value: unknown,
  at: string,
  options: StringOptions,
  problemOf: (text: string) => string | undefined,
): string | undefined {
  const text = readString(p, value, at, options);
  if (text === undefined) return undefined;
  const problem = problemOf(text);
  if (problem !== undefined) p.add(at, problem);
  return problem === undefined ? text : undefined;
}

/** Reads a boolean; strings such as "true" are refused because Flux's CRD types the field boolean. */
export function readBoolean(p: Problems, value: unknown, at: string, required = false): boolean | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  if (typeof value === 'boolean') return value;
  p.add(at, `must be a YAML boolean (true or false, without quotes), got ${describe(value)}`);
  return undefined;
}

export function readEnum<T extends string>(
  p: Problems,
  value: unknown,
  at: string,
  allowed: readonly T[],
  required = false,
): T | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  const found = allowed.find((option) => option === value);
  if (found === undefined) {
    const shown = typeof value === 'string' ? quote(value) : describe(value);
    p.add(at, `${shown} is not one of ${allowed.join(', ')}`);
  }
  return found;
}

/** Reads a list, reading each entry with `item`; entries that fail are left out (their problems are kept). */
export function readList<T>(
  p: Problems,
  value: unknown,
  at: string,
  item: (entry: unknown, at: string, index: number) => T | undefined,
): T[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) {
    p.add(at, `must be a list, got ${describe(value)}`);
    return [];
  }
  const items: T[] = [];
  value.forEach((entry: unknown, index) => {
    const read = item(entry, child(at, index), index);
    if (read !== undefined) items.push(read);
  });
  return items;
}

/** Reads a `map[string]string`; non-string values are reported by key, with a hint to quote them. */
export function readStringMap(p: Problems, value: unknown, at: string): Record<string, string> | undefined {
  if (isAbsent(value)) return undefined;
  if (!isMapping(value)) {
    p.add(at, `must be a mapping of strings, got ${describe(value)}`);
    return undefined;
  }
  const map: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    const field = child(at, key);
    if (typeof entry === 'string') {
      map[key] = entry;
    } else if (typeof entry === 'number' || typeof entry === 'boolean') {
      p.add(field, `must be a string, got ${describe(entry)}; quote it ("${String(entry)}") so YAML keeps it a string`);
    } else {
      p.add(field, `must be a string, got ${describe(entry)}`);
    }
  }
  return map;
}

/** Drops keys whose value is undefined, so parsed specs print and compare without empty keys. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
