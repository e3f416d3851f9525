/**
 * YAML (`stores/yaml/store.go`): decrypted in place in the `yaml` documents, so that key order,
 * comments and layout survive.
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseAllDocuments,
  Scalar,
  type Document,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { yamlShapeOver } from '../../util/yaml-shape.js';
import { treeProblem, yamlErrorText } from '../../objects/yaml.js';
import {
  checkDepth,
  leaf,
  NULL_NODE,
  type CommentNode,
  type LeafNode,
  type ListNode,
  type MapEntry,
  type MapNode,
  type Plain,
  type TreeNode,
} from '../tree.js';
import { SopsError, type DecryptOptions } from '../types.js';
import { decryptLoaded } from '../walk.js';

/** YAML aliases beyond this count are refused (see `src/objects/kube.ts`). */
const MAX_ALIAS_COUNT = 100;

type CommentOwner = { commentBefore?: string | null; comment?: string | null };

function yamlComments(owner: CommentOwner, prop: 'commentBefore' | 'comment'): CommentNode[] {
  const raw = owner[prop];
  if (typeof raw !== 'string' || raw === '') return [];
  const lines = raw.split('\n');
  const nodes: CommentNode[] = [];
  lines.forEach((line, i) => {
    if (line === '') return;
    nodes.push({
      t: 'comment',
      text: line,
      set: (text) => {
        lines[i] = text;
        owner[prop] = lines.join('\n');
      },
    });
  });
  return nodes;
}

interface YamlLeafRef {
  node: LeafNode;
  old: Scalar;
  replace: (n: Scalar) => void;
  /** The list holding this value, for encrypted list comments. */
  seq?: YAMLSeq;
}

class YamlTreeBuilder {
  readonly leaves: YamlLeafRef[] = [];

  /** Builds the tree of a mapping; at the top level, the `sops` pair is left out and returned. */
  map(map: YAMLMap, depth: number, top: boolean): { node: MapNode; sops: Pair[] } {
    checkDepth(depth);
    const items: (MapEntry | CommentNode)[] = [...yamlComments(map, 'commentBefore')];
    const sops: Pair[] = [];
    for (const pair of map.items) {
      const keyNode = pair.key;
      if (isAlias(keyNode) || isAlias(pair.value)) throw new SopsError('YAML aliases are not supported in SOPS files');
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
        throw new SopsError('the YAML document has a non-string key; only string keys are supported');
      }
      const key = keyNode.value;
      items.push(...yamlComments(keyNode, 'commentBefore'), ...yamlComments(keyNode, 'comment'));
      if (top && key === 'sops') {
        sops.push(pair);
        continue;
      }
      const value = pair.value;
      if (isScalar(value)) items.push(...yamlComments(value, 'commentBefore'), ...yamlComments(value, 'comment'));
      items.push({
        t: 'entry',
        key,
        value: this.value(value, depth + 1, (n) => {
          pair.value = n;
        }),
      });
    }
    items.push(...yamlComments(map, 'comment'));
    return { node: { t: 'map', items }, sops };
  }

  seq(seq: YAMLSeq, depth: number): ListNode {
    const items: (TreeNode | CommentNode)[] = [...yamlComments(seq, 'commentBefore')];
    seq.items.forEach((item, i) => {
      if (isScalar(item)) items.push(...yamlComments(item, 'commentBefore'), ...yamlComments(item, 'comment'));
      const replace = (n: Scalar): void => {
        seq.items[i] = n;
      };
      items.push(this.value(item, depth + 1, replace, seq));
    });
    items.push(...yamlComments(seq, 'comment'));
    return { t: 'list', items };
  }

  value(value: unknown, depth: number, replace: (n: Scalar) => void, seq?: YAMLSeq): TreeNode {
    if (value === null || value === undefined) return NULL_NODE;
    if (isAlias(value)) throw new SopsError('YAML aliases are not supported in SOPS files');
    if (isMap(value)) return this.map(value, depth, false).node;
    if (isSeq(value)) return this.seq(value, depth);
    if (isScalar(value)) {
      const v = value.value;
      if (v === null || v === undefined) return NULL_NODE;
      const node = leaf(scalarPlain(v));
      this.leaves.push({ node, old: value, replace, seq });
      return node;
    }
    throw new SopsError('unsupported YAML node in the SOPS document');
  }
}

/** A parsed YAML scalar as a SOPS value (the core schema only yields strings, numbers and booleans). */
function scalarPlain(v: unknown): Plain {
  if (typeof v === 'string' || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof Date) return v.toISOString();
  return JSON.stringify(v);
}

