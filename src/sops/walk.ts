/**
 * The walk (`Tree.Decrypt`, `walkBranch`, `walkSlice`, `shouldBeEncrypted`): every value that the
 * metadata's rules say is encrypted is decrypted in place, and the MAC over the plaintext is checked.
 * A document whose comments are gone (a parsed object after the build) and whose file was encrypted
 * by a comment rule (`encrypted_comment_regex`, `unencrypted_comment_regex`) cannot be judged by its
 * rule: there every value in the SOPS envelope is decrypted instead, as kustomize-controller v1.10
 * does, and its MAC is the source file's to check (resources.ts).
 */
import { createHash, type Hash } from 'node:crypto';
import { openEnc, parseEnc, typedPlain } from './cipher.js';
import { recoverDataKey } from './datakey.js';
import { goFormatFloatF, goRfc3339 } from './goformat.js';
import { parseMetadata, type Metadata } from './metadata.js';
import {
  checkDepth,
  type CommentNode,
  type LeafNode,
  type MapEntry,
  type MapNode,
  type Plain,
  type TreeNode,
} from './tree.js';
import { SopsError, type DecryptOptions } from './types.js';
import { standInPlain } from './stand-in.js';

/** `sops.MACOnlyEncryptedInitialization`: sha256("sops"), hashed first when `mac_only_encrypted` is set. */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from('8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69', 'hex');

interface WalkContext {
  readonly key: Uint8Array;
  readonly meta: Metadata;
  readonly hash: Hash;
  readonly onSecret?: (value: string) => void;
  /** The comments are gone: a value is encrypted when it is in the envelope (`byEnvelope`). */
  readonly commentsLost: boolean;
}

/** The prefix every value sops encrypts carries (`aes/cipher.go`). */
export const SOPS_ENVELOPE = 'ENC[AES256_GCM,';

/** True when the metadata's rule is one of the comment rules, which need the file's comments. */
export function hasCommentRule(meta: Metadata): boolean {
  return meta.encryptedCommentRegex !== undefined || meta.unencryptedCommentRegex !== undefined;
}

/**
 * Whether a value is encrypted once its comments are gone: it is when it is in the SOPS envelope.
 * What sops left in plain text under a comment rule is a value the file's author wrote; one that
 * starts like the envelope and does not open fails as any encrypted value that does not.
 */
export function byEnvelope(value: Plain): boolean {
  return typeof value === 'string' && value.startsWith(SOPS_ENVELOPE);
}

function shouldBeEncrypted(
  meta: Metadata,
  path: readonly string[],
  stack: readonly (readonly string[])[],
  isComment: boolean,
): boolean {
  let encrypted = true;
  if (meta.unencryptedSuffix !== '' && path.some((p) => p.endsWith(meta.unencryptedSuffix))) encrypted = false;
  if (meta.encryptedSuffix !== '') encrypted = path.some((p) => p.endsWith(meta.encryptedSuffix));
  const unencryptedRegex = meta.unencryptedRegex;
  if (unencryptedRegex && path.some((p) => unencryptedRegex.test(p))) encrypted = false;
  const encryptedRegex = meta.encryptedRegex;
  if (encryptedRegex) encrypted = path.some((p) => encryptedRegex.test(p));
  const unencryptedComment = meta.unencryptedCommentRegex;
  if (unencryptedComment && stack.some((level) => level.some((c) => unencryptedComment.test(c)))) encrypted = false;
  const encryptedComment = meta.encryptedCommentRegex;
  if (encryptedComment) {
    const lastLevel = stack.length - 1;
    encrypted = stack.some((level, i) =>
      level.some(
        // the comment that matches the regex is itself left in plain text
        (c, j) => !(isComment && i === lastLevel && j === level.length - 1) && encryptedComment.test(c),
      ),
    );
  }
  return encrypted;
}

const aadOf = (path: readonly string[]): string => path.join(':') + ':';

