import { yamlAliasFinding } from '../util/bounded.js';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Document } from 'yaml';
import { clip } from '../util/truncate.js';

/**
 * How deep a YAML value may nest. Real manifests stay far below it (a CRD's OpenAPI schema, the
 * deepest common case, nests a few dozen levels); past it the yaml parser, kustomize and every
 * recursive step after them (substitution, diff, masking) risk running out of stack.
 */
export const MAX_DEPTH = 256;
/** YAML aliases beyond this count are refused, so a "billion laughs" document cannot exhaust memory. */
export const MAX_ALIAS_COUNT = 100;

/** Characters YAML does not allow in a stream (C0 controls other than tab and line breaks, and DEL), as kustomize's YAML reader refuses them. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]/;

/** One document of a stream: its value, or a sentence saying why it cannot be read. */
export interface YamlDocument {
  /** 1-based position in the stream. */
  document: number;
  /** 1-based line where the document's content starts, when known. */
  line?: number;
  value?: unknown;
  /** Why it cannot be read: `source, document N: problem` (failure's message). */
  error?: string;
  /** The same in parts. */
  failure?: YamlError;
}

/** A YAML text that cannot be read, in parts: the text's name, the document (when known), and why. */
export class YamlError extends Error {
  constructor(
    readonly source: string,
    readonly document: number | undefined,
    readonly problem: string,
  ) {
    super(`${source}${document === undefined ? '' : `, document ${document}`}: ${problem}`);
    this.name = 'YamlError';
  }
}

/** A document that cannot be read, its error said whole and in parts. */
function unreadable(source: string, document: number | undefined, problem: string): YamlDocument {
  const failure = new YamlError(source, document, problem);
  return { document: document ?? 1, error: failure.message, failure };
}

/**
 * Parses a multi-document YAML stream with bounded cost: time linear in the input (duplicate keys
 * are found with a set per mapping, not with the yaml package's pairwise `uniqueKeys` check, which
 * takes minutes on a 50,000-key map), nesting bounded by MAX_DEPTH and aliases by MAX_ALIAS_COUNT.
 * Content after a document end marker (`...`) that does not start a new document with `---` is an
 * error (kustomize drops it silently). Each error is one line naming `source` and the document.
 */
export function parseYamlStream(text: string, source: string): YamlDocument[] {
  const control = CONTROL.exec(text);
  if (control) {
    const line = text.slice(0, control.index).split('\n').length;
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return [
      unreadable(
        source,
        undefined,
        `control character U+${code} at line ${line}; YAML allows only printable characters (write it escaped, e.g. "\\u${code}")`,
      ),
    ];
  }
  // A recursive alias would make a circular value; aliases that explode, a huge one (util/bounded.ts).
  const aliases = yamlAliasFinding(text);
  if (aliases !== undefined) return [unreadable(source, aliases.document, aliases.problem)];
  const lines = new LineCounter();
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, {
      prettyErrors: true,
      uniqueKeys: false,
      lineCounter: lines,
      logLevel: 'error',
    }) as Document.Parsed[];
  } catch (err) {
    return [unreadable(source, undefined, yamlErrorText({ message: describeError(err) }))];
  }
  if (!Array.isArray(docs)) return [];
  const lineOf = (offset: number | undefined) => (offset === undefined ? undefined : lines.linePos(offset).line);
  const out: YamlDocument[] = [];
  let previousEnded = false;
  docs.forEach((doc, i) => {
    const fail = (problem: string) => out.push(unreadable(source, i + 1, problem));
    const afterEnd = previousEnded && doc.directives.docStart !== true;
    previousEnded = doc.directives.docEnd;
    const syntax = doc.errors[0];
    if (syntax !== undefined) {
      fail(yamlErrorText(syntax, lineOf));
      return;
    }
    if (afterEnd && doc.contents !== null) {
      fail(
        `content after the document end marker "..."${at(lineOf(doc.contents.range[0]), '(line %)')}; start another document with "---" or remove it`,
      );
      return;
    }
    const problem = treeProblem(doc.contents, lineOf);
    if (problem !== undefined) {
      fail(problem);
      return;
    }
    try {
      const line = lineOf(doc.contents?.range[0]);
      const value: unknown = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
      out.push(line === undefined ? { document: i + 1, value } : { document: i + 1, line, value });
    } catch (err) {
      const message = describeError(err);
      fail(
        isAliasLimit(message)
          ? `too many YAML aliases (more than ${MAX_ALIAS_COUNT} expansions); write the values out`
          : `invalid YAML: ${message}`,
      );
    }
  });
  return out;
}

/** A single-document YAML text (a kustomization, an input): its value, or an Error naming `source`. */
export function parseYamlValue(text: string, source: string): unknown {
  const docs = parseYamlStream(text, source);
  const bad = docs.find((d) => d.error !== undefined);
  if (bad) throw bad.failure ?? new Error(bad.error);
  const values = docs.filter((d) => d.value !== null && d.value !== undefined);
  if (values.length > 1) {
    throw new YamlError(source, undefined, `holds ${values.length} YAML documents; it must hold one`);
  }
  return values[0]?.value ?? null;
}