function newYamlScalar(value: Plain, old: Scalar): Scalar {
  const scalar = new Scalar(value);
  if (typeof value === 'string' && value.includes('\n')) scalar.type = 'BLOCK_LITERAL';
  scalar.commentBefore = old.commentBefore;
  scalar.comment = old.comment;
  scalar.spaceBefore = old.spaceBefore;
  return scalar;
}

function prependComment(owner: CommentOwner, prop: 'commentBefore' | 'comment', text: string): void {
  const existing = owner[prop];
  owner[prop] = existing ? `${text}\n${existing}` : text;
}

/** The indentation the document uses (sops writes 4), so that the output keeps the input's layout. */
function detectIndent(text: string): number {
  let min = Infinity;
  for (const line of text.split('\n')) {
    const m = /^( +)[^\s#]/.exec(line);
    if (m) min = Math.min(min, m[1]!.length);
  }
  return Number.isFinite(min) ? Math.min(Math.max(min, 1), 8) : 2;
}

/** Decrypts every document of a YAML stream in place; the `sops` key of the first carries the metadata. */
export async function decryptYaml(text: string, opts: DecryptOptions): Promise<string> {
  // Size, documents and nesting before the parse (util/yaml-shape.ts); duplicate keys and nesting
  // after it by treeProblem: yaml's uniqueKeys is quadratic in a map's keys.
  const shape = yamlShapeOver(text);
  if (shape !== undefined) throw new SopsError(`line ${shape.line}: not read as YAML: ${shape.what}`);
  const parsed = parseAllDocuments(text, { intAsBigInt: true, uniqueKeys: false, logLevel: 'error' });
  const docs: Document[] = Array.isArray(parsed) ? parsed : [];
  const builder = new YamlTreeBuilder();
  const branches: MapNode[] = [];
  const sopsPairs: { map: YAMLMap; pair: Pair }[] = [];
  let rawMeta: unknown;
  docs.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error) throw new SopsError(`document ${i + 1}: ${yamlErrorText(error)}`);
    const problem = treeProblem(doc.contents);
    if (problem !== undefined) throw new SopsError(`document ${i + 1}: ${problem}`);
    const contents = doc.contents;
    const docComments = yamlComments(doc, 'commentBefore');
    if (isMap(contents)) {
      const { node, sops } = builder.map(contents, 0, true);
      if (sops.length > 1) throw new SopsError('found duplicate sops entry');
      const pair = sops[0];
      if (pair) {
        if (i === 0) {
          if (!isMap(pair.value)) throw new SopsError('found sops entry that is not a mapping');
          rawMeta = pair.value.toJS(doc, { maxAliasCount: MAX_ALIAS_COUNT });
        }
        sopsPairs.push({ map: contents, pair });
      }
      branches.push({ t: 'map', items: [...docComments, ...node.items, ...yamlComments(doc, 'comment')] });
    } else if (isSeq(contents)) {
      throw new SopsError('YAML documents that are sequences are not supported');
    } else if (contents === null || (isScalar(contents) && contents.value === null)) {
      branches.push({ t: 'map', items: [...docComments, ...yamlComments(doc, 'comment')] });
    } else {
      throw new SopsError('YAML documents that are values are not supported');
    }
  });
  if (rawMeta === undefined) throw new SopsError('sops metadata not found');
  await decryptLoaded(branches, rawMeta, opts);

  const listComments: { seq: YAMLSeq; old: Scalar; text: string }[] = [];
  for (const { node, old, replace, seq } of builder.leaves) {
    if (!node.decrypted) continue;
    if (node.comment !== undefined && seq) listComments.push({ seq, old, text: node.comment });
    else replace(newYamlScalar(node.value, old));
  }
  // a list element that was an encrypted comment becomes a comment again
  for (const { seq, old, text: comment } of listComments) {
    const index = seq.items.indexOf(old);
    if (index === -1) continue;
    seq.items.splice(index, 1);
    const next = seq.items[index];
    if (isScalar(next) || isMap(next) || isSeq(next)) prependComment(next, 'commentBefore', comment);
    else seq.comment = seq.comment ? `${seq.comment}\n${comment}` : comment;
  }
  for (const { map, pair } of sopsPairs) {
    const index = map.items.indexOf(pair);
    if (index === -1) continue;
    map.items.splice(index, 1);
    // sops writes the document's trailing comments as head comments of the `sops` key
    const moved = isScalar(pair.key) ? pair.key.commentBefore : undefined;
    if (moved) prependComment(map, 'comment', moved);
  }
  const indent = detectIndent(text);
  return docs.map((doc) => doc.toString({ indent, lineWidth: 0 })).join('');
}
