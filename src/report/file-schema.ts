/**
 * The report in a report file, checked field by field (file.ts): report files are untrusted input
 * (mode: report may merge files a fork's run wrote). Every field is of its type, every enum one of
 * its values, every name without control characters; a field this version does not write is
 * refused. The value returned is built from the checked fields only. Pure.
 */
import type { RenamedObject } from '../ssa/renames.js';
import type { HealthResult } from '../kstatus/wait.js';
import type { Status } from '../kstatus/status.js';
import type { Mode } from '../options/settings.js';
import type { Action, ChangeSetEntry } from '../ssa/changeset.js';
import type { FieldChange } from '../ssa/diff.js';
import type { Problem } from './problems.js';
import type { Counts, Failure, PrunedObject, RemovedKustomization, Report, Stage } from './model.js';

/** At most this many Kustomizations in one file's report (a job reconciles one, a single job a repository's). */
export const MAX_KUSTOMIZATIONS_PER_FILE = 2000;
/** Names (Kustomizations, clusters, subjects, files) longer than this are refused. */
const MAX_NAME = 1024;

// Each enum as a record of its union: the compiler says when the union and the list differ.
const MODES: Record<Mode, true> = { apply: true, preview: true, drift: true };
const ACTIONS: Record<Action, true> = { created: true, configured: true, unchanged: true, skipped: true };
const STATUSES: Record<Status, true> = {
  InProgress: true,
  Current: true,
  Failed: true,
  Terminating: true,
  NotFound: true,
  Unknown: true,
};
const STAGES: Record<Stage, true> = {
  resolve: true,
  render: true,
  plan: true,
  apply: true,
  health: true,
  prune: true,
  record: true,
  dependency: true,
  removed: true,
};
const PRUNE_ACTIONS: Record<PrunedObject['action'], true> = { deleted: true, skipped: true, failed: true, moved: true };
const POLICIES: Record<RemovedKustomization['deletionPolicy'], true> = {
  MirrorPrune: true,
  Delete: true,
  WaitForTermination: true,
  Orphan: true,
};
const REMOVED_ACTIONS: Record<RemovedKustomization['action'], true> = {
  orphaned: true,
  released: true,
  deleted: true,
  failed: true,
  refused: true,
  renamed: true,
};
const CHANGE_KINDS: Record<FieldChange['kind'], true> = { added: true, removed: true, changed: true };

/** What is wrong, at a path of the document (`report.kustomizations[0].changeset[2].action`). */
export class SchemaError extends Error {}

const shown = (v: unknown): string => {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
};

type Obj = Record<string, unknown>;

/** An object with only `allowed` keys (each present key then read by the caller). */
function object(v: unknown, at: string, allowed: readonly string[]): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SchemaError(`${at}: expected an object`);
  const extra = Object.keys(v).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw new SchemaError(`${at}: unknown field${extra.length > 1 ? 's' : ''} ${extra.map(shown).join(', ')}`);
  }
  return v as Obj;
}

function text(o: Obj, key: string, at: string): string {
  const v = o[key];
  if (typeof v !== 'string')
    throw new SchemaError(`${at}.${key}: expected a string${v === undefined ? '' : ` (got ${shown(v)})`}`);
  return v;
}

/** A name: a string without control characters, of bounded length. */
function name(o: Obj, key: string, at: string): string {
  return asName(text(o, key, at), `${at}.${key}`);
}

/** `v` when it is a name: no control characters, at most MAX_NAME characters. */
function asName(v: string, at: string): string {
  // eslint-disable-next-line no-control-regex
  if (v.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(v)) {
    throw new SchemaError(`${at}: not a name (control characters, or over ${MAX_NAME} characters)`);
  }
  return v;
}

function optional<T>(
  o: Obj,
  key: string,
  read: (o: Obj, key: string, at: string) => T,
  at: string,
): { [k: string]: T } {
  return o[key] === undefined ? {} : { [key]: read(o, key, at) };
}

/** A flag that is present only when true. */
function literalTrue(o: Obj, key: string, at: string): true {
  if (o[key] !== true) throw new SchemaError(`${at}.${key}: expected true, or no ${key} at all`);
  return true;
}

function bool(o: Obj, key: string, at: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new SchemaError(`${at}.${key}: expected true or false`);
  return v;
}

/** A whole number ≥ 0. */
function count(o: Obj, key: string, at: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new SchemaError(`${at}.${key}: expected a whole number ≥ 0${v === undefined ? '' : ` (got ${shown(v)})`}`);
  }
  return v;
}

