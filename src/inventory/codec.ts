/**
 * The inventory as ConfigMap data, readable with `kubectl get configmap -o yaml`: `status.yaml` (the
 * last run), `entries.yaml` (Flux's `- id: … v: …` list) and `pending.yaml` (objects a run is about
 * to apply). Large entry lists are gzip-compressed into binaryData; compressed lists too large for one
 * ConfigMap are cut into chunks stored in numbered part ConfigMaps. Pure: bytes in, bytes out.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parse, stringify } from 'yaml';
import { CORE_BOOL, CORE_NULL } from '../kustomize/plain-scalars.js';
import type { Entry } from '../objects/id.js';
import { sortEntries } from './entries.js';

export interface InventoryStatus {
  /** `namespace/name` of the Kustomization. */
  kustomization: string;
  /** `owner/repo` the Kustomization came from, when known. */
  source?: string;
  /** The set of Kustomization files it belongs to (see removal.ts); absent for the path input. */
  set?: string;
  /** The Kustomization file (`file.yaml`) or the `path` input's directory (`path: dir`). */
  origin?: string;
  /** Result of the last run that wrote the inventory. */
  result: 'InProgress' | 'Succeeded' | 'Failed';
  message?: string;
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  /**
   * This repository's commit the run was for (whatever source the Kustomization is built from): a
   * fan-out job waiting for this Kustomization compares it with its own.
   */
  commit?: string;
  /** The revision of the source an ExternalArtifact was made from, when the last success had one (Flux's field). */
  lastAppliedOriginRevision?: string;
  /** The source the Kustomization was built from when it is not this repository's checkout (`OCIRepository ns/name`). */
  sourceRef?: string;
  startedAt: string;
  finishedAt?: string;
  /**
   * While the Kustomization's runs keep failing: when the first of them recorded `Failed` (ISO
   * time). Carried by every later Failed or InProgress record, cleared by a success (failingSince()).
   */
  failingSince?: string;
  durationMs?: number;
  runUrl?: string;
  /** Kept so that a run can honour them after the Kustomization's file is gone from the repository. */
  prune: boolean;
  /** The user its objects were applied as (spec.serviceAccountName): its removal acts as it too. */
  impersonate?: string;
  deletionPolicy: 'MirrorPrune' | 'Delete' | 'WaitForTermination' | 'Orphan';
  timeoutMs: number;
}

/**
 * The failingSince of a status about to be written with `result` at `now` (ISO), after `previous`
 * (the status it replaces): a success clears it; a failure keeps the first failure's time, which
 * the previous Failed status (or an InProgress one in between) carries, else starts it now; a run
 * in progress carries what it found. A Failed status written before the field existed counts from
 * its own end. Pure.
 */
export function failingSince(
  previous: Pick<InventoryStatus, 'result' | 'failingSince' | 'finishedAt' | 'startedAt'> | undefined,
  result: InventoryStatus['result'],
  now: string,
): string | undefined {
  if (result === 'Succeeded') return undefined;
  const carried =
    previous === undefined || previous.result === 'Succeeded'
      ? undefined
      : (previous.failingSince ??
        (previous.result === 'Failed' ? (previous.finishedAt ?? previous.startedAt) : undefined));
  return result === 'Failed' ? (carried ?? now) : carried;
}

export interface InventoryRecord {
  entries: Entry[];
  pending: Entry[];
  status: InventoryStatus;
  /**
   * Per entry id, the fields (JSON pointers) that runs wrote from a secret source (SOPS, a
   * substituteFrom Secret, secret-vars), in `secret-paths.yaml`: a later run masks them in diffs even
   * when their source is no longer secret (a rotated or no-longer-substituted value's old text).
   * Paths only, never values.
   */
  secretPaths?: Record<string, string[]>;
}

export interface Encoded {
  data: Record<string, string>;
  binaryData: Record<string, string>;
  /** base64 chunks for the numbered part ConfigMaps, in order (empty when everything fits in the head). */
  parts: string[];
}

export interface CodecLimits {
  /** entries.yaml larger than this is compressed. */
  compressAbove: number;
  /** Largest base64 payload kept in one ConfigMap; bigger compressed lists are cut into parts. */
  maxPartBytes: number;
}

/** ConfigMaps hold at most 1 MiB in all; these leave room for keys, metadata and the status. */
export const DEFAULT_LIMITS: CodecLimits = { compressAbove: 64 * 1024, maxPartBytes: 900 * 1024 };

const entriesText = (entries: readonly Entry[]) =>
  sortEntries(entries)
    .map((e) => `- id: ${e.id}\n  v: ${e.v}\n`)
    .join('');

