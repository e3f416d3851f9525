/**
 * The parity suite's comparison, pure: what one step of a case left behind on each side (Flux's
 * kustomize-controller, and ours), normalised and compared aspect by aspect, and which differences
 * docs/flux-differences.md lists as intended.
 */
import { splitFluxId } from '../../src/inventory/flux.js';

/** What one side did in one step, and the state it left. */
export interface SideStep {
  /** Per Kustomization name: whether the step ended Ready or failed. */
  outcomes: Record<string, 'ready' | 'failed'>;
  /** Per subject (`Kind/namespace/name`, `Kind/name` when cluster-scoped): created, configured, deleted, ... */
  verdicts: Record<string, string>;
  /** Per Kustomization name: its inventory as `id v` strings (Flux's entry format), sorted. */
  inventory: Record<string, string[]>;
  /** Per subject: the object as read from the cluster after the step, or null when it does not exist. */
  objects: Record<string, Record<string, unknown> | null>;
  /** Per Kustomization name: why it failed, for the report only (never compared). */
  messages?: Record<string, string>;
}

export interface Difference {
  /** outcome | verdict | inventory | exists | object | managedFields */
  aspect: string;
  subject: string;
  /** What differs, without values: the part docs/flux-differences.md patterns match. */
  detail: string;
  /** The whole difference for people, values included where they are not secret. */
  message: string;
}

export function keyOf(d: Difference): string {
  return `${d.aspect} ${d.subject} ${d.detail}`;
}

/** Compares the two sides of one step; pure. */
export function compareStep(flux: SideStep, ours: SideStep): Difference[] {
  const out: Difference[] = [];
  for (const ks of union(Object.keys(flux.outcomes), Object.keys(ours.outcomes))) {
    const f = flux.outcomes[ks] ?? 'absent';
    const o = ours.outcomes[ks] ?? 'absent';
    if (f !== o) {
      const why = [
        flux.messages?.[ks] && `flux: ${clip(flux.messages[ks])}`,
        ours.messages?.[ks] && `ours: ${clip(ours.messages[ks])}`,
      ]
        .filter(Boolean)
        .join('; ');
      out.push(diff('outcome', ks, `flux=${f} ours=${o}`, why ? `flux=${f} ours=${o} (${why})` : undefined));
    }
  }
  // A failed Flux reconcile logs no verdicts (its error names only what changed): then only the
  // subjects it did report are compared; whether the others exist is compared below.
  const fluxFailed = Object.values(flux.outcomes).includes('failed');
  for (const subject of union(Object.keys(flux.verdicts), Object.keys(ours.verdicts))) {
    if (fluxFailed && !(subject in flux.verdicts)) continue;
    const f = flux.verdicts[subject] ?? 'none';
    const o = ours.verdicts[subject] ?? 'none';
    if (f !== o) out.push(diff('verdict', subject, `flux=${f} ours=${o}`));
  }
  for (const ks of union(Object.keys(flux.inventory), Object.keys(ours.inventory))) {
    const f = new Set(flux.inventory[ks] ?? []);
    const o = new Set(ours.inventory[ks] ?? []);
    const failed = flux.outcomes[ks] === 'failed' || ours.outcomes[ks] === 'failed' ? ' (after a failed apply)' : '';
    for (const id of union([...f], [...o])) {
      if (f.has(id) && !o.has(id)) out.push(diff('inventory', ks, `${id}: only in flux${failed}`));
      if (o.has(id) && !f.has(id)) out.push(diff('inventory', ks, `${id}: only in ours${failed}`));
    }
  }
  for (const subject of union(Object.keys(flux.objects), Object.keys(ours.objects))) {
    // An object being deleted (a Namespace finishing its contents) counts as gone: both tools have
    // asked for its deletion; when the API server ends it is not theirs.
    const f = live(flux.objects[subject]);
    const o = live(ours.objects[subject]);
    if ((f === null) !== (o === null)) {
      out.push(diff('exists', subject, `flux=${f ? 'present' : 'absent'} ours=${o ? 'present' : 'absent'}`));
      continue;
    }
    if (f === null || o === null) continue;
    const secret = f['kind'] === 'Secret';
    const fn = normalise(f);
    const on = normalise(o);
    for (const d of deepDiff(fn.object, on.object)) {
      const message = secret && /^(data|stringData)\b/.test(d.path) ? `${d.path}: differs (Secret value)` : undefined;
      out.push(diff('object', subject, d.path, message ?? `${d.path}: flux=${show(d.a)} ours=${show(d.b)}`));
    }
    for (const owner of union(Object.keys(fn.managed), Object.keys(on.managed))) {
      const fs = new Set(fn.managed[owner] ?? []);
      const os = new Set(on.managed[owner] ?? []);
      if (fs.size === 0 || os.size === 0) {
        out.push(diff('managedFields', subject, `${owner}: ${fs.size === 0 ? 'only in ours' : 'only in flux'}`));
        continue;
      }
      for (const p of union([...fs], [...os])) {
        if (fs.has(p) && !os.has(p)) out.push(diff('managedFields', subject, `${owner} ${p}: only in flux`));
        if (os.has(p) && !fs.has(p)) out.push(diff('managedFields', subject, `${owner} ${p}: only in ours`));
      }
    }
  }
  return out;
}

