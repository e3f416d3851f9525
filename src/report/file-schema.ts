/**
 * The report in a report file, checked field by field (file.ts): report files are untrusted input
 * (mode: report may merge files a fork's run wrote). Every field is of its type, every enum one of
 * its values, every name without control characters; a field this version does not write is
 * refused. The value returned is built from the checked fields only. Each record's schema is typed
 * by the type it reads (`Schema<Report>`): a field added to or taken from Report, or made optional,
 * fails to compile until its schema says how it is read. Pure.
 */
import type { RenamedObject } from '../ssa/renames.js';
import type { HealthResult } from '../kstatus/wait.js';
import type { Status } from '../kstatus/status.js';
import type { Mode } from '../options/settings.js';
import type { Action, ChangeSetEntry } from '../ssa/changeset.js';
import type { FieldChange } from '../ssa/diff.js';
import type { Problem } from './problems.js';
import type { Before, Counts, Failure, PrunedObject, RemovedKustomization, Report, Stage } from './model.js';

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

/** Reads the value at `at` (a path of the document) as a T, or throws a SchemaError naming the path. */
type Read<T> = (v: unknown, at: string) => T;

/** One field of a record: how it is read, and whether it may be left out. */
interface Field<T, Optional extends boolean> {
  read: Read<T>;
  optional: Optional;
}
type IsOptional<T, K extends keyof T> = Partial<Pick<T, K>> extends Pick<T, K> ? true : false;

/** How each field of T is read: every key of T, and optional exactly where T's is. */
export type Schema<T> = { [K in keyof T]-?: Field<Exclude<T[K], undefined>, IsOptional<T, K>> };

const required = <T>(read: Read<T>): Field<T, false> => ({ read, optional: false });
const optional = <T>(read: Read<T>): Field<T, true> => ({ read, optional: true });

/** An object with only `allowed` keys (each present key then read by the caller). */
function object(v: unknown, at: string, allowed: readonly string[]): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SchemaError(`${at}: expected an object`);
  const extra = Object.keys(v).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw new SchemaError(`${at}: unknown field${extra.length > 1 ? 's' : ''} ${extra.map(shown).join(', ')}`);
  }
  return v as Obj;
}

/**
 * A record read by its schema (less the `omit` fields, then unknown ones): only the fields it
 * declares, each checked in the schema's order; an optional one that is absent stays absent.
 */
function record<T>(schema: Schema<T>, omit: readonly (keyof T & string)[] = []): Read<T> {
  const keys = (Object.keys(schema) as (keyof T & string)[]).filter((k) => !omit.includes(k));
  return (v, at) => {
    const o = object(v, at, keys);
    const out: Obj = {};
    for (const key of keys) {
      const field = schema[key] as Field<unknown, boolean>;
      if (field.optional && o[key] === undefined) continue;
      out[key] = field.read(o[key], `${at}.${key}`);
    }
    return out as T;
  };
}

const text: Read<string> = (v, at) => {
  if (typeof v !== 'string')
    throw new SchemaError(`${at}: expected a string${v === undefined ? '' : ` (got ${shown(v)})`}`);
  return v;
};

/** A name: a string without control characters, of bounded length. */
const name: Read<string> = (v, at) => asName(text(v, at), at);

/** `v` when it is a name: no control characters, at most MAX_NAME characters. */
function asName(v: string, at: string): string {
  // eslint-disable-next-line no-control-regex
  if (v.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(v)) {
    throw new SchemaError(`${at}: not a name (control characters, or over ${MAX_NAME} characters)`);
  }
  return v;
}

/** A flag that is present only when true. */
const literalTrue =
  (key: string): Read<true> =>
  (v, at) => {
    if (v !== true) throw new SchemaError(`${at}: expected true, or no ${key} at all`);
    return true;
  };

const bool: Read<boolean> = (v, at) => {
  if (typeof v !== 'boolean') throw new SchemaError(`${at}: expected true or false`);
  return v;
};

/** A whole number ≥ 0. */
const count: Read<number> = (v, at) => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new SchemaError(`${at}: expected a whole number ≥ 0${v === undefined ? '' : ` (got ${shown(v)})`}`);
  }
  return v;
};

/** A number of milliseconds ≥ 0. */
const milliseconds: Read<number> = (v, at) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new SchemaError(`${at}: expected a number of milliseconds ≥ 0`);
  }
  return v;
};

function oneOf<T extends string>(values: Record<T, true>): Read<T> {
  return (v, at) => {
    if (typeof v !== 'string' || !Object.hasOwn(values, v)) {
      throw new SchemaError(`${at}: expected one of ${Object.keys(values).join(', ')} (got ${shown(v)})`);
    }
    return v as T;
  };
}

function list<T>(item: Read<T>, max = Infinity): Read<T[]> {
  return (v, at) => {
    if (!Array.isArray(v)) throw new SchemaError(`${at}: expected a list`);
    if (v.length > max) throw new SchemaError(`${at}: ${v.length} entries, more than ${max}`);
    return v.map((x, i) => item(x, `${at}[${i}]`));
  };
}

