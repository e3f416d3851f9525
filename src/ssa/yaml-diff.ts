/**
 * A configured object's change as a reviewer reads it (pure): the live object and the dry-run's
 * answer, both as YAML (the noise Flux's diff leaves out removed), compared line by line, printed
 * as unified diff hunks with three lines of context, as `flux diff kustomization` shows YAML.
 * Secret values never appear: a v1 Secret's `data`/`stringData` and every field written from a
 * secret source are replaced on both sides by `***` when equal and by `*** (before)`/`*** (after)`
 * when they differ, so the diff still says changed or unchanged.
 */
import { stringify } from 'yaml';
import { isMap } from './json.js';

const MASK = '***';
/** Objects whose YAML has more lines than this get no YAML diff (the field list stands in). */
const MAX_LINES = 3000;
const CONTEXT = 3;

type Obj = Record<string, unknown>;

/** The JSON pointer's segments (`~1` → `/`, `~0` → `~`). */
function segments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function getAt(o: unknown, path: readonly string[]): unknown {
  let cur = o;
  for (const k of path) {
    if (Array.isArray(cur)) cur = cur[Number(k)];
    else if (isMap(cur)) cur = cur[k];
    else return undefined;
  }
  return cur;
}

function setAt(o: unknown, path: readonly string[], value: unknown): void {
  let cur = o;
  for (const k of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(k)];
    else if (isMap(cur)) cur = cur[k];
    else return;
  }
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (Array.isArray(cur) && cur[Number(last)] !== undefined) cur[Number(last)] = value;
  else if (isMap(cur) && Object.hasOwn(cur, last)) cur[last] = value;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Both sides with the secret fields masked (see the module comment); copies, the inputs untouched. */
export function maskPair(before: Obj, after: Obj, secretPointers: readonly string[]): [Obj, Obj] {
  const b = structuredClone(before);
  const a = structuredClone(after);
  const paths: string[][] = secretPointers.map(segments);
  const isSecret = (o: Obj) => o['apiVersion'] === 'v1' && o['kind'] === 'Secret';
  if (isSecret(after) || isSecret(before)) {
    for (const field of ['data', 'stringData']) {
      const keys = new Set([...Object.keys(asMap(b[field])), ...Object.keys(asMap(a[field]))]);
      for (const k of keys) paths.push([field, k]);
    }
  }
  for (const path of paths) {
    const x = getAt(before, path);
    const y = getAt(after, path);
    // On one side only (added or removed): the line itself says so.
    const plain = same(x, y) || x === undefined || y === undefined;
    setAt(b, path, plain ? MASK : `${MASK} (before)`);
    setAt(a, path, plain ? MASK : `${MASK} (after)`);
  }
  return [b, a];
}

const asMap = (v: unknown): Obj => (isMap(v) ? v : {});

/** The lines of `o` as YAML, in the order its keys come (as the API server returns them). */
function lines(o: Obj): string[] {
  return stringify(o, { lineWidth: 0 }).replace(/\n$/, '').split('\n');
}

/**
 * The unified diff of two line lists (longest common subsequence), as hunks: `@@ -a,n +b,m @@`,
 * then ` ` context, `-` old and `+` new lines; undefined when they are equal or too long to compare.
 */
export function unifiedDiff(a: readonly string[], b: readonly string[], context = CONTEXT): string[] | undefined {
  if (a.length > MAX_LINES || b.length > MAX_LINES) return undefined;
  // Trim the common head and tail: most of an object is unchanged.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  if (head === a.length && head === b.length) return undefined;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  // LCS table over the middle only.
  const n = x.length;
  const m = y.length;
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        x[i] === y[j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  /** Every line: its mark and its numbers in a and b (1-based). */
  const ops: { mark: ' ' | '-' | '+'; text: string; ai: number; bi: number }[] = [];
  for (let k = 0; k < head; k++) ops.push({ mark: ' ', text: a[k]!, ai: k + 1, bi: k + 1 });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      ops.push({ mark: ' ', text: x[i]!, ai: head + i + 1, bi: head + j + 1 });
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) {
      // Old lines before new ones, as diff prints them.
      ops.push({ mark: '-', text: x[i]!, ai: head + i + 1, bi: head + j });
      i++;
    } else {
      ops.push({ mark: '+', text: y[j]!, ai: head + i, bi: head + j + 1 });
      j++;
    }
  }
  for (let k = 0; k < tail; k++) {
    ops.push({ mark: ' ', text: a[a.length - tail + k]!, ai: a.length - tail + k + 1, bi: b.length - tail + k + 1 });
  }
  // Hunks: changed lines with `context` lines around them, near ones merged.
  const changed = ops.map((o, idx) => (o.mark === ' ' ? -1 : idx)).filter((idx) => idx >= 0);
  const out: string[] = [];
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= 2 * context + 1) end++;
    const from = Math.max(0, changed[start]! - context);
    const to = Math.min(ops.length - 1, changed[end]! + context);
    const slice = ops.slice(from, to + 1);
    const aLines = slice.filter((o) => o.mark !== '+');
    const bLines = slice.filter((o) => o.mark !== '-');
    const aStart = aLines[0]?.ai ?? slice[0]!.ai;
    const bStart = bLines[0]?.bi ?? slice[0]!.bi;
    out.push(`@@ -${aStart},${aLines.length} +${bStart},${bLines.length} @@`);
    for (const o of slice) out.push(`${o.mark}${o.text}`);
    start = end + 1;
  }
  return out;
}

/**
 * The YAML diff of a configured object: `live` and `dryRun` as the field diff compares them (noise
 * removed by the caller), secret fields masked; undefined when there is nothing to show this way.
 */
export function yamlDiff(live: Obj, dryRun: Obj, secretPointers: readonly string[] = []): string[] | undefined {
  const [before, after] = maskPair(live, dryRun, secretPointers);
  return unifiedDiff(lines(before), lines(after));
}