/** Decrypts a comment that looks encrypted; the additional data is the path of its branch, tried from the deepest. */
function visitComment(comment: CommentNode, path: readonly string[], ctx: WalkContext): void {
  const enc = parseEnc(comment.text);
  if (enc?.type !== 'comment') return;
  for (let n = path.length; n >= 0; n--) {
    const bytes = openEnc(enc, ctx.key, aadOf(path.slice(0, n)));
    if (bytes) {
      comment.text = bytes.toString('utf8');
      comment.set?.(comment.text);
      return;
    }
  }
  // like sops: a comment that does not decrypt is kept as it is
}

function where(path: readonly string[]): string {
  return path.length === 0 ? 'the document root' : `'${path.join('.')}'`;
}

function visitLeaf(
  node: LeafNode,
  path: readonly string[],
  stack: readonly (readonly string[])[],
  ctx: WalkContext,
): void {
  const encrypted = ctx.commentsLost ? byEnvelope(node.value) : shouldBeEncrypted(ctx.meta, path, stack, false);
  if (encrypted) {
    if (typeof node.value !== 'string') {
      throw new SopsError(`the value at ${where(path)} should be encrypted but is a plain ${typeof node.value}`);
    }
    if (node.value !== '') {
      const enc = parseEnc(node.value);
      if (!enc) {
        throw new SopsError(
          `the value at ${where(path)} should be encrypted but is not in the SOPS format ENC[AES256_GCM,...]`,
        );
      }
      const bytes = openEnc(enc, ctx.key, aadOf(path));
      if (!bytes) {
        throw new SopsError(
          `cannot decrypt the value at ${where(path)}: AES-GCM authentication failed ` +
            '(the value was changed or moved to another key, or it belongs to another file)',
        );
      }
      const plain = typedPlain(bytes, enc.type);
      if (!plain) throw new SopsError(`cannot decrypt the value at ${where(path)}: it is not a valid ${enc.type}`);
      node.decrypted = true;
      if ('comment' in plain) {
        // sops writes comments inside lists as encrypted list elements; keep them as comments
        node.comment = plain.comment;
        node.value = plain.comment;
        return;
      }
      node.value = plain.value;
      if (typeof plain.value === 'string' && plain.value.length > 0) ctx.onSecret?.(plain.value);
    }
  }
  if (!ctx.meta.macOnlyEncrypted || encrypted) ctx.hash.update(macBytes(node.value));
}

function visitValue(node: TreeNode, path: string[], stack: string[][], ctx: WalkContext, depth: number): void {
  checkDepth(depth);
  switch (node.t) {
    case 'leaf':
      visitLeaf(node, path, stack, ctx);
      return;
    case 'null':
      return;
    case 'map':
    case 'list': {
      // the comments seen so far at this level, for the comment rules; a value resets them
      const levelStack = [...stack, [] as string[]];
      const level = levelStack.length - 1;
      const items: readonly (MapEntry | TreeNode | CommentNode)[] = node.items;
      for (const item of items) {
        if (item.t === 'comment') {
          levelStack[level]!.push(item.text);
          visitComment(item, path, ctx);
          continue;
        }
        if (item.t === 'entry') visitValue(item.value, [...path, item.key], levelStack, ctx, depth + 1);
        else visitValue(item, path, levelStack, ctx, depth + 1);
        levelStack[level] = [];
      }
      return;
    }
  }
}