function oneOf<T extends string>(values: Record<T, true>): (o: Obj, key: string, at: string) => T {
  return (o, key, at) => {
    const v = o[key];
    if (typeof v !== 'string' || !Object.hasOwn(values, v)) {
      throw new SchemaError(`${at}.${key}: expected one of ${Object.keys(values).join(', ')} (got ${shown(v)})`);
    }
    return v as T;
  };
}

function list<T>(o: Obj, key: string, at: string, item: (v: unknown, at: string) => T, max = Infinity): T[] {
  const v = o[key];
  if (!Array.isArray(v)) throw new SchemaError(`${at}.${key}: expected a list`);
  if (v.length > max) throw new SchemaError(`${at}.${key}: ${v.length} entries, more than ${max}`);
  return v.map((x, i) => item(x, `${at}.${key}[${i}]`));
}

const strings = (v: unknown, at: string): string => {
  if (typeof v !== 'string') throw new SchemaError(`${at}: expected a string`);
  return v;
};

/** A list item that is a name. */
const names = (v: unknown, at: string): string => asName(strings(v, at), at);

function fieldChange(v: unknown, at: string): FieldChange {
  const o = object(v, at, ['path', 'kind', 'before', 'after']);
  return {
    path: text(o, 'path', at),
    kind: oneOf(CHANGE_KINDS)(o, 'kind', at),
    ...('before' in o ? { before: o['before'] } : {}),
    ...('after' in o ? { after: o['after'] } : {}),
  };
}

function changeSetEntry(v: unknown, at: string): ChangeSetEntry {
  const o = object(v, at, [
    'subject',
    'action',
    'apiVersion',
    'kind',
    'namespace',
    'name',
    'diff',
    'yamlDiff',
    'note',
    'movedFrom',
    'recreated',
  ]);
  return {
    subject: name(o, 'subject', at),
    action: oneOf(ACTIONS)(o, 'action', at),
    apiVersion: name(o, 'apiVersion', at),
    kind: name(o, 'kind', at),
    ...optional(o, 'namespace', name, at),
    name: name(o, 'name', at),
    ...(o['diff'] === undefined ? {} : { diff: list(o, 'diff', at, fieldChange) }),
    ...(o['yamlDiff'] === undefined ? {} : { yamlDiff: list(o, 'yamlDiff', at, strings) }),
    ...optional(o, 'note', text, at),
    ...optional(o, 'movedFrom', name, at),
    ...(o['recreated'] === undefined ? {} : { recreated: list(o, 'recreated', at, strings, 100) }),
  };
}

function health(v: unknown, at: string): HealthResult {
  const o = object(v, at, ['subject', 'status', 'message']);
  return { subject: name(o, 'subject', at), status: oneOf(STATUSES)(o, 'status', at), message: text(o, 'message', at) };
}

function pruned(v: unknown, at: string): PrunedObject {
  const o = object(v, at, ['subject', 'action', 'reason', 'removedWith', 'movedTo', 'by']);
  return {
    subject: name(o, 'subject', at),
    action: oneOf(PRUNE_ACTIONS)(o, 'action', at),
    ...optional(o, 'reason', text, at),
    ...optional(o, 'removedWith', name, at),
    ...optional(o, 'movedTo', name, at),
    ...optional(o, 'by', text, at),
  };
}

function removed(v: unknown, at: string): RemovedKustomization {
  const o = object(v, at, [
    'kustomization',
    'inventory',
    'objects',
    'deletionPolicy',
    'action',
    'reason',
    'handedTo',
    'handedOver',
  ]);
  return {
    kustomization: name(o, 'kustomization', at),
    inventory: name(o, 'inventory', at),
    objects: count(o, 'objects', at),
    deletionPolicy: oneOf(POLICIES)(o, 'deletionPolicy', at),
    action: oneOf(REMOVED_ACTIONS)(o, 'action', at),
    reason: text(o, 'reason', at),
    ...(o['handedTo'] === undefined ? {} : { handedTo: list(o, 'handedTo', at, names, 100) }),
    ...optional(o, 'handedOver', count, at),
  };
}

function approval(v: unknown, at: string): { label: string; objects: string[] } {
  const o = object(v, at, ['label', 'objects']);
  return { label: name(o, 'label', at), objects: list(o, 'objects', at, names) };
}

function renamedObject(v: unknown, at: string): RenamedObject {
  const o = object(v, at, ['from', 'to', 'cost']);
  return { from: name(o, 'from', at), to: name(o, 'to', at), cost: text(o, 'cost', at) };
}

function problem(v: unknown, at: string): Problem {
  const o = object(v, at, ['subject', 'message', 'file', 'line']);
  return {
    subject: name(o, 'subject', at),
    message: text(o, 'message', at),
    ...optional(o, 'file', name, at),
    ...optional(o, 'line', count, at),
  };
}

