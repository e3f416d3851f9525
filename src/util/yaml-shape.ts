/**
 * Bounds on a YAML text's shape, checked before any parser sees it. The yaml package builds every
 * node of a stream before anyone can look at it, and what a tree can write cheaply is expensive to
 * build: 1.2 MB of nested sequences (`[[[[…` or `- - - -…`) took 33 s and 2.1 GB, 4 MB of empty
 * documents (`---` lines) 1.16 GB. A linear scan of the text counts the documents and the deepest
 * nesting (indentation levels, compact `- ` / `? ` entries, flow brackets outside quoted scalars,
 * block scalars skipped), and the text is refused, naming the source and the line, past the bound.
 * The scan over-counts rather than under-counts where it must guess (a bracket at the start of a
 * continued plain scalar counts as flow): real files stay far below the bounds. Pure.
 */

export const YAML_LIMITS = {
  /** Bytes of one YAML text (a file of the tree, kustomize's output). */
  bytes: 32 << 20,
  /** Documents of one stream: far above a real bundle of manifests, far below what costs gigabytes. */
  documents: 20_000,
  /**
   * Nesting that costs the parser the most per byte (flow brackets, compact `- - -` entries on one
   * line), as objects/yaml.ts MAX_DEPTH bounds any nesting after parsing.
   */
  depth: 256,
  /**
   * Nesting counted with indentation too. Each indented level costs its indentation on every line,
   * so the bytes bound it already; this bound only keeps the parser's recursion far from the stack's end.
   */
  blockDepth: 4096,
};

export type YamlLimits = typeof YAML_LIMITS;

/** Where a scan stopped: the line (1-based) and what passed its bound. */
interface Over {
  line: number;
  /** The document it is in (1-based), when it passed a bound inside one. */
  document?: number;
  what: string;
}

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const white = (c: number) => c === SPACE || c === TAB;
/** White space, a line break, or the end of the text (NaN). */
const ends = (c: number) => c === SPACE || c === TAB || c === LF || c === CR || Number.isNaN(c);

/** Whether a document marker (`---` or `...` then white space or the end of the line) starts at `i`. */
function markerAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c !== 45 /* - */ && c !== 46 /* . */) return false;
  return text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c && ends(text.charCodeAt(i + 3));
}

