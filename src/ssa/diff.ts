import { isSecret } from '../objects/secret.js';
import { fitsWidth, listHunks, MASK, MASK_AFTER, MASK_BEFORE, renderPair, renderValue } from './diff-text.js';
import { deepEqual } from './drift.js';
import { escapePointer, isMap } from './json.js';
import { covered } from './mask.js';

/** One field-level difference between the live object and the dry-run result. */
export interface FieldChange {
  /** JSON pointer (RFC 6901) of the field. */
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const NOISE_METADATA = ['managedFields', 'resourceVersion', 'uid', 'generation', 'creationTimestamp', 'selfLink'];
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** A changed list shown element by element only when that takes at most this many changes. */
const MAX_ELEMENT_CHANGES = 12;

/**
 * A copy without server noise: `status`, the server-set metadata fields (managedFields,
 * resourceVersion, uid, generation, creationTimestamp, selfLink) and the client-side-apply
 * annotation (an annotation map left empty is dropped too).
 */
export function normalizeForDiff(obj: Record<string, unknown>): Record<string, unknown> {
  const { status: _status, ...rest } = obj;
  const out: Record<string, unknown> = { ...rest };
  const metadata = obj['metadata'];
  if (!isMap(metadata)) return out;
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(metadata)) if (!NOISE_METADATA.includes(k)) meta[k] = v;
  const annotations = meta['annotations'];
  if (isMap(annotations) && Object.hasOwn(annotations, LAST_APPLIED)) {
    const { [LAST_APPLIED]: _lastApplied, ...kept } = annotations;
    if (Object.keys(kept).length > 0) meta['annotations'] = kept;
    else delete meta['annotations'];
  }
  out['metadata'] = meta;
  return out;
}

/**
 * Field-level differences from `live` (absent: a creation) to `dryRun`, both normalised. Maps are
 * recursed (an added or removed map is reported leaf by leaf), lists are compared element-wise when
 * their lengths match and as one change otherwise. Sorted by path. For a v1 Secret, values under
 * `/data` and `/stringData` are masked as Flux does: `*** (before)`/`*** (after)` or `***`; so is,
 * for any kind, every change that touches one of `secretPaths` (JSON pointers of fields written from
 * a secret source: SOPS, a substituteFrom Secret, secret-vars, in this run or an earlier one).
 */
export function diffObjects(
  live: Record<string, unknown> | undefined,
  dryRun: Record<string, unknown>,
  secretPaths: readonly string[] = [],
): FieldChange[] {
  const changes: FieldChange[] = [];
  walk(normalizeForDiff(live ?? {}), normalizeForDiff(dryRun), [], changes);
  const out = maskSecretData(dryRun, changes).map((c) => (covered(c.path, secretPaths) ? maskChange(c) : c));
  return out
    .map((c) => ({ c, segments: c.path.split('/').slice(1) }))
    .sort((a, b) => comparePaths(a.segments, b.segments))
    .map(({ c }) => c);
}

/**
 * One line per change (`~ /spec/replicas: 1 → 3`, `+ /metadata/labels/team: "web"`, `- /data/old: ***`),
 * values as JSON shortened to 80 characters, two long values cut where they differ (see
 * renderPair), a long list whose length changed as its elements' changes (see elementChanges); past
 * `maxLines` changes the rest is summarised.
 */
