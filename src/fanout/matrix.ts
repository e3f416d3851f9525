/**
 * The matrix's identity: each entry's id, and the matrix as mode: report reads it back (input
 * matrix, CLI --matrix) to know which jobs it must have a report of. Pure.
 */
import { createHash } from 'node:crypto';

/** The readable part of an id is cut at this many characters (the hash keeps it unique). */
const READABLE_MAX = 80;

/**
 * A matrix entry's id: `[cluster.]namespace.name-<hash>`, the readable part with every character
 * but letters, digits, `.`, `_` and `-` as `_` (none of what actions/upload-artifact refuses in an
 * artifact name, `" : < > | * ? \r \n \ /`, nor a leading dot that hides a file from `*.json`) and
 * cut at 80 characters, and the first 8 hex digits of the SHA-256 of the exact (cluster, namespace,
 * name): `clusters/a/` `b/c.d` and `clusters/a.b/` `c/d` read alike but differ. makePlan checks that
 * no two ids of a plan are the same, ignoring case.
 */
export function entryId(cluster: string, namespace: string, name: string): string {
  const readable = [...(cluster ? [cluster] : []), namespace, name]
    .join('.')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[.-]/, '_')
    .slice(0, READABLE_MAX);
  const hash = createHash('sha256')
    .update(JSON.stringify([cluster, namespace, name]))
    .digest('hex')
    .slice(0, 8);
  return `${readable}-${hash}`;
}

/** A job mode: report expects a report of: one entry of the plan's matrix. */
export interface ExpectedJob {
  id: string;
  /** '' for a repository without the clusters/<name>/ layout. */
  cluster: string;
  /** `namespace/name`. */
  kustomization: string;
  level?: number;
  path?: string;
}

/** The matrix input's text is refused above this size (GitHub's job outputs are at most 1 MiB). */
export const MAX_MATRIX_BYTES = 8 * 1024 * 1024;
/** At most this many entries (GitHub runs at most 256 jobs of one matrix). */
export const MAX_MATRIX_ENTRIES = 10_000;

const ID = /^[A-Za-z0-9._-]{1,200}$/;
const NAMESPACED = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?\/[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex
const CLUSTER = /^[^/\u0000-\u001f\u007f]{0,255}$/;

/**
 * The plan's matrix as mode: plan wrote it: the output matrix (`{"include": [...]}`) or the CLI's
 * `plan --output json` document (`{"matrix": {"include": [...]}, "count": N, ...}`). Strict: each
 * entry needs its id, cluster and kustomization (namespace/name); ids and (cluster, kustomization)
 * appear once. Errors start with `where` and say what to pass.
 */
export function parseMatrix(text: string, where = 'matrix'): ExpectedJob[] {
  const fail = (why: string) =>
    new Error(
      `${where}: ${why}; pass the plan job's matrix output as it is (matrix: \${{ needs.plan.outputs.matrix }}), or the CLI's plan --output json`,
    );
  if (text.length > MAX_MATRIX_BYTES) throw fail(`over ${MAX_MATRIX_BYTES / 1024 / 1024} MiB`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw fail(`not JSON (${(err as Error).message})`);
  }
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value)) throw fail('not a JSON object');
  let matrix: unknown = value;
  if ('matrix' in value) {
    matrix = value['matrix'];
    const include = isObject(matrix) ? matrix['include'] : undefined;
    if (value['count'] !== undefined && (!Array.isArray(include) || value['count'] !== include.length)) {
      throw fail(
        `count is ${JSON.stringify(value['count'])}, but the matrix has ${Array.isArray(include) ? include.length : 'no'} entries`,
      );
    }
  } else if (Object.keys(value).some((k) => k !== 'include')) {
    throw fail(
      `unknown fields ${Object.keys(value)
        .filter((k) => k !== 'include')
        .join(', ')} (expected {"include": [...]})`,
    );
  }
  if (!isObject(matrix) || !Array.isArray(matrix['include'])) throw fail('no include list');
  const include = matrix['include'] as unknown[];
  if (include.length > MAX_MATRIX_ENTRIES) throw fail(`${include.length} entries, more than ${MAX_MATRIX_ENTRIES}`);
  const byId = new Map<string, number>();
  const byKey = new Map<string, number>();
  return include.map((e, i) => {
    const at = `include[${i}]`;
    if (!isObject(e)) throw fail(`${at} is not an object`);
    const { id, cluster, kustomization, level, path } = e;
    if (typeof id !== 'string' || !ID.test(id)) throw fail(`${at}.id is not a matrix id (${JSON.stringify(id)})`);
    if (typeof cluster !== 'string' || !CLUSTER.test(cluster)) throw fail(`${at}.cluster is not a cluster name`);
    if (typeof kustomization !== 'string' || !NAMESPACED.test(kustomization)) {
      throw fail(`${at}.kustomization is not namespace/name (${JSON.stringify(kustomization)})`);
    }
    if (level !== undefined && (typeof level !== 'number' || !Number.isSafeInteger(level) || level < 0)) {
      throw fail(`${at}.level is not a whole number ≥ 0`);
    }
    if (path !== undefined && typeof path !== 'string') throw fail(`${at}.path is not a string`);
    const before = byId.get(id.toLowerCase()) ?? byKey.get(`${cluster}\u0000${kustomization}`);
    if (before !== undefined)
      throw fail(`${at} and include[${before}] are one job (the same id, or the same cluster and Kustomization)`);
    byId.set(id.toLowerCase(), i);
    byKey.set(`${cluster}\u0000${kustomization}`, i);
    return {
      id,
      cluster,
      kustomization,
      ...(level !== undefined ? { level } : {}),
      ...(path !== undefined ? { path } : {}),
    };
  });
}