function counts(o: Obj, key: string, at: string): Counts {
  const c = object(o[key], `${at}.${key}`, ['created', 'configured', 'unchanged', 'skipped', 'deleted']);
  const where = `${at}.${key}`;
  return {
    created: count(c, 'created', where),
    configured: count(c, 'configured', where),
    unchanged: count(c, 'unchanged', where),
    skipped: count(c, 'skipped', where),
    deleted: count(c, 'deleted', where),
  };
}

function failure(o: Obj, key: string, at: string): Failure {
  const where = `${at}.${key}`;
  const f = object(o[key], where, ['stage', 'reason', 'message', 'userError']);
  return {
    stage: oneOf(STAGES)(f, 'stage', where),
    reason: name(f, 'reason', where),
    message: text(f, 'message', where),
    ...(f['userError'] === undefined ? {} : { userError: literalTrue(f, 'userError', where) }),
  };
}

function drift(o: Obj, key: string, at: string): NonNullable<Report['drift']> {
  const where = `${at}.${key}`;
  const d = object(o[key], where, ['detected', 'corrected']);
  return { detected: bool(d, 'detected', where), corrected: bool(d, 'corrected', where) };
}

function source(o: Obj, key: string, at: string): NonNullable<Report['source']> {
  const where = `${at}.${key}`;
  const s = object(o[key], where, ['ref', 'revision', 'originRevision']);
  return {
    ref: text(s, 'ref', where),
    ...optional(s, 'revision', name, where),
    ...optional(s, 'originRevision', name, where),
  };
}

const REPORT_FIELDS = [
  'mode',
  'kustomization',
  'cluster',
  'level',
  'path',
  'server',
  'ok',
  'changeset',
  'counts',
  'durationMs',
  'health',
  'pruned',
  'renamed',
  'approval',
  'removed',
  'inventory',
  'notes',
  'kustomizations',
  'problems',
  'drift',
  'source',
  'error',
  'failure',
];

/**
 * A report as a job wrote it: its Kustomizations' reports one level deep (a job's combined report),
 * at most MAX_KUSTOMIZATIONS_PER_FILE of them.
 */
export function checkReport(v: unknown, at = 'report', nested = false): Report {
  const o = object(v, at, nested ? REPORT_FIELDS.filter((k) => k !== 'kustomizations') : REPORT_FIELDS);
  const cluster = o['cluster'] === undefined ? undefined : name(o, 'cluster', at);
  if (cluster !== undefined && cluster.includes('/'))
    throw new SchemaError(`${at}.cluster: a directory name has no "/"`);
  const durationMs = o['durationMs'];
  if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs < 0) {
    throw new SchemaError(`${at}.durationMs: expected a number of milliseconds ≥ 0`);
  }
  return {
    mode: oneOf(MODES)(o, 'mode', at),
    kustomization: name(o, 'kustomization', at),
    ...(cluster !== undefined ? { cluster } : {}),
    ...optional(o, 'level', count, at),
    path: text(o, 'path', at),
    server: name(o, 'server', at),
    ok: bool(o, 'ok', at),
    changeset: list(o, 'changeset', at, changeSetEntry),
    counts: counts(o, 'counts', at),
    durationMs,
    ...(o['health'] === undefined ? {} : { health: list(o, 'health', at, health) }),
    ...(o['pruned'] === undefined ? {} : { pruned: list(o, 'pruned', at, pruned) }),
    ...(o['renamed'] === undefined ? {} : { renamed: list(o, 'renamed', at, renamedObject) }),
    ...(o['approval'] === undefined ? {} : { approval: approval(o['approval'], `${at}.approval`) }),
    ...(o['removed'] === undefined ? {} : { removed: list(o, 'removed', at, removed) }),
    ...optional(o, 'inventory', name, at),
    notes: list(o, 'notes', at, strings),
    ...(o['kustomizations'] === undefined
      ? {}
      : {
          kustomizations: list(
            o,
            'kustomizations',
            at,
            (k, where) => checkReport(k, where, true),
            MAX_KUSTOMIZATIONS_PER_FILE,
          ),
        }),
    ...(o['problems'] === undefined ? {} : { problems: list(o, 'problems', at, problem) }),
    ...(o['drift'] === undefined ? {} : { drift: drift(o, 'drift', at) }),
    ...(o['source'] === undefined ? {} : { source: source(o, 'source', at) }),
    ...optional(o, 'error', text, at),
    ...(o['failure'] === undefined ? {} : { failure: failure(o, 'failure', at) }),
  };
}
