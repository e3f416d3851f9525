/**
 * Native SOPS decryption: the data key is recovered from the master keys in the `sops` metadata
 * (through the key services, with Shamir secret sharing across key groups), every value is
 * decrypted with AES-256-GCM, and the MAC is recomputed and compared, as `sops decrypt` does.
 *
 * Format facts follow sops v3.13.2: `sops.go` (tree walk, `shouldBeEncrypted`, MAC, key groups),
 * `aes/cipher.go` (value format, types), `shamir/shamir.go`, `stores/stores.go` and
 * `stores/metadata.go` (metadata fields, flattening), `stores/flatten.go`, and the stores in
 * `stores/{yaml,json,dotenv,ini}/store.go`. Errors never contain a decrypted value or the data key.
 */
import { treeProblem, yamlErrorText } from '../objects/yaml.js';
import { createDecipheriv, createHash, type Hash } from 'node:crypto';
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
import {
  SopsError,
  type DecryptOptions,
  type KeyService,
  type MasterKey,
  type MasterKeyKind,
  type SopsFormat,
} from './types.js';

/** YAML aliases beyond this count are refused (see `src/objects/kube.ts`). */
const MAX_ALIAS_COUNT = 100;
/** Nesting deeper than this is refused, so a hostile document cannot exhaust the stack. */
const MAX_DEPTH = 1000;
/** `sops.DefaultUnencryptedSuffix`, used when the metadata names no encryption rule. */
const DEFAULT_UNENCRYPTED_SUFFIX = '_unencrypted';
/** `sops.MACOnlyEncryptedInitialization`: sha256("sops"), hashed first when `mac_only_encrypted` is set. */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from('8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69', 'hex');
/** `aes/cipher.go` `encre`: not anchored at the end, `.` does not match newlines. */
const ENC_RE = /^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]/;
const GCM_TAG_BYTES = 16;

// ---------------------------------------------------------------------------------------------
// Format detection (Flux's rules)

/** Flux's marker bytes per format (`kustomize-controller internal/decryptor`). */
const MARKERS: Readonly<Record<SopsFormat, string>> = {
  yaml: 'mac: ENC[',
  json: '"mac": "ENC[',
  binary: '"mac": "ENC[',
  dotenv: 'sops_mac=ENC[',
  ini: '[sops]',
};

/** True when `text` carries the SOPS marker bytes of `format`, as Flux decides which files to decrypt. */
export function isSopsEncrypted(text: string, format: SopsFormat): boolean {
  return text.includes(MARKERS[format]);
}

/** The SOPS format Flux uses for a file or Secret key name: by suffix, `.dockerconfigjson` being JSON, else binary. */
export function formatForPath(path: string): SopsFormat {
  if (path.endsWith('.dockerconfigjson')) return 'json';
  if (path.endsWith('.yaml') || path.endsWith('.yml')) return 'yaml';
  if (path.endsWith('.json')) return 'json';
  if (path.endsWith('.env')) return 'dotenv';
  if (path.endsWith('.ini')) return 'ini';
  return 'binary';
}

// ---------------------------------------------------------------------------------------------
// The SOPS tree: ordered mappings and lists whose leaves are typed scalars, with comments in place

/** A scalar as SOPS types it: `str`, `int` (bigint, exact), `float` (number), `bool`. */
type Plain = string | bigint | number | boolean;

interface LeafNode {
  readonly t: 'leaf';
  /** The stored value; after the walk, the plaintext. */
  value: Plain;
  /** Set by the walk when the value was decrypted. */
  decrypted: boolean;
  /** Set when an encrypted list element turned out to be a comment (sops encrypts list comments as elements). */
  comment?: string;
}
interface CommentNode {
  readonly t: 'comment';
  text: string;
  /** Writes the decrypted comment back into the source representation. */
  readonly set?: (text: string) => void;
}
interface NullNode {
  readonly t: 'null';
}
interface MapEntry {
  readonly t: 'entry';
  readonly key: string;
  readonly value: TreeNode;
}
interface MapNode {
  readonly t: 'map';
  readonly items: (MapEntry | CommentNode)[];
}
interface ListNode {
  readonly t: 'list';
  readonly items: (TreeNode | CommentNode)[];
}
type TreeNode = LeafNode | NullNode | MapNode | ListNode;

const NULL_NODE: NullNode = { t: 'null' };