export function renderDiff(changes: readonly FieldChange[], maxLines = 50): string {
  const limit = Math.max(0, Math.floor(maxLines));
  const shown = changes.slice(0, limit);
  const lines = shown.flatMap((c) =>
    elementChanges(c).map((e) => {
      switch (e.kind) {
        case 'added':
          return `+ ${e.path}: ${renderValue(e.after)}`;
        case 'removed':
          return `- ${e.path}: ${renderValue(e.before)}`;
        case 'changed': {
          const [before, after] = renderPair(e.before, e.after);
          return `~ ${e.path}: ${before} → ${after}`;
        }
      }
    }),
  );
  const rest = changes.length - shown.length;
  if (rest > 0) lines.push(`… and ${rest} more change${rest === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/**
 * One change as the lines of a GitHub ```diff block: a changed field as its old value (`-`, red) and
 * its new one (`+`, green), so that both are coloured; `~` lines get no colour there. Long values
 * and lists as renderDiff shows them.
 */
export function diffBlockLines(c: FieldChange): string[] {
  return elementChanges(c).flatMap((e) => {
    switch (e.kind) {
      case 'added':
        return [`+ ${e.path}: ${renderValue(e.after)}`];
      case 'removed':
        return [`- ${e.path}: ${renderValue(e.before)}`];
      case 'changed': {
        const [before, after] = renderPair(e.before, e.after);
        return [`- ${e.path}: ${before}`, `+ ${e.path}: ${after}`];
      }
    }
  });
}

/**
 * A change as it is shown: a list whose length changed (diffObjects' one change) and that does not
 * fit on a line, as the changes of its elements (`+ /spec/args/3: "--y"`, `- /spec/args/1: "--x"`;
 * an element replaced at the same index, field by field, as diffObjects compares), when that takes
 * at most MAX_ELEMENT_CHANGES changes; anything else as it is. A masked change is a string, never a
 * list, so it stays whole.
 */
export function elementChanges(c: FieldChange): FieldChange[] {
  if (c.kind !== 'changed' || !Array.isArray(c.before) || !Array.isArray(c.after)) return [c];
  if (fitsWidth(c.before) && fitsWidth(c.after)) return [c];
  const out: FieldChange[] = [];
  const at = (index: number) => `${c.path}/${index}`;
  for (const { removed, added } of listHunks(c.before, c.after)) {
    const paired = Math.min(removed.length, added.length);
    for (let k = 0; k < paired; k++) {
      const r = removed[k]!;
      const a = added[k]!;
      if (r.index === a.index) {
        const inner: FieldChange[] = [];
        walk(r.value, a.value, [], inner);
        out.push(...inner.map((e) => ({ ...e, path: at(r.index) + e.path })));
      } else {
        out.push({ path: at(r.index), kind: 'removed', before: r.value });
        out.push({ path: at(a.index), kind: 'added', after: a.value });
      }
    }
    for (const r of removed.slice(paired)) out.push({ path: at(r.index), kind: 'removed', before: r.value });
    for (const a of added.slice(paired)) out.push({ path: at(a.index), kind: 'added', after: a.value });
  }
  if (out.length === 0 || out.length > MAX_ELEMENT_CHANGES) return [c];
  return out.flatMap(elementChanges);
}

function walk(before: unknown, after: unknown, path: string[], out: FieldChange[]): void {
  if (deepEqual(before, after)) return;
  if (isMap(before) && isMap(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const k of keys) {
      const p = [...path, k];
      if (!Object.hasOwn(after, k)) leaves(before[k], p, 'removed', out);
      else if (!Object.hasOwn(before, k)) leaves(after[k], p, 'added', out);
      else walk(before[k], after[k], p, out);
    }
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    before.forEach((v, i) => {
      walk(v, after[i], [...path, String(i)], out);
    });
    return;
  }
  out.push({ path: toPointer(path), kind: 'changed', before, after });
}

/** An added or removed value, one change per leaf of a non-empty map. */
function leaves(value: unknown, path: string[], kind: 'added' | 'removed', out: FieldChange[]): void {
  if (isMap(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, [...path, k], kind, out);
    return;
  }
  out.push(
    kind === 'added' ? { path: toPointer(path), kind, after: value } : { path: toPointer(path), kind, before: value },
  );
}

/**
 * Flux's mask of a Secret's diff: for a v1 Secret, each change under `/data` or `/stringData` with its
 * values replaced (`*** (before)`/`*** (after)`, or `***`); other objects' changes as they are.
 */
export function maskSecretData(
  obj: { apiVersion?: unknown; kind?: unknown },
  changes: readonly FieldChange[],
): FieldChange[] {
  if (!isSecret(obj)) return [...changes];
  return changes.map((c) => (/^\/(?:data|stringData)(?:\/|$)/.test(c.path) ? maskChange(c) : c));
}

function maskChange(c: FieldChange): FieldChange {
  switch (c.kind) {
    case 'added':
      return { path: c.path, kind: c.kind, after: MASK };
    case 'removed':
      return { path: c.path, kind: c.kind, before: MASK };
    case 'changed':
      return { path: c.path, kind: c.kind, before: MASK_BEFORE, after: MASK_AFTER };
  }
}

function toPointer(segments: readonly string[]): string {
  return segments.map((s) => '/' + escapePointer(s)).join('');
}

/** Segment by segment; list indexes numerically, so `/2` sorts before `/10`. */
function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] ?? '';
    const y = b[i] ?? '';
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
