/**
 * The SOPS tree: ordered mappings and lists whose leaves are typed scalars, with comments in place.
 * Every store builds one of these from its format and the walk decrypts it in place.
 */
import { SopsError } from './types.js';

/** Nesting deeper than this is refused, so a hostile document cannot exhaust the stack. */
export const MAX_DEPTH = 1000;

/** A scalar as SOPS types it: `str`, `int` (bigint, exact), `float` (number), `bool`. */
export type Plain = string | bigint | number | boolean;

export interface LeafNode {
  readonly t: 'leaf';
  /** The stored value; after the walk, the plaintext. */
  value: Plain;
  /** Set by the walk when the value was decrypted. */
  decrypted: boolean;
  /** Set when an encrypted list element turned out to be a comment (sops encrypts list comments as elements). */
  comment?: string;
}
export interface CommentNode {
  readonly t: 'comment';
  text: string;
  /** Writes the decrypted comment back into the source representation. */
  readonly set?: (text: string) => void;
}
export interface NullNode {
  readonly t: 'null';
}
export interface MapEntry {
  readonly t: 'entry';
  readonly key: string;
  readonly value: TreeNode;
}
export interface MapNode {
  readonly t: 'map';
  readonly items: (MapEntry | CommentNode)[];
}
export interface ListNode {
  readonly t: 'list';
  readonly items: (TreeNode | CommentNode)[];
}
export type TreeNode = LeafNode | NullNode | MapNode | ListNode;

export const NULL_NODE: NullNode = { t: 'null' };

export function leaf(value: Plain): LeafNode {
  return { t: 'leaf', value, decrypted: false };
}

/** A tree node as plain JS (comments dropped; ints as numbers). */
export function toPlainJs(node: TreeNode): unknown {
  switch (node.t) {
    case 'null':
      return null;
    case 'leaf':
      return typeof node.value === 'bigint' ? Number(node.value) : node.value;
    case 'list':
      return node.items.filter((i) => !isCommentLike(i)).map((i) => toPlainJs(i as TreeNode));
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const item of node.items) {
        if (item.t === 'entry' && !isCommentLike(item.value)) out[item.key] = toPlainJs(item.value);
      }
      return out;
    }
  }
}

export function isCommentLike(n: TreeNode | CommentNode): boolean {
  return n.t === 'comment' || (n.t === 'leaf' && n.comment !== undefined);
}

/** Refuses nesting deeper than `MAX_DEPTH`. */
export function checkDepth(depth: number): void {
  if (depth > MAX_DEPTH) throw new SopsError(`the document is nested deeper than ${MAX_DEPTH} levels`);
}

/** A parsed object (e.g. a Kubernetes object after the kustomize build) as a tree. */
export function jsToTree(value: unknown, depth: number): TreeNode {
  checkDepth(depth);
  if (value === null || value === undefined) return NULL_NODE;
  if (Array.isArray(value)) return { t: 'list', items: value.map((v) => jsToTree(v, depth + 1)) };
  if (typeof value === 'object') {
    return {
      t: 'map',
      items: Object.entries(value).map(([key, v]) => ({ t: 'entry', key, value: jsToTree(v, depth + 1) })),
    };
  }
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    typeof value === 'boolean'
  ) {
    return leaf(value);
  }
  throw new SopsError(`unsupported ${typeof value} value in the SOPS document`);
}