function leaf(value: Plain): LeafNode {
  return { t: 'leaf', value, decrypted: false };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A tree node as plain JS (comments dropped; ints as numbers). */
function toPlainJs(node: TreeNode): unknown {
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

function isCommentLike(n: TreeNode | CommentNode): boolean {
  return n.t === 'comment' || (n.t === 'leaf' && n.comment !== undefined);
}

// ---------------------------------------------------------------------------------------------
// Metadata (`stores/stores.go` `metadata`, decoded with mapstructure's weak typing)

interface Metadata {
  groups: MasterKey[][];
  threshold: number;
  lastModified: string;
  mac: string;
  unencryptedSuffix: string;
  encryptedSuffix: string;
  unencryptedRegex?: RegExp;
  encryptedRegex?: RegExp;
  unencryptedCommentRegex?: RegExp;
  encryptedCommentRegex?: RegExp;
  macOnlyEncrypted: boolean;
}

/**
 * The master-key kinds in the order keys are tried within a group: sops's
 * `DefaultDecryptionOrder` (age, then PGP), then the others in the order sops builds a group.
 */
const KEY_KINDS: readonly MasterKeyKind[] = ['age', 'pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault'];

function weakString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return '';
}

function weakInt(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v === 'string' && /^[+-]?(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|\d+)$/.test(v.trim())) {
    const s = v.trim();
    const neg = s.startsWith('-');
    const body = s.replace(/^[+-]/, '');
    const n = /^0[0-7]+$/.test(body) ? parseInt(body, 8) : Number(body.replace(/^0[oO]/, '0o'));
    return neg ? -n : n;
  }
  throw new SopsError(`invalid sops metadata: ${field} is not an integer`);
}

function weakBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return goParseBool(v) ?? false;
  return false;
}

/** Go's `strconv.ParseBool`. */
function goParseBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/** Go (RE2) syntax → JS: a leading `(?flags)` group becomes JS flags; the rest is mostly compatible. */
function goRegex(source: string, field: string): RegExp {
  let body = source;
  let flags = '';
  const m = /^\(\?([imsU]+)\)/.exec(source);
  if (m) {
    body = source.slice(m[0].length);
    flags = [...new Set(m[1]!.replace(/U/g, ''))].join('');
  }
  try {
    return new RegExp(body, flags + 'u');
  } catch {
    try {
      return new RegExp(body, flags);
    } catch (err) {
      throw new SopsError(`invalid sops metadata: ${field} is not a valid regular expression`, { cause: err });
    }
  }
}

function masterKeysOf(group: Record<string, unknown>): MasterKey[] {
  const keys: MasterKey[] = [];
  for (const kind of KEY_KINDS) {
    const list = group[kind];
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (!isRecord(entry)) continue;
      const { enc, ...fields } = entry;
      keys.push({ kind, enc: weakString(enc), fields });
    }
  }
  return keys;
}

function parseMetadata(raw: unknown): Metadata {
  if (!isRecord(raw)) throw new SopsError('sops metadata not found');
  let groups: MasterKey[][];
  const topLevel = masterKeysOf(raw);
  if (topLevel.length > 0) {
    groups = [topLevel];
  } else if (Array.isArray(raw['key_groups']) && raw['key_groups'].length > 0) {
    groups = raw['key_groups'].map((g) => (isRecord(g) ? masterKeysOf(g) : []));
  } else {
    throw new SopsError(
      'the sops metadata lists no master key this implementation knows (age, pgp, kms, gcp_kms, azure_kv, hc_vault)',
    );
  }
  const rule = (name: string): string => weakString(raw[name]);
  const rules = [
    'unencrypted_suffix',
    'encrypted_suffix',
    'unencrypted_regex',
    'encrypted_regex',
    'unencrypted_comment_regex',
    'encrypted_comment_regex',
  ].filter((r) => rule(r) !== '');
  if (rules.length > 1) {
    throw new SopsError(`invalid sops metadata: more than one of ${rules.join(', ')} is set`);
  }
  const regex = (name: string): RegExp | undefined => (rule(name) === '' ? undefined : goRegex(rule(name), name));
  return {
    groups,
    threshold: weakInt(raw['shamir_threshold'], 'shamir_threshold'),
    lastModified: weakString(raw['lastmodified']),
    mac: weakString(raw['mac']),
    unencryptedSuffix: rules.length === 0 ? DEFAULT_UNENCRYPTED_SUFFIX : rule('unencrypted_suffix'),
    encryptedSuffix: rule('encrypted_suffix'),
    unencryptedRegex: regex('unencrypted_regex'),
    encryptedRegex: regex('encrypted_regex'),
    unencryptedCommentRegex: regex('unencrypted_comment_regex'),
    encryptedCommentRegex: regex('encrypted_comment_regex'),
    macOnlyEncrypted: weakBool(raw['mac_only_encrypted']),
  };
}

const MAP_SEPARATOR = '__map_';
const LIST_SEPARATOR = '__list_';

/** `stores/flatten.go` `tokenize`: `age__list_0__map_enc` → ['age', 0, 'enc']. */
function tokenizeFlatKey(path: string): (string | number)[] {
  const tokens: (string | number)[] = [];
  let state: 'normal' | 'map' | 'list' = 'normal';
  let last = 0;
  let i = 0;
  const finish = (): void => {
    const segment = path.slice(last, i);
    if (state === 'normal') tokens.push(segment);
    else if (state === 'map') tokens.push(segment.slice(MAP_SEPARATOR.length));
    else tokens.push(Number.parseInt(segment.slice(LIST_SEPARATOR.length), 10) || 0);
    last = i;
  };
  while (i < path.length) {
    if (path.startsWith(MAP_SEPARATOR, i)) {
      finish();
      state = 'map';
      i += MAP_SEPARATOR.length;
    } else if (path.startsWith(LIST_SEPARATOR, i)) {
      finish();
      state = 'list';
      i += LIST_SEPARATOR.length;
    } else {
      i++;
    }
  }
  finish();
  return tokens;
}

