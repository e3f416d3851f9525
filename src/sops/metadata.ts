/**
 * The `sops` metadata (`stores/stores.go` `metadata`, decoded with mapstructure's weak typing), and
 * its flattened form in dotenv and INI files (`stores/flatten.go`).
 */
import { RE2JS } from 're2js';
import { goParseBool } from './goformat.js';
import { isRecord } from '../util/record.js';
import { SopsError, type MasterKey, type MasterKeyKind } from './types.js';

/** `sops.DefaultUnencryptedSuffix`, used when the metadata names no encryption rule. */
const DEFAULT_UNENCRYPTED_SUFFIX = '_unencrypted';

/** One of the metadata's regular expressions: Go's MatchString (unanchored), in linear time. */
export interface KeyRegex {
  test(text: string): boolean;
}

/** The metadata as the walk uses it: key groups, the encryption rule, the MAC. */
export interface Metadata {
  groups: MasterKey[][];
  threshold: number;
  lastModified: string;
  mac: string;
  unencryptedSuffix: string;
  encryptedSuffix: string;
  unencryptedRegex?: KeyRegex;
  encryptedRegex?: KeyRegex;
  unencryptedCommentRegex?: KeyRegex;
  encryptedCommentRegex?: KeyRegex;
  macOnlyEncrypted: boolean;
}

/**
 * The master-key kinds in the order keys are tried within a group: sops's
 * `DefaultDecryptionOrder` (age, then PGP), then the others in the order sops builds a group.
 */
export const KEY_KINDS: readonly MasterKeyKind[] = ['age', 'pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault'];

export function weakString(v: unknown): string {
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

/**
 * A Go (RE2) regular expression as sops compiles it, matched by re2js: the same syntax (a leading
 * `(?i)` and the like included), and linear time whatever the file says.
 */
function goRegex(source: string, field: string): KeyRegex {
  try {
    return RE2JS.compile(source);
  } catch (err) {
    throw new SopsError(
      `invalid sops metadata: ${field} is not a valid regular expression (Go syntax): ${(err as Error).message}`,
      { cause: err },
    );
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

export function parseMetadata(raw: unknown): Metadata {
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
  const regex = (name: string): KeyRegex | undefined => (rule(name) === '' ? undefined : goRegex(rule(name), name));
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
export function unflattenMetadata(entries: readonly (readonly [string, string])[]): Record<string, unknown> {
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