/** A list item that is a string. */
const strings: Read<string> = (v, at) => {
  if (typeof v !== 'string') throw new SchemaError(`${at}: expected a string`);
  return v;
};

/** A list item that is a name. */
const names: Read<string> = (v, at) => asName(strings(v, at), at);

/** Any JSON value (a field's value before and after a change). */
const anything: Read<unknown> = (v) => v;

/** A cluster: a name, and a directory's (`clusters/<name>/`). */
const cluster: Read<string> = (v, at) => {
  const c = name(v, at);
  if (c.includes('/')) throw new SchemaError(`${at}: a directory name has no "/"`);
  return c;
};

const fieldChange = record<FieldChange>({
  path: required(text),
  kind: required(oneOf(CHANGE_KINDS)),
  before: optional(anything),
  after: optional(anything),
});

const changeSetEntry = record<ChangeSetEntry>({
  subject: required(name),
  action: required(oneOf(ACTIONS)),
  apiVersion: required(name),
  kind: required(name),
  namespace: optional(name),
  name: required(name),
  diff: optional(list(fieldChange)),
  yamlDiff: optional(list(strings)),
  note: optional(text),
  movedFrom: optional(name),
  recreated: optional(list(strings, 100)),
});

const health = record<HealthResult>({
  subject: required(name),
  status: required(oneOf(STATUSES)),
  message: required(text),
});

const pruned = record<PrunedObject>({
  subject: required(name),
  action: required(oneOf(PRUNE_ACTIONS)),
  reason: optional(text),
  removedWith: optional(name),
  movedTo: optional(name),
  by: optional(text),
});

const removed = record<RemovedKustomization>({
  kustomization: required(name),
  inventory: required(name),
  objects: required(count),
  deletionPolicy: required(oneOf(POLICIES)),
  action: required(oneOf(REMOVED_ACTIONS)),
  reason: required(text),
  handedTo: optional(list(names, 100)),
  handedOver: optional(count),
});

const approval = record<NonNullable<Report['approval']>>({ label: required(name), objects: required(list(names)) });

const renamedObject = record<RenamedObject>({ from: required(name), to: required(name), cost: required(text) });

const problem = record<Problem>({
  subject: required(name),
  message: required(text),
  file: optional(name),
  line: optional(count),
});

const counts = record<Counts>({
  created: required(count),
  configured: required(count),
  unchanged: required(count),
  skipped: required(count),
  deleted: required(count),
});

const failure = record<Failure>({
  stage: required(oneOf(STAGES)),
  reason: required(name),
  message: required(text),
  userError: optional(literalTrue('userError')),
});

const before = record<Before>({
  result: required(oneOf<'Failed'>({ Failed: true })),
  since: optional(name),
  message: optional(text),
});

const drift = record<NonNullable<Report['drift']>>({ detected: required(bool), corrected: required(bool) });

const source = record<NonNullable<Report['source']>>({
  ref: required(text),
  revision: optional(name),
  originRevision: optional(name),
});

/** A report as a job wrote it: its Kustomizations' reports one level deep (a job's combined report). */
const REPORT: Schema<Report> = {
  mode: required(oneOf(MODES)),
  kustomization: required(name),
  cluster: optional(cluster),
  level: optional(count),
  path: required(text),
  server: required(name),
  ok: required(bool),
  changeset: required(list(changeSetEntry)),
  counts: required(counts),
  durationMs: required(milliseconds),
  health: optional(list(health)),
  pruned: optional(list(pruned)),
  renamed: optional(list(renamedObject)),
  approval: optional(approval),
  removed: optional(list(removed)),
  inventory: optional(name),
  notes: required(list(strings)),
  kustomizations: optional(list((v, at) => kustomizationReport(v, at), MAX_KUSTOMIZATIONS_PER_FILE)),
  problems: optional(list(problem)),
  drift: optional(drift),
  source: optional(source),
  error: optional(text),
  failure: optional(failure),
  before: optional(before),
};

/**
 * A job's report of several Kustomizations names them all, joined (`a/x, a/y, …`): a name for each
 * of them, so longer than one name may be.
 */
const joinedNames: Read<string> = (v, at) => {
  const s = text(v, at);
  // eslint-disable-next-line no-control-regex
  if (s.length > MAX_NAME * MAX_KUSTOMIZATIONS_PER_FILE || /[\u0000-\u001f\u007f]/.test(s)) {
    throw new SchemaError(`${at}: not a list of names (control characters, or too long)`);
  }
  return s;
};

const jobReport = record<Report>({ ...REPORT, kustomization: required(joinedNames) });
/** A Kustomization's report in a job's: one has no Kustomizations of its own. */
const kustomizationReport = record(REPORT, ['kustomizations']);

/**
 * A report as a job wrote it: its Kustomizations' reports one level deep (a job's combined report),
 * at most MAX_KUSTOMIZATIONS_PER_FILE of them.
 */
export function checkReport(v: unknown, at = 'report'): Report {
  return jobReport(v, at);
}