/** Rebuilds the nested metadata from flattened `key → value` pairs (dotenv, INI). */
function unflattenMetadata(entries: readonly (readonly [string, string])[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [flatKey, value] of entries) {
    const tokens = tokenizeFlatKey(flatKey);
    let cursor: Record<string | number, unknown> = root;
    tokens.forEach((token, i) => {
      if (i === tokens.length - 1) {
        cursor[token] = value;
        return;
      }
      const next = tokens[i + 1];
      let child = cursor[token];
      if (typeof child !== 'object' || child === null) {
        child = typeof next === 'number' ? [] : {};
        cursor[token] = child;
      }
      cursor = child as Record<string | number, unknown>;
    });
  }
  return root;
}

// ---------------------------------------------------------------------------------------------
// Data key recovery

/**
 * Optional member of a key service: why it held no key for `key` (returned `undefined`), e.g.
 * "no matching identity among 2 age identities". Services without it get a generic reason.
 */
export interface DescribesMiss {
  describeMiss(key: MasterKey): string;
}

/** How SOPS names a master key (`MasterKey.ToString()`), prefixed with its kind. */
export function describeMasterKey(key: MasterKey): string {
  const f = (name: string): string => weakString(key.fields[name]);
  switch (key.kind) {
    case 'age':
      return `age ${f('recipient')}`;
    case 'pgp':
      return `pgp ${f('fp')}`;
    case 'kms':
      return `kms ${f('arn')}${f('role') ? ` (role ${f('role')})` : ''}`;
    case 'gcp_kms':
      return `gcp_kms ${f('resource_id')}`;
    case 'azure_kv':
      return `azure_kv ${f('vault_url')}/keys/${f('name')}/${f('version')}`;
    case 'hc_vault':
      return `hc_vault ${f('vault_address')}/v1/${f('engine_path')}/keys/${f('key_name')}`;
  }
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}

function missReason(service: KeyService, key: MasterKey): string {
  const describe = (service as Partial<DescribesMiss>).describeMiss;
  return typeof describe === 'function' ? describe.call(service, key) : `${service.name}: no matching key`;
}

/** Opens one key group (`decryptKeyGroup`): the first master key any service opens gives the group's part. */
async function openGroup(
  group: readonly MasterKey[],
  services: readonly KeyService[],
): Promise<{ part: Uint8Array } | { failures: string[] }> {
  const failures: string[] = [];
  const ordered = [...group].sort((a, b) => KEY_KINDS.indexOf(a.kind) - KEY_KINDS.indexOf(b.kind));
  for (const key of ordered) {
    const reasons: string[] = [];
    const candidates = services.filter((s) => s.canOpen(key));
    if (candidates.length === 0) {
      reasons.push(
        services.length === 0 ? 'no key service was configured' : `no configured key service opens ${key.kind} keys`,
      );
    }
    for (const service of candidates) {
      try {
        const part = await service.decrypt(key);
        if (part !== undefined) return { part };
        reasons.push(missReason(service, key));
      } catch (err) {
        const text = errorText(err);
        reasons.push(text.startsWith(service.name) ? text : `${service.name}: ${text}`);
      }
    }
    failures.push(`${describeMasterKey(key)}: ${reasons.join('; ')}`);
  }
  if (group.length === 0) failures.push('the key group is empty');
  return { failures };
}

async function recoverDataKey(meta: Metadata, services: readonly KeyService[]): Promise<Uint8Array> {
  const shamir = meta.groups.length > 1;
  const needed = shamir ? (meta.threshold > 0 ? meta.threshold : meta.groups.length) : 1;
  const parts: Uint8Array[] = [];
  const report: string[] = [];
  for (const [i, group] of meta.groups.entries()) {
    if (parts.length >= needed) break;
    const result = await openGroup(group, services);
    if ('part' in result) {
      parts.push(result.part);
    } else if (shamir) {
      report.push(`  key group ${i + 1}:`, ...result.failures.map((f) => `    - ${f}`));
    } else {
      report.push(...result.failures.map((f) => `  - ${f}`));
    }
  }
  if (parts.length < needed) {
    const head = shamir
      ? `cannot decrypt the SOPS data key: ${parts.length} of ${meta.groups.length} key groups could be opened, ` +
        `${needed} are needed (shamir_threshold ${needed}):`
      : 'cannot decrypt the SOPS data key: no master key could be opened:';
    throw new SopsError([head, ...report].join('\n'));
  }
  const dataKey = shamir ? shamirCombine(parts) : parts[0]!;
  if (dataKey.length !== 32) {
    throw new SopsError(`cannot decrypt the SOPS data key: the recovered key has ${dataKey.length} bytes, not 32`);
  }
  return dataKey;
}