/** The first place `text` passes `limits`, or undefined. One pass over the characters. */
export function yamlShapeOver(text: string, limits: YamlLimits = YAML_LIMITS): Over | undefined {
  if (text.length > limits.bytes) {
    return { line: 1, what: `larger than ${limits.bytes / (1 << 20)} MiB` };
  }
  let markers = 0;
  let documents = 1;
  /** Whether the document under way holds anything yet. */
  let content = false;
  /** Indentation of the open block collections, outermost first. */
  const stack: number[] = [];
  let flow = 0;
  /** Inside a quoted scalar: its quote (34 `"`, 39 `'`), else 0. */
  let quote = 0;
  /** Inside a block scalar: the indentation its content must pass. */
  let blockScalar = -1;
  let lineNo = 0;
  let i = 0;
  const n = text.length;
  while (i <= n) {
    lineNo++;
    const lineStart = i;
    while (i < n && text.charCodeAt(i) === SPACE) i++;
    const indent = i - lineStart;
    const first = text.charCodeAt(i);
    const blank = i >= n || first === LF || first === CR;
    const skip = () => {
      const next = text.indexOf('\n', i);
      i = next < 0 ? n + 1 : next + 1;
    };
    if (blockScalar >= 0) {
      if (blank || indent > blockScalar) {
        skip();
        continue;
      }
      blockScalar = -1;
    }
    if (quote === 0 && flow === 0) {
      if (indent === 0 && markerAt(text, i)) {
        // Every marker counts toward the bound (empty documents cost as much as any); the
        // document named in messages starts at the first `---` only when content came before it.
        if (++markers > limits.documents) {
          return {
            line: lineNo,
            what: `the stream holds more than ${limits.documents.toLocaleString('en-US')} documents`,
          };
        }
        if (content) documents++;
        content = false;
        stack.length = 0;
        i += 3;
      } else {
        if (blank || first === 35 /* # */) {
          skip();
          continue;
        }
        content = true;
        while (stack.length > 0 && stack[stack.length - 1]! >= indent) stack.pop();
        stack.push(indent);
      }
    }
    /** Flow brackets and compact entries open here; `depth + stack.length` counts indentation too. */
    let depth = flow;
    /** The last character that is not white space, on this line, outside quotes (0: none): decides a value's start. */
    let prev = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === LF) break;
      if (quote !== 0) {
        if (quote === 34 && c === 92 /* \\ */) i++;
        else if (c === quote) {
          if (quote === 39 && text.charCodeAt(i + 1) === 39) i++;
          else quote = 0;
          prev = c;
        }
        continue;
      }
      if (white(c) || c === CR) continue;
      const afterSpace = i === lineStart || white(text.charCodeAt(i - 1));
      if (c === 35 /* # */ && afterSpace) {
        const next = text.indexOf('\n', i);
        i = next < 0 ? n : next;
        break;
      }
      const valueStart =
        prev === 0 ||
        (flow > 0
          ? prev === 91 || prev === 123 || prev === 44 || prev === 58 // [ { , :
          : (prev === 45 || prev === 63 || prev === 58) && afterSpace); // - ? :
      if (flow === 0 && (c === 45 || c === 63) && valueStart && ends(text.charCodeAt(i + 1))) {
        // A compact entry (`- - x`, `? - x`): one more level than the line's indentation says.
        depth++;
      } else if ((c === 34 || c === 39) && valueStart) {
        quote = c;
      } else if ((c === 91 || c === 123) && (flow > 0 || valueStart)) {
        flow++;
        depth++;
      } else if ((c === 93 || c === 125) && flow > 0) {
        flow--;
      } else if (flow === 0 && (c === 124 || c === 62) && valueStart) {
        // `|` or `>`: a block scalar; its content lines are text, not structure.
        blockScalar = stack.length > 0 ? stack[stack.length - 1]! : 0;
        const next = text.indexOf('\n', i);
        i = next < 0 ? n : next;
        break;
      }
      if (depth > limits.depth || depth + stack.length > limits.blockDepth) {
        const bound = depth > limits.depth ? limits.depth : limits.blockDepth;
        return { line: lineNo, document: documents, what: `nested more than ${bound} levels deep` };
      }
      prev = c;
    }
    i++;
  }
  return undefined;
}

/** What is wrong with a YAML text, in parts: the document (1-based, when known) and the sentence. */
export interface YamlFinding {
  document?: number;
  problem: string;
}

/** A finding as one sentence naming `source`: `source, document N: problem`. */
export function locatedFinding(source: string, finding: YamlFinding): string {
  const where = finding.document === undefined ? source : `${source}, document ${finding.document}`;
  return `${where}: ${finding.problem}`;
}

/** Why `text` is not read, with the line; undefined when it may be parsed. */
export function yamlShapeFinding(text: string, limits: YamlLimits = YAML_LIMITS): YamlFinding | undefined {
  const over = yamlShapeOver(text, limits);
  if (over === undefined) return undefined;
  return {
    ...(over.document === undefined ? {} : { document: over.document }),
    problem: `${over.what} (line ${over.line}, found before parsing: a bound that keeps the YAML parser's time and memory in proportion to what a repository really holds)`,
  };
}

/** Why `text` (named `source`) is not read: a sentence naming it and the line; undefined when it may be parsed. */
export function yamlShapeProblem(text: string, source: string, limits: YamlLimits = YAML_LIMITS): string | undefined {
  const finding = yamlShapeFinding(text, limits);
  return finding && locatedFinding(source, finding);
}