function live(o: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!o) return null;
  const meta = o['metadata'] as { deletionTimestamp?: string } | undefined;
  return meta?.deletionTimestamp ? null : o;
}

function diff(aspect: string, subject: string, detail: string, message?: string): Difference {
  return { aspect, subject, detail, message: message ?? detail };
}

/** Metadata the API server assigns and status, which no tool writes: left out of the comparison. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
];

/**
 * An object without what the API server assigns (uid, resourceVersion, timestamps, status, allocated
 * cluster IPs and node ports), and its managed fields as field paths per `manager/operation[/subresource]`.
 */
export function normalise(obj: Record<string, unknown>): {
  object: Record<string, unknown>;
  managed: Record<string, string[]>;
} {
  const copy = structuredClone(obj);
  const meta = Object.fromEntries(
    Object.entries((copy['metadata'] ?? {}) as Record<string, unknown>).filter(([k]) => !SERVER_METADATA.includes(k)),
  );
  const managedFields = ((copy['metadata'] as Record<string, unknown> | undefined)?.['managedFields'] ??
    []) as ManagedFieldsEntry[];
  copy['metadata'] = meta;
  const managed: Record<string, string[]> = {};
  // Status is written by controllers (at their own pace), not by the tools compared.
  for (const m of managedFields.filter((x) => x.subresource === undefined || x.subresource === '')) {
    const owner = [m.manager ?? '', m.operation ?? '', ...(m.subresource ? [m.subresource] : [])].join('/');
    managed[owner] = [...(managed[owner] ?? []), ...fieldPaths(m.fieldsV1 ?? {})].sort();
  }
  delete copy['status'];
  if (copy['kind'] === 'Job') {
    // The Job controller's selector labels carry the Job's uid.
    const spec = (copy['spec'] ?? {}) as {
      selector?: { matchLabels?: Record<string, string> };
      template?: { metadata?: { labels?: Record<string, string> } };
    };
    for (const labels of [spec.selector?.matchLabels, spec.template?.metadata?.labels]) {
      if (!labels) continue;
      for (const k of Object.keys(labels))
        if (k === 'controller-uid' || k === 'batch.kubernetes.io/controller-uid') labels[k] = '(uid)';
    }
  }
  if (copy['kind'] === 'Service') {
    const spec = (copy['spec'] ?? {}) as Record<string, unknown>;
    delete spec['clusterIP'];
    delete spec['clusterIPs'];
    for (const port of (spec['ports'] ?? []) as Record<string, unknown>[]) delete port['nodePort'];
    delete spec['healthCheckNodePort'];
  }
  return { object: copy, managed };
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: Record<string, unknown>;
}