// Shamir's secret sharing over GF(2^8) with the AES polynomial, as sops's vendored Hashicorp
// `shamir` package: each part is the y values followed by one x-coordinate byte.

function gfMult(a: number, b: number): number {
  let product = 0;
  let x = a;
  let y = b;
  while (y > 0) {
    if (y & 1) product ^= x;
    x = x & 0x80 ? ((x << 1) ^ 0x1b) & 0xff : (x << 1) & 0xff;
    y >>= 1;
  }
  return product;
}

function gfInverse(a: number): number {
  // a^254 = a^-1 in GF(2^8)
  let result = 1;
  for (let i = 0; i < 254; i++) result = gfMult(result, a);
  return result;
}

function shamirCombine(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length < 2) throw new SopsError('cannot combine the SOPS data key: less than two Shamir parts');
  const length = parts[0]!.length;
  if (length < 2 || parts.some((p) => p.length !== length)) {
    throw new SopsError('cannot combine the SOPS data key: the Shamir parts have different or too short lengths');
  }
  const xs = parts.map((p) => p[length - 1]!);
  if (new Set(xs).size !== xs.length) throw new SopsError('cannot combine the SOPS data key: duplicate Shamir part');
  const secret = new Uint8Array(length - 1);
  for (let idx = 0; idx < length - 1; idx++) {
    let value = 0;
    for (let i = 0; i < parts.length; i++) {
      let basis = 1;
      for (let j = 0; j < parts.length; j++) {
        if (i === j) continue;
        // Lagrange basis at x = 0: x_j / (x_i + x_j), addition being XOR
        basis = gfMult(basis, gfMult(xs[j]!, gfInverse(xs[i]! ^ xs[j]!)));
      }
      value ^= gfMult(parts[i]![idx]!, basis);
    }
    secret[idx] = value;
  }
  return secret;
}

// ---------------------------------------------------------------------------------------------
// Values (`aes/cipher.go`)

interface EncValue {
  data: Buffer;
  iv: Buffer;
  tag: Buffer;
  type: string;
}

function parseEnc(value: string): EncValue | undefined {
  const m = ENC_RE.exec(value);
  if (!m) return undefined;
  return {
    data: Buffer.from(m[1]!, 'base64'),
    iv: Buffer.from(m[2]!, 'base64'),
    tag: Buffer.from(m[3]!, 'base64'),
    type: m[4]!,
  };
}