type LineOf = (offset: number | undefined) => number | undefined;

/**
 * A yaml parse error as one line: `invalid YAML: …`, or for the parser's own stack overflow on deep
 * nesting, a sentence saying so (instead of "Maximum call stack size exceeded").
 */
export function yamlErrorText(err: { message: string; pos?: [number, number] }, lineOf?: LineOf): string {
  if (/call stack/i.test(err.message)) {
    return `nested more than ${MAX_DEPTH} levels deep${at(lineOf?.(err.pos?.[0]))}; flatten the structure`;
  }
  return `invalid YAML: ${describeError(err)}`;
}

/**
 * The first duplicate key or nesting past MAX_DEPTH in a parsed document's contents, as a sentence;
 * for parsers that keep the yaml Document (parse with `uniqueKeys: false`, then check with this:
 * linear, where yaml's own check is quadratic).
 */
export function treeProblem(contents: unknown, lineOf?: LineOf): string | undefined {
  const problem = checkTree(contents);
  if (problem === undefined) return undefined;
  return problem.kind === 'depth'
    ? `nested more than ${MAX_DEPTH} levels deep${at(lineOf?.(problem.offset))}; flatten the structure`
    : `key ${JSON.stringify(clip(problem.key, 100))} appears twice in one mapping${at(lineOf?.(problem.offset), '(line %)')}; keep one`;
}

type Problem = { kind: 'depth'; offset?: number } | { kind: 'duplicate'; key: string; offset?: number };

/** Walks the parsed tree without recursion: the first mapping with a repeated key, or nesting past MAX_DEPTH. */
function checkTree(root: unknown): Problem | undefined {
  const stack: { node: unknown; depth: number }[] = [{ node: root, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isMap(node)) {
      if (depth > MAX_DEPTH) return { kind: 'depth', offset: node.range?.[0] };
      const keys = new Set<string>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = keyText(pair.key);
        // `<<` is YAML 1.1's merge key, which may repeat.
        if (key !== undefined && key !== '<<') {
          if (keys.has(key)) return { kind: 'duplicate', key, offset: rangeOf(pair.key) };
          keys.add(key);
        }
        stack.push({ node: pair.key, depth: depth + 1 }, { node: pair.value, depth: depth + 1 });
      }
    } else if (isSeq(node)) {
      if (depth > MAX_DEPTH) return { kind: 'depth', offset: node.range?.[0] };
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    }
  }
  return undefined;
}

/** A key as a JSON object key: scalars by their text (`1` and `"1"` collide, as they do in JSON). */
function keyText(key: unknown): string | undefined {
  if (key === null || key === undefined) return '';
  if (!isScalar(key)) return undefined; // aliases and collections: not JSON keys, kustomize refuses them
  const value: unknown = key.value;
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return undefined;
}

function rangeOf(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null)?.range?.[0];
}

function at(line: number | undefined, template = 'at line %'): string {
  return line === undefined ? '' : ` ${template.replace('%', String(line))}`;
}

/** The first line of an error, without the yaml package's source excerpt and trailing colon. */
function describeError(err: unknown): string {
  const text =
    typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string'
      ? (err as { message: string }).message
      : String(err);
  return (text.split('\n')[0] ?? text).replace(/:$/, '').slice(0, 300);
}

/**
 * The first problem of a file kustomize reads as Kubernetes YAML (a resource or a patch), as a
 * sentence naming `source`: whatever parseYamlStream refuses, and a List (a kind ending in `List`)
 * whose `items` is neither a list nor null, which kustomize drops without a word.
 */
export function manifestTextProblem(text: string, source: string): string | undefined {
  for (const doc of parseYamlStream(text, source)) {
    if (doc.error !== undefined) return doc.error;
    const problem = listItemsProblem(doc.value, `${source}, document ${doc.document}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** For a List (a kind ending in `List`) whose `items` is neither a list nor null, a sentence naming `where`. */
export function listItemsProblem(value: unknown, where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  const kind = obj['kind'];
  const items = obj['items'];
  if (
    typeof kind === 'string' &&
    kind.endsWith('List') &&
    items !== undefined &&
    items !== null &&
    !Array.isArray(items)
  ) {
    return `${where}: kind ${kind}: items must be a list of objects, got ${typeName(items)}`;
  }
  return undefined;
}

function typeName(value: unknown): string {
  if (typeof value === 'object' && value !== null) return 'a map';
  if (typeof value === 'string') return `the text ${JSON.stringify(clip(value, 40))}`;
  return `the ${typeof value} ${String(value)}`;
}

/** The yaml package's refusal of a document whose aliases expand past maxAliasCount ("Excessive alias count"). */
function isAliasLimit(message: string): boolean {
  return /alias/i.test(message);
}