/** The fields of a managedFields `fieldsV1` set, one dotted path per leaf (and per `.` member). */
export function fieldPaths(set: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(set)) {
    if (k === '.') {
      if (prefix !== '') out.push(prefix);
      continue;
    }
    const path = prefix === '' ? k : `${prefix}.${k}`;
    const children = v !== null && typeof v === 'object' ? Object.keys(v) : [];
    if (children.length === 0) out.push(path);
    else out.push(...fieldPaths(v as Record<string, unknown>, path));
  }
  return out;
}

/** Leaf-level differences between two JSON values, with `a.b[2].c` paths; pure. */
export function deepDiff(a: unknown, b: unknown, path = ''): { path: string; a: unknown; b: unknown }[] {
  if (isObject(a) && isObject(b)) {
    const out: { path: string; a: unknown; b: unknown }[] = [];
    for (const k of union(Object.keys(a), Object.keys(b))) {
      const plain = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k);
      const p = !plain ? `${path}[${JSON.stringify(k)}]` : path === '' ? k : `${path}.${k}`;
      out.push(...deepDiff(a[k], b[k], p));
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => deepDiff(x, b[i], `${path}[${i}]`));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ path: path === '' ? '.' : path, a, b }];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : clip(JSON.stringify(v));
}

function clip(s: string, n = 160): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * The differences docs/flux-differences.md lists as intended: every line `Parity: \`PATTERN\`` (one
 * pattern per backtick pair on the line). A pattern matches a difference's key (`aspect subject
 * detail`); `*` stands for any run of characters.
 */
export function knownPatterns(markdown: string): { pattern: string; section: string }[] {
  const out: { pattern: string; section: string }[] = [];
  let section = '';
  for (const line of markdown.split('\n')) {
    const heading = /^##+\s+(.*)$/.exec(line);
    if (heading) section = heading[1]!.trim();
    const m = /^Parity:\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const p of m[1]!.matchAll(/`([^`]+)`/g)) out.push({ pattern: p[1]!, section });
  }
  return out;
}

export function matches(pattern: string, key: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map(escapeRe).join('.*')}$`, 's');
  return re.test(key);
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** The first listed pattern a difference matches, or undefined when it is not listed. */
export function listedAs(
  d: Difference,
  known: readonly { pattern: string; section: string }[],
): { pattern: string; section: string } | undefined {
  const key = keyOf(d);
  return known.find((k) => matches(k.pattern, key));
}

/** The parts of an inventory id, Flux's (`__` for `:`) or ours (src/inventory/flux.ts: splitFluxId). */
export function parseId(id: string): { namespace: string; name: string; group: string; kind: string } {
  const parts = splitFluxId(id);
  if (parts === undefined)
    throw new Error(`inventory id ${JSON.stringify(id)} is not <namespace>_<name>_<group>_<kind>`);
  return parts;
}

/** The subject (`Kind/namespace/name` or `Kind/name`) of an inventory id. */
export function subjectOfId(id: string): string {
  const { namespace, name, kind } = parseId(id);
  return namespace === '' ? `${kind}/${name}` : `${kind}/${namespace}/${name}`;
}

/**
 * Verdicts from the lines kustomize-controller logged for one reconcile: `server-side apply completed`
 * (output: subject → action) and `garbage collection completed: ` (one `subject action` per line).
 * The first verdict seen for a subject wins (the reconcile that handled the trigger).
 */
export function fluxVerdicts(lines: readonly { msg?: string; output?: unknown }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of lines) {
    if (l.msg === 'server-side apply completed' && isObject(l.output)) {
      for (const [subject, action] of Object.entries(l.output)) {
        if (typeof action === 'string' && !(subject in out)) out[subject] = action;
      }
    } else if (l.msg?.startsWith('garbage collection completed: ')) {
      for (const row of l.msg.slice('garbage collection completed: '.length).split('\n')) {
        const m = /^(\S+)\s+(\S+)$/.exec(row.trim());
        if (m && !(m[1]! in out)) out[m[1]!] = m[2]!;
      }
    }
  }
  return out;
}