/** AES-256-GCM open; like Go, the tag is appended to the data and the last 16 bytes are the tag. */
function openEnc(enc: EncValue, key: Uint8Array, aad: string): Buffer | undefined {
  const sealed = Buffer.concat([enc.data, enc.tag]);
  if (sealed.length < GCM_TAG_BYTES || enc.iv.length === 0) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, enc.iv, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(sealed.subarray(sealed.length - GCM_TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - GCM_TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The typed plaintext, by the `type:` of the ENC value; undefined when the text does not parse as that type. */
function typedPlain(bytes: Buffer, type: string): { value: Plain } | { comment: string } | undefined {
  const text = bytes.toString('utf8');
  switch (type) {
    case 'str':
    case 'bytes':
    case 'time':
      return { value: text };
    case 'comment':
      return { comment: text };
    case 'int': {
      if (!/^[+-]?\d+$/.test(text)) return undefined;
      const n = BigInt(text);
      return n < INT64_MIN || n > INT64_MAX ? undefined : { value: n };
    }
    case 'float': {
      const n = goParseFloat(text);
      return n === undefined ? undefined : { value: n };
    }
    case 'bool': {
      const b = goParseBool(text);
      return b === undefined ? undefined : { value: b };
    }
    default:
      return undefined;
  }
}

function goParseFloat(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (/^[+]?inf(inity)?$/.test(lower)) return Infinity;
  if (/^-inf(inity)?$/.test(lower)) return -Infinity;
  if (/^[+-]?nan$/.test(lower)) return NaN;
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return Number(text);
  return undefined;
}

/** Go's `strconv.FormatFloat(f, 'f', -1, 64)`: shortest round-trip digits, never an exponent. */
function goFormatFloatF(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, intPart, frac = '', expText] = m;
  const digits = intPart! + frac;
  const point = intPart!.length + Number(expText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
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

/** `time.Time.Format(time.RFC3339)` of the parsed `lastmodified`: the MAC's additional data. */
function goRfc3339(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return text;
  const zone = /^(?:[Zz]|[+-]00:00)$/.test(m[3]!) ? 'Z' : m[3]!;
  return `${m[1]!}T${m[2]!}${zone}`;
}

// ---------------------------------------------------------------------------------------------
// The walk (`Tree.Decrypt`, `walkBranch`, `walkSlice`, `shouldBeEncrypted`)

interface WalkContext {
  readonly key: Uint8Array;
  readonly meta: Metadata;
  readonly hash: Hash;
  readonly onSecret?: (value: string) => void;
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
  const encrypted = shouldBeEncrypted(ctx.meta, path, stack, false);
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
  if (depth > MAX_DEPTH) throw new SopsError(`the document is nested deeper than ${MAX_DEPTH} levels`);
  switch (node.t) {
    case 'leaf':
      visitLeaf(node, path, stack, ctx);
      return;
    case 'null':
      return;
    case 'map': {
      const levelStack = [...stack, [] as string[]];
      const level = levelStack.length - 1;
      for (const item of node.items) {
        if (item.t === 'comment') {
          levelStack[level]!.push(item.text);
          visitComment(item, path, ctx);
          continue;
        }
        visitValue(item.value, [...path, item.key], levelStack, ctx, depth + 1);
        levelStack[level] = [];
      }
      return;
    }
    case 'list': {
      const levelStack = [...stack, [] as string[]];
      const level = levelStack.length - 1;
      for (const item of node.items) {
        if (item.t === 'comment') {
          levelStack[level]!.push(item.text);
          visitComment(item, path, ctx);
          continue;
        }
        visitValue(item, path, levelStack, ctx, depth + 1);
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
  onSecret?: (v: string) => void,
): string {
  const hash = createHash('sha512');
  if (meta.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  const ctx: WalkContext = { key, meta, hash, onSecret };
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

/** Recovers the data key, decrypts the branches in place and checks the MAC. */
async function decryptLoaded(branches: readonly MapNode[], rawMeta: unknown, opts: DecryptOptions): Promise<void> {
  const meta = parseMetadata(rawMeta);
  const key = await recoverDataKey(meta, opts.keyServices);
  opts.onSecret?.(Buffer.from(key).toString('base64'));
  const mac = decryptBranches(branches, key, meta, opts.onSecret);
  if (opts.verifyMac) verifyMac(meta, key, mac);
}

// ---------------------------------------------------------------------------------------------
// YAML (`stores/yaml/store.go`): decrypted in place in the `yaml` documents, so that key order,
// comments and layout survive

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
    if (depth > MAX_DEPTH) throw new SopsError(`the document is nested deeper than ${MAX_DEPTH} levels`);
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

async function decryptYaml(text: string, opts: DecryptOptions): Promise<string> {
  // Duplicate keys and nesting are checked by treeProblem: yaml's uniqueKeys is quadratic in a map's keys.
  const parsed = parseAllDocuments(text, { intAsBigInt: true, uniqueKeys: false });
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

// ---------------------------------------------------------------------------------------------
// JSON (`stores/json/store.go`): an order-keeping parser, and Go's `json.Indent` output with tabs

class JsonParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parseDocument(): MapNode {
    this.ws();
    if (this.text[this.pos] !== '{') {
      throw new SopsError('SOPS only supports JSON files with a top-level object');
    }
    const node = this.value(0);
    this.ws();
    if (this.pos < this.text.length) this.fail('unexpected data after the top-level object');
    return node as MapNode;
  }

  private fail(what: string): never {
    throw new SopsError(`invalid JSON at offset ${this.pos}: ${what}`);
  }

  private ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos]!)) this.pos++;
  }

  private value(depth: number): TreeNode {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
    this.ws();
    const c = this.text[this.pos];
    if (c === '{') {
      this.pos++;
      const items: MapEntry[] = [];
      this.ws();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return { t: 'map', items };
      }
      for (;;) {
        this.ws();
        if (this.text[this.pos] !== '"') this.fail('expected a string key');
        const key = this.string();
        this.ws();
        if (this.text[this.pos] !== ':') this.fail("expected ':'");
        this.pos++;
        items.push({ t: 'entry', key, value: this.value(depth + 1) });
        this.ws();
        if (this.text[this.pos] === ',') {
          this.pos++;
          continue;
        }
        if (this.text[this.pos] === '}') {
          this.pos++;
          return { t: 'map', items };
        }
        this.fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      this.pos++;
      const items: TreeNode[] = [];
      this.ws();
      if (this.text[this.pos] === ']') {
        this.pos++;
        return { t: 'list', items };
      }
      for (;;) {
        items.push(this.value(depth + 1));
        this.ws();
        if (this.text[this.pos] === ',') {
          this.pos++;
          continue;
        }
        if (this.text[this.pos] === ']') {
          this.pos++;
          return { t: 'list', items };
        }
        this.fail("expected ',' or ']'");
      }
    }
    if (c === '"') return leaf(this.string());
    for (const [word, node] of [
      ['true', leaf(true)],
      ['false', leaf(false)],
      ['null', NULL_NODE],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return node;
      }
    }
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    m.lastIndex = this.pos;
    const num = m.exec(this.text);
    if (!num) this.fail('unexpected character');
    this.pos += num[0].length;
    // `normalizeJSONNumber`: an int when it fits in int64, else a float64
    if (/^-?\d+$/.test(num[0])) {
      const n = BigInt(num[0]);
      if (n >= INT64_MIN && n <= INT64_MAX) return leaf(n);
    }
    return leaf(Number(num[0]));
  }

  private string(): string {
    const start = this.pos;
    this.pos++;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) this.fail('unterminated string');
      if (c === '\\') {
        this.pos += 2;
        continue;
      }
      this.pos++;
      if (c === '"') break;
    }
    try {
      return JSON.parse(this.text.slice(start, this.pos)) as string;
    } catch {
      this.pos = start;
      this.fail('invalid string');
    }
  }
}

/** Go's `encoding/json` string encoding (HTML-safe, `\b` and `\f` short escapes since Go 1.22). */
function goJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += '\\u' + c.toString(16).padStart(4, '0');
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && /[\udc00-\udfff]/.test(s[i + 1]!)) {
      out += ch + s[i + 1]!;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else out += ch;
  }
  return out + '"';
}

function goJsonValue(node: TreeNode, level: number): string {
  const indent = (n: number): string => '\t'.repeat(n);
  switch (node.t) {
    case 'null':
      return 'null';
    case 'leaf': {
      const v = node.value;
      if (typeof v === 'string') return goJsonString(v);
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw new SopsError('cannot write a NaN or infinite float as JSON');
        return Object.is(v, -0) ? '-0' : String(v);
      }
      return String(v);
    }
    case 'list': {
      const items = node.items.filter((i) => !isCommentLike(i)) as TreeNode[];
      if (items.length === 0) return '[]';
      return `[\n${items.map((i) => indent(level + 1) + goJsonValue(i, level + 1)).join(',\n')}\n${indent(level)}]`;
    }
    case 'map': {
      const entries = node.items.filter((i): i is MapEntry => i.t === 'entry' && !isCommentLike(i.value));
      if (entries.length === 0) return '{}';
      const body = entries.map((e) => `${indent(level + 1)}${goJsonString(e.key)}: ${goJsonValue(e.value, level + 1)}`);
      return `{\n${body.join(',\n')}\n${indent(level)}}`;
    }
  }
}