/** Decrypts every branch in place and returns the MAC over the plaintext, as upper-case hex. */
function decryptBranches(
  branches: readonly MapNode[],
  key: Uint8Array,
  meta: Metadata,
  commentsLost: boolean,
  onSecret?: (v: string) => void,
): string {
  const hash = createHash('sha512');
  if (meta.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  const ctx: WalkContext = { key, meta, hash, onSecret, commentsLost };
  for (const branch of branches) visitValue(branch, [], [], ctx, 0);
  return hash.digest('hex').toUpperCase();
}

function verifyMac(meta: Metadata, key: Uint8Array, computed: string): void {
  const prefix = 'MAC mismatch: the file was modified after it was encrypted';
  if (meta.mac === '') throw new SopsError(`${prefix} (its sops metadata has no mac)`);
  const enc = parseEnc(meta.mac);
  const bytes = enc && openEnc(enc, key, goRfc3339(meta.lastModified));
  if (!bytes) {
    throw new SopsError(`${prefix} (the stored MAC does not decrypt: sops.mac or sops.lastmodified was changed)`);
  }
  if (bytes.toString('utf8') !== computed) {
    throw new SopsError(
      `${prefix} (the values, their keys or their order differ from what sops signed; ` +
        're-encrypt it with sops, or edit it with `sops edit`)',
    );
  }
}

/**
 * Recovers the data key, decrypts the branches in place and checks the MAC. `withoutComments`: the
 * branches are a parsed object whose comments are gone (after the build), so a file encrypted by a
 * comment rule is decrypted by envelope and its MAC, which the tree cannot show, is not checked here.
 */
export async function decryptLoaded(
  branches: readonly MapNode[],
  rawMeta: unknown,
  opts: DecryptOptions,
  withoutComments = false,
): Promise<void> {
  const meta = parseMetadata(rawMeta);
  const commentsLost = withoutComments && hasCommentRule(meta);
  if (commentsLost && opts.verifyMac) {
    throw new SopsError(
      `the MAC cannot be checked here: the file was encrypted with ${ruleName(meta)}, whose comments the build ` +
        'dropped; it is checked on the source file, or not at all with sops-verify-mac false',
    );
  }
  const key = await recoverDataKey(meta, opts.keyServices);
  // A data key no SOPS file of the base commit holds was made by whoever encrypted this file in the
  // change, or by another repository with the same recipients (types.ts): nothing under it is masked,
  // since masks would let the change choose text the log and the report hide, and none of it is used.
  const own = opts.dataKeyOnBase !== undefined && !(await opts.dataKeyOnBase(meta.groups.flat().map((k) => k.enc)));
  const onSecret = own ? undefined : opts.onSecret;
  onSecret?.(Buffer.from(key).toString('base64'));
  const mac = decryptBranches(branches, key, meta, commentsLost, onSecret);
  if (opts.verifyMac) verifyMac(meta, key, mac);
  // Such a file is the author's own or a copy of another repository's (the same recipients): its
  // values never enter the build, stand-ins of the same shape do (stand-in.ts), so that nothing of
  // another repository's secrets is shown and nothing the author chose is masked. The provenance
  // render varies the stand-ins like any decrypted value, so what they reach is shown as changed.
  // The stand-ins are masked in their place (random text: a mask of one hides nothing chosen).
  const canary = opts.canary;
  const standIn = (v: Plain): Plain => {
    const s = standInPlain(v);
    if (typeof s === 'string') opts.onSecret?.(s);
    return canary ? canary(s) : s;
  };
  const replace = own ? standIn : canary;
  if (replace) for (const branch of branches) replaceDecrypted(branch, replace);
}

function ruleName(meta: Metadata): string {
  return meta.encryptedCommentRegex !== undefined ? 'encrypted_comment_regex' : 'unencrypted_comment_regex';
}

/** Every decrypted value (not a list comment) replaced by its canary, in place: the stores write these. */
function replaceDecrypted(node: TreeNode, canary: (value: Plain) => Plain): void {
  if (node.t === 'leaf') {
    if (node.decrypted && node.comment === undefined) node.value = canary(node.value);
    return;
  }
  if (node.t !== 'map' && node.t !== 'list') return;
  for (const item of node.items) {
    if (item.t === 'entry') replaceDecrypted(item.value, canary);
    else if (item.t !== 'comment') replaceDecrypted(item, canary);
  }
}

/** `sops.ToBytes`: what the MAC hashes for a value. */
function macBytes(value: Plain): Buffer {
  switch (typeof value) {
    case 'string':
      return Buffer.from(value, 'utf8');
    case 'bigint':
      return Buffer.from(value.toString(), 'utf8');
    case 'number':
      return Buffer.from(goFormatFloatF(value), 'utf8');
    case 'boolean':
      return Buffer.from(value ? 'True' : 'False', 'utf8');
  }
}