export function encodeInventory(record: InventoryRecord, limits: CodecLimits = DEFAULT_LIMITS): Encoded {
  const data: Record<string, string> = { 'status.yaml': stringify(record.status) };
  const binaryData: Record<string, string> = {};
  const parts: string[] = [];
  if (record.pending.length > 0) data['pending.yaml'] = entriesText(record.pending);
  const secretPaths = Object.entries(record.secretPaths ?? {}).filter(([, p]) => p.length > 0);
  if (secretPaths.length > 0) data['secret-paths.yaml'] = stringify(Object.fromEntries(secretPaths.sort()));
  data['count'] = String(record.entries.length);
  const text = entriesText(record.entries);
  if (Buffer.byteLength(text) <= limits.compressAbove) {
    data['entries.yaml'] = text;
    return { data, binaryData, parts };
  }
  const gz = gzipSync(text, { level: 9 });
  data['entries.encoding'] = 'gzip';
  data['entries.sha256'] = createHash('sha256').update(gz).digest('hex');
  const b64 = gz.toString('base64');
  if (b64.length <= limits.maxPartBytes) {
    binaryData['entries.yaml.gz'] = b64;
    return { data, binaryData, parts };
  }
  // Cut the compressed bytes (not the base64 text) so that every part is valid base64 on its own.
  // Whole base64 quanta (4 characters per 3 bytes), so no part is longer than maxPartBytes.
  const chunk = Math.max(3, Math.floor(limits.maxPartBytes / 4) * 3);
  for (let at = 0; at < gz.length; at += chunk) parts.push(gz.subarray(at, at + chunk).toString('base64'));
  data['entries.parts'] = String(parts.length);
  return { data, binaryData, parts };
}

/** What a head ConfigMap says about its parts: how many to read. */
export function partCount(data: Record<string, string>): number {
  const text = data['entries.parts'] ?? '0';
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(n))
    throw new Error(`entries.parts is ${JSON.stringify(data['entries.parts'])}`);
  return n;
}

/** The inverse of {@link encodeInventory}; `parts` are the part ConfigMaps' chunks in order. */
export function decodeInventory(
  data: Record<string, string>,
  binaryData: Record<string, string>,
  parts: readonly string[] = [],
): InventoryRecord {
  const status = parse(data['status.yaml'] ?? '{}') as InventoryStatus;
  const pending = readEntries(data['pending.yaml'] ?? '', 'pending.yaml');
  const secretPaths = readSecretPaths(data['secret-paths.yaml']);
  const extra = secretPaths ? { secretPaths } : {};
  if (data['entries.encoding'] === undefined) {
    return { entries: readEntries(data['entries.yaml'] ?? '', 'entries.yaml'), pending, status, ...extra };
  }
  if (data['entries.encoding'] !== 'gzip') throw new Error(`unknown entries.encoding ${data['entries.encoding']}`);
  const gz =
    parts.length > 0
      ? Buffer.concat(parts.map((p) => Buffer.from(p, 'base64')))
      : Buffer.from(binaryData['entries.yaml.gz'] ?? '', 'base64');
  const digest = createHash('sha256').update(gz).digest('hex');
  if (digest !== data['entries.sha256']) {
    throw new Error('the compressed entries do not match entries.sha256 (a part is missing or from another write)');
  }
  return { entries: readEntries(gunzipSync(gz).toString('utf8'), 'entries.yaml.gz'), pending, status, ...extra };
}

/** `secret-paths.yaml`: a map of entry ids to lists of JSON pointers; anything else is refused. */
function readSecretPaths(text: string | undefined): Record<string, string[]> | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const map = parse(text) as unknown;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new Error('secret-paths.yaml is not a map of entry ids to lists of JSON pointers');
  const out: Record<string, string[]> = {};
  for (const [id, paths] of Object.entries(map as Record<string, unknown>)) {
    if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string' && p.startsWith('/')))
      throw new Error(`secret-paths.yaml: ${id} is not a list of JSON pointers`);
    out[id] = paths as string[];
  }
  return out;
}

/** One entry as entriesText writes it, with values every YAML reader takes for the same string. */
const ENTRY_LINES = /^- id: ([A-Za-z_][A-Za-z0-9_./-]*)\n {2}v: ([A-Za-z_][A-Za-z0-9_./-]*)$/;

/**
 * The entries of text in entriesText's own format, read without a YAML parser (a tenth of the
 * time for 1,000 entries), or undefined for any other text, which the YAML parser reads.
 */
export function readOwnEntries(text: string): Entry[] | undefined {
  if (!text.endsWith('\n')) return undefined;
  const lines = text.split('\n');
  lines.pop();
  if (lines.length % 2 !== 0) return undefined;
  const out: Entry[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const m = ENTRY_LINES.exec(`${lines[i]}\n${lines[i + 1]}`);
    if (!m || [m[1]!, m[2]!].some((v) => CORE_NULL.has(v) || CORE_BOOL.has(v))) return undefined;
    out.push({ id: m[1]!, v: m[2]! });
  }
  return out;
}

function readEntries(text: string, where: string): Entry[] {
  if (text.trim() === '') return [];
  const own = readOwnEntries(text);
  if (own !== undefined) return own;
  const list = parse(text) as unknown;
  if (!Array.isArray(list)) throw new Error(`${where} is not a list`);
  return list.map((e: unknown, i) => {
    const { id, v } = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    if (typeof id !== 'string' || typeof v !== 'string') throw new Error(`${where}[${i}] is not {id, v}`);
    return { id, v };
  });
}