/** Removes the top-level `sops` entries (`ExtractMetadata`) and returns the metadata as plain JS. */
function extractSopsEntry(branch: MapNode): { branch: MapNode; meta: unknown } {
  const sops = branch.items.filter((i): i is MapEntry => i.t === 'entry' && i.key === 'sops');
  if (sops.length > 1) throw new SopsError('found duplicate sops entry');
  const first = sops[0];
  if (!first) throw new SopsError('sops metadata not found');
  if (first.value.t !== 'map') throw new SopsError('found sops entry that is not a mapping');
  return {
    branch: { t: 'map', items: branch.items.filter((i) => i !== first) },
    meta: toPlainJs(first.value),
  };
}

async function decryptJson(text: string, opts: DecryptOptions): Promise<string> {
  const { branch, meta } = extractSopsEntry(new JsonParser(text).parseDocument());
  await decryptLoaded([branch], meta, opts);
  return goJsonValue(branch, 0) + '\n';
}

async function decryptBinary(text: string, opts: DecryptOptions): Promise<string> {
  const { branch, meta } = extractSopsEntry(new JsonParser(text).parseDocument());
  await decryptLoaded([branch], meta, opts);
  const data = branch.items.find((i): i is MapEntry => i.t === 'entry' && i.key === 'data');
  if (data?.value.t !== 'leaf' || typeof data.value.value !== 'string') {
    throw new SopsError("the binary SOPS document has no string 'data' entry");
  }
  return data.value.value;
}

// ---------------------------------------------------------------------------------------------
// dotenv (`stores/dotenv/store.go`)

/** `stores.ValToString`, for values that are not strings. */
function goValToString(v: Plain): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
    // FormatFloat 'G' -1, then at least one decimal when it looks like an integer
    const abs = Math.abs(v);
    let s: string;
    if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
      s = v
        .toExponential()
        .toUpperCase()
        .replace(/E([+-])(\d)$/, 'E$10$2');
    } else {
      s = goFormatFloatF(v);
    }
    return s.includes('.') || s.includes('E') ? s : `${s}.0`;
  }
  return String(v);
}

