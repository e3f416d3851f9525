/**
 * Bounds on the YAML aliases of a text that another program will read (kustomize's yaml.v3): an
 * alias inside the node it names expands without end (kustomize recurses until its stack is gone
 * and prints a Go stack dump naming no file), and aliases of aliases expand exponentially (a
 * "billion laughs" of a few hundred bytes is gigabytes once expanded). The yaml package does not
 * see the first (its values simply become circular) and counts the second in a way that an alias of
 * empty collections escapes, so the check is made here on the parsed nodes, without expanding
 * anything. Cheap on the common file: only a text in which some `*name` names an `&name` is parsed.
 * Pure.
 */
import { isAlias, isCollection, isNode, isPair, LineCounter, parseAllDocuments, type Alias, type Document } from 'yaml';
import { locatedFinding, yamlShapeFinding, type YamlFinding } from './yaml-shape.js';

/**
 * Nodes that alias expansion may add to one document. Far above reuse in real manifests (a
 * 5,000-node schema used twenty times), far below what exhausts a build (the 600-byte bomb of
 * nine levels of nine aliases expands to 387 million).
 */
export const MAX_ALIAS_NODES = 100_000;

// An anchor or alias token: `&name` / `*name` at the start of a line or after white space or a
// flow or mapping indicator (quoted text never starts one). Names end at white space or a flow
// indicator.
const ANCHOR = /(?:^|[\s[\]{},:?-])&([^\s,[\]{}]+)/gm;
const ALIAS = /(?:^|[\s[\]{},:?-])\*([^\s,[\]{}]+)/gm;

/** A name as both the anchor and the alias spell it (`*a:` may be the alias `a` before a colon). */
const bare = (name: string) => name.replace(/:+$/, '');

/**
 * False when `text` cannot hold an alias of an anchor: no `*name` token names an `&name` token.
 * A quick look at the text (a comment or a quoted string may make it say true; the parse then finds
 * no alias), so that the common file is never parsed for this.
 */
export function mayHoldAliases(text: string): boolean {
  if (!text.includes('*') || !text.includes('&')) return false;
  const anchors = new Set<string>();
  for (const m of text.matchAll(ANCHOR)) anchors.add(bare(m[1]!));
  if (anchors.size === 0) return false;
  for (const m of text.matchAll(ALIAS)) if (anchors.has(bare(m[1]!))) return true;
  return false;
}

type Found = { kind: 'recursive'; alias: Alias; anchor: unknown } | { kind: 'expansion'; alias: Alias };

/**
 * The first alias of a document's contents that recurses (it lies inside the node it names) or
 * with which the nodes added by expanding every alias pass `max`. One walk in document order,
 * without recursion (nesting may be deep): anchors are registered as their node starts (so an
 * alias inside it names it, as in yaml.v3), and each collection's expanded size is known once it
 * ends, before any later alias can name it.
 */
function firstProblem(contents: unknown, max: number): Found | undefined {
  const anchors = new Map<string, object>();
  const open = new Set<object>();
  const size = new Map<object, number>();
  // The expanded size of each open collection, innermost last.
  const sizes: number[] = [0];
  const stack: { node: unknown; end?: true }[] = [{ node: contents }];
  let added = 0;
  while (stack.length > 0) {
    const { node, end } = stack.pop()!;
    if (end) {
      open.delete(node as object);
      const n = sizes.pop()!;
      size.set(node as object, n);
      sizes[sizes.length - 1]! += n;
      continue;
    }
    if (isPair(node)) {
      stack.push({ node: node.value }, { node: node.key });
      continue;
    }
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) continue; // an unknown anchor: the parser that reads the file says so
      if (open.has(target)) return { kind: 'recursive', alias: node, anchor: target };
      const n = size.get(target) ?? 1;
      added += n;
      sizes[sizes.length - 1]! += n;
      if (added > max) return { kind: 'expansion', alias: node };
      continue;
    }
    if (!isNode(node)) continue;
    if (node.anchor) anchors.set(node.anchor, node);
    if (!isCollection(node)) {
      sizes[sizes.length - 1]! += 1;
      continue;
    }
    // A collection counts itself and its items. Sizes stay below the text's nodes plus `max`: an
    // alias adds its target's size, which holds no more than the aliases counted before it.
    open.add(node);
    sizes.push(1);
    stack.push({ node, end: true });
    for (let i = node.items.length - 1; i >= 0; i--) stack.push({ node: node.items[i] });
  }
  return undefined;
}

/**
 * Why the YAML aliases of `text` cannot be read with bounded cost, as a sentence naming `source`,
 * the document and the line; undefined when they can (or when the text holds none, or does not
 * parse: its reader then says why). `max` bounds the nodes that expanding the aliases of one
 * document adds.
 */
export function yamlAliasProblem(text: string, source: string, max = MAX_ALIAS_NODES): string | undefined {
  const finding = yamlAliasFinding(text, max);
  return finding && locatedFinding(source, finding);
}

/** yamlAliasProblem's finding in parts: the document and the sentence. */
export function yamlAliasFinding(text: string, max = MAX_ALIAS_NODES): YamlFinding | undefined {
  // Before any parse (this one or the caller's): the text's size, documents and nesting (yaml-shape.ts).
  const shape = yamlShapeFinding(text);
  if (shape !== undefined) return shape;
  if (!mayHoldAliases(text)) return undefined;
  const lines = new LineCounter();
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text, {
      lineCounter: lines,
      uniqueKeys: false,
      prettyErrors: false,
      logLevel: 'error',
    });
    if (!Array.isArray(parsed)) return undefined;
    docs = parsed;
  } catch {
    return undefined; // the yaml package's own limits (nesting): the file's reader reports them
  }
  const lineOf = (node: unknown) => {
    const offset = (node as { range?: [number, number, number] }).range?.[0];
    return offset === undefined ? '?' : String(lines.linePos(offset).line);
  };
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) continue;
    const found = firstProblem(doc.contents, max);
    if (found === undefined) continue;
    const document = i + 1;
    const name = found.alias.source;
    if (found.kind === 'recursive') {
      return {
        document,
        problem: `the YAML alias *${name} at line ${lineOf(found.alias)} lies inside the node it names (&${name}, from line ${lineOf(found.anchor)}), so it expands without end; write the value out`,
      };
    }
    return {
      document,
      problem: `too many YAML aliases: expanding them adds more than ${max} nodes (past the alias *${name} at line ${lineOf(found.alias)}); write the values out`,
    };
  }
  return undefined;
}