async function decryptDotenv(text: string, opts: DecryptOptions): Promise<string> {
  const items: (MapEntry | CommentNode)[] = [];
  const meta: [string, string][] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    if (line.startsWith('#')) {
      items.push({ t: 'comment', text: line.slice(1) });
      return;
    }
    const eq = line.indexOf('=');
    if (eq === -1) throw new SopsError(`invalid dotenv input: line ${i + 1} has no '='`);
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1).replaceAll('\\n', '\n');
    if (key.startsWith('sops_')) meta.push([key.slice('sops_'.length), value]);
    else items.push({ t: 'entry', key, value: leaf(value) });
  });
  if (meta.length === 0) throw new SopsError('sops metadata not found');
  const branch: MapNode = { t: 'map', items };
  await decryptLoaded([branch], unflattenMetadata(meta), opts);
  let out = '';
  for (const item of items) {
    if (item.t === 'comment') {
      out += `#${item.text}\n`;
      continue;
    }
    const node = item.value;
    if (node.t === 'map' || node.t === 'list')
      throw new SopsError(`cannot use a complex value in a dotenv file (key ${item.key})`);
    const value = node.t === 'leaf' ? node.value : '';
    out += `${item.key}=${typeof value === 'string' ? value.replaceAll('\n', '\\n') : goValToString(value)}\n`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// INI (`stores/ini/store.go` over `gopkg.in/ini.v1` with sops's options)

interface IniKey {
  name: string;
  value: string;
  comment: string;
}
interface IniSection {
  name: string;
  comment: string;
  keys: IniKey[];
}

const INI_DEFAULT_SECTION = 'DEFAULT';

/** The subset of go-ini's parser that sops's INI files use: sections, comments, quoted and multi-line values. */
function parseIni(text: string): IniSection[] {
  const source = text.startsWith('\ufeff') ? text.slice(1) : text;
  const lines = source.split(/(?<=\n)/);
  const sections: IniSection[] = [{ name: INI_DEFAULT_SECTION, comment: '', keys: [] }];
  let section = sections[0]!;
  let pendingComment = '';
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.replace(/^\s+/, '');
    if (line === '') continue;
    if (line.startsWith('#') || line.startsWith(';')) {
      pendingComment += line;
      continue;
    }
    if (line.startsWith('[')) {
      const close = line.lastIndexOf(']');
      if (close === -1) throw new SopsError(`invalid INI: unclosed section on line ${n + 1}`);
      const rest = line.slice(close + 1);
      const inline = /[#;]/.exec(rest);
      if (inline) pendingComment += rest.slice(inline.index);
      section = { name: line.slice(1, close), comment: pendingComment.trim(), keys: [] };
      sections.push(section);
      pendingComment = '';
      continue;
    }
    // key name, possibly quoted
    let name: string;
    let offset: number;
    const keyQuote =
      line.startsWith('"""') && line.length > 6 ? '"""' : line.startsWith('"') ? '"' : line.startsWith('`') ? '`' : '';
    if (keyQuote) {
      const end = line.indexOf(keyQuote, keyQuote.length);
      if (end === -1) throw new SopsError(`invalid INI: missing closing key quote on line ${n + 1}`);
      const delim = line.slice(end + keyQuote.length).search(/[=:]/);
      if (delim === -1) throw new SopsError(`invalid INI: no '=' on line ${n + 1}`);
      name = line.slice(keyQuote.length, end).trim();
      offset = end + keyQuote.length + delim + 1;
    } else {
      const delim = line.search(/[=:]/);
      if (delim <= 0) throw new SopsError(`invalid INI: ${delim === 0 ? 'empty key name' : "no '='"} on line ${n + 1}`);
      name = line.slice(0, delim).trim();
      offset = delim + 1;
    }
    // value (`readValue`)
    let value: string;
    const raw = line.slice(offset).replace(/^\s+/, '');
    const valueQuote = raw.length > 3 && raw.startsWith('"""') ? '"""' : raw.startsWith('`') ? '`' : '';
    if (raw === '') {
      value = '';
    } else if (valueQuote) {
      const body = raw.slice(valueQuote.length);
      const end = body.lastIndexOf(valueQuote);
      if (end !== -1) {
        value = body.slice(0, end);
      } else {
        value = body;
        for (;;) {
          n++;
          const next = lines[n];
          if (next === undefined) throw new SopsError(`invalid INI: missing closing quote of the value of '${name}'`);
          const close = next.lastIndexOf(valueQuote);
          if (close === -1) {
            value += next;
            continue;
          }
          value += next.slice(0, close);
          const inline = /[#;]/.exec(next.slice(close));
          if (inline) pendingComment += next.slice(close + inline.index).trim();
          break;
        }
      }
    } else {
      value = raw.trim();
      while (value.endsWith('\\')) {
        // continuation lines
        const next = lines[n + 1]?.trim();
        if (!next) break;
        n++;
        value = value.slice(0, -1) + next;
      }
      const inline = /[#;]/.exec(value);
      if (inline) {
        pendingComment += value.slice(inline.index);
        value = value.slice(0, inline.index).trim();
      }
      for (const q of ["'", '"']) {
        if (value.length >= 2 && value.startsWith(q) && value.endsWith(q) && value.indexOf(q, 1) === value.length - 1) {
          value = value.slice(1, -1);
        }
      }
    }
    const existing = section.keys.find((k) => k.name === name);
    if (existing) {
      existing.value = value;
      existing.comment = pendingComment.trim();
    } else {
      section.keys.push({ name, value, comment: pendingComment.trim() });
    }
    pendingComment = '';
  }
  return sections;
}

/** `stripCommentChar` of sops's INI store. */
function stripIniComment(comment: string): string {
  if (comment.startsWith(';')) return comment.replace(/^[; ]+/, '');
  if (comment.startsWith('#')) return comment.replace(/^[# ]+/, '');
  return comment;
}

/** go-ini's `WriteTo` with its defaults (PrettyFormat, PrettySection), as `sops decrypt` prints INI. */
function writeIni(sections: readonly IniSection[]): string {
  let out = '';
  const formatComment = (line: string, trim: boolean): string => {
    if (line === '') return ';';
    if (line[0] !== '#' && line[0] !== ';') return '; ' + (trim ? line.trim() : line);
    return line[0] + ' ' + line.slice(1).trim();
  };
  sections.forEach((section, i) => {
    if (section.comment)
      out += section.comment
        .split('\n')
        .map((l) => formatComment(l, false) + '\n')
        .join('');
    if (i > 0 || section.name.toUpperCase() !== INI_DEFAULT_SECTION) out += `[${section.name}]\n`;
    else if (section.keys.length === 0) return;
    const quoteKey = (k: string): string => (/["=:]/.test(k) ? '`' + k + '`' : k.includes('`') ? '"""' + k + '"""' : k);
    const align = Math.max(0, ...section.keys.map((k) => Buffer.byteLength(quoteKey(k.name), 'utf8')));
    for (const key of section.keys) {
      if (key.comment)
        out += key.comment
          .split('\n')
          .map((l) => formatComment(l, true) + '\n')
          .join('');
      const name = quoteKey(key.name);
      let value = key.value;
      if (/[\n`]/.test(value)) value = '"""' + value + '"""';
      else if (/[#;]/.test(value)) value = '`' + value + '`';
      else if (value.trim().length !== value.length) value = '"' + value + '"';
      out += `${name}${' '.repeat(align - Buffer.byteLength(name, 'utf8'))} = ${value}\n`;
    }
    if (i < sections.length - 1) out += '\n';
  });
  return out;
}

async function decryptIni(text: string, opts: DecryptOptions): Promise<string> {
  const parsed = parseIni(text);
  const metaSections = parsed.filter((s) => s.name === 'sops');
  if (metaSections.length > 1) throw new SopsError('found duplicate sops entry');
  const metaSection = metaSections[0];
  if (!metaSection) throw new SopsError('sops metadata not found');
  const sections = parsed.filter((s) => s !== metaSection);
  // the tree: one branch whose entries are sections; a section's comment comes first, a key's comment after it
  const rebuild: (() => IniSection)[] = [];
  const items: MapEntry[] = sections.map((section) => {
    const sectionComment: CommentNode | undefined = section.comment
      ? { t: 'comment', text: stripIniComment(section.comment) }
      : undefined;
    const keyNodes = section.keys.map((key) => ({
      key,
      leaf: leaf(key.value),
      comment: key.comment ? ({ t: 'comment', text: stripIniComment(key.comment) } satisfies CommentNode) : undefined,
    }));
    const sectionItems: (MapEntry | CommentNode)[] = [];
    if (sectionComment) sectionItems.push(sectionComment);
    for (const k of keyNodes) {
      sectionItems.push({ t: 'entry', key: k.key.name, value: k.leaf });
      if (k.comment) sectionItems.push(k.comment);
    }
    rebuild.push(() => ({
      name: section.name,
      comment: sectionComment?.text ?? '',
      keys: keyNodes.map((k) => ({
        name: k.key.name,
        value: goValToString(k.leaf.value),
        comment: k.comment?.text ?? '',
      })),
    }));
    return { t: 'entry', key: section.name, value: { t: 'map', items: sectionItems } };
  });
  const meta = unflattenMetadata(metaSection.keys.map((k) => [k.name, k.value.replaceAll('\\n', '\n')] as const));
  await decryptLoaded([{ t: 'map', items }], meta, opts);
  return writeIni(rebuild.map((r) => r()));
}

// ---------------------------------------------------------------------------------------------
// Parsed objects

function jsToTree(value: unknown, depth: number): TreeNode {
  if (depth > MAX_DEPTH) throw new SopsError(`the document is nested deeper than ${MAX_DEPTH} levels`);
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

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * Decrypts a whole SOPS file and returns the plaintext in the same format, without the `sops`
 * metadata. YAML keeps its key order, comments and layout (through the `yaml` package); JSON,
 * dotenv and INI are written as `sops decrypt` writes them; binary returns the stored content.
 */
export async function decryptText(text: string, format: SopsFormat, opts: DecryptOptions): Promise<string> {
  switch (format) {
    case 'yaml':
      return decryptYaml(text, opts);
    case 'json':
      return decryptJson(text, opts);
    case 'binary':
      return decryptBinary(text, opts);
    case 'dotenv':
      return decryptDotenv(text, opts);
    case 'ini':
      return decryptIni(text, opts);
  }
}

/**
 * Decrypts a parsed document with a top-level `sops` map (e.g. a Kubernetes object after the
 * kustomize build) and returns it without `sops`. Integers come back as numbers. Key order is the
 * object's, so the MAC only verifies when that is the file's order (callers after kustomize pass
 * `verifyMac: false`, as Flux does).
 */
export async function decryptTree(
  tree: Record<string, unknown>,
  opts: DecryptOptions,
): Promise<Record<string, unknown>> {
  const { sops, ...data } = tree;
  if (!isRecord(sops)) throw new SopsError('sops metadata not found');
  const branch = jsToTree(data, 0) as MapNode;
  await decryptLoaded([branch], sops, opts);
  return toPlainJs(branch) as Record<string, unknown>;
}
