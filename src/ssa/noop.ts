import type { ManagedFieldsEntry } from './cleanup.js';
import { deepEqual } from './drift.js';
import { escapePointer, isMap } from './json.js';

/**
 * Proves, without asking the server, that a forced server-side apply of `desired` by `manager`
 * would leave the live object as it is, so that its dry-run can be skipped. This is the common
 * case of a scheduled or re-run reconcile, where nothing changed in Git or in the cluster.
 *
 * The proof needs two things, both read from the live object:
 * 1. every field of `desired` is in the live object with the same value (maps and list items may
 *    hold more on the live side: server defaults), and lists have the same length; and
 * 2. the fields our manager owns (its Apply entry in managedFields) are exactly the fields of
 *    `desired`: none would be removed (owned but no longer desired) and none would be taken from
 *    another manager (desired but owned by someone else, whose value might be re-applied over).
 *
 * Anything it cannot place (a null, an unknown fieldsV1 key, two list items with one key, an
 * Apply entry at another apiVersion) is no proof, and the object is dry-run as before. It never
 * says "unchanged" where the dry-run would say "configured" on the objects of the tests; what it
 * cannot see is admission: a dry-run also runs webhooks and validation again, which is why
 * `alwaysDryRun` exists.
 */

type Json = unknown;
type FieldsNode = Record<string, unknown>;

export type NoopProof = { unchanged: true } | { unchanged: false; why: string };

/** Paths the server never records in managedFields: compared by value only. */
const UNTRACKED = new Set(['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace']);

class NoProof extends Error {}

export function provenUnchanged(
  desired: Record<string, unknown>,
  live: Record<string, unknown>,
  manager: string,
): NoopProof {
  try {
    const entries = (live['metadata'] as { managedFields?: ManagedFieldsEntry[] } | undefined)?.managedFields ?? [];
    const ours = entries.filter((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
    if (ours.length !== 1) fail(ours.length === 0 ? `no Apply entry of ${manager}` : `${ours.length} Apply entries`);
    const entry = ours[0]!;
    if (entry.apiVersion !== desired['apiVersion']) fail(`owned at ${String(entry.apiVersion)}`);
    if (entry.fieldsType !== 'FieldsV1' || !isMap(entry.fieldsV1)) fail('no FieldsV1');
    const owned = new Map<string, 'leaf' | 'node'>();
    const seen = desired['kind'] === 'Secret' && 'stringData' in desired ? withStringData(desired, live) : live;
    walkOwned(entry.fieldsV1, seen, desired, '', owned);
    walkDesired(desired, seen, '', owned, false);
    return { unchanged: true };
  } catch (err) {
    if (err instanceof NoProof) return { unchanged: false, why: err.message };
    throw err;
  }
}

function fail(why: string): never {
  throw new NoProof(why);
}

/**
 * Follows our fieldsV1 over the live object (where list keys are complete: defaults included)
 * and, position for position, over the desired one; records every owned path and fails when an
 * owned field has no counterpart in `desired` (the apply would remove it).
 */
function walkOwned(node: FieldsNode, live: Json, desired: Json, path: string, owned: Map<string, 'leaf' | 'node'>) {
  for (const [key, child] of Object.entries(node)) {
    if (key === '.') continue;
    const kind = key.slice(0, 2);
    const rest = key.slice(2);
    let liveChild: Json;
    let desiredChild: Json;
    let childPath: string;
    if (kind === 'f:') {
      if (!isMap(live) || !Object.hasOwn(live, rest)) fail(`owned ${path}/${rest} is not live`);
      if (!isMap(desired) || !Object.hasOwn(desired, rest)) fail(`owned ${path}/${rest} is not desired`);
      childPath = `${path}/${escapePointer(rest)}`;
      liveChild = live[rest];
      desiredChild = desired[rest];
    } else if (kind === 'k:' || kind === 'v:' || kind === 'i:') {
      if (!Array.isArray(live) || !Array.isArray(desired) || live.length !== desired.length) {
        fail(`owned list ${path} differs in length`);
      }
      const index = itemIndex(kind, rest, live);
      childPath = `${path}/${index}`;
      liveChild = live[index];
      desiredChild = desired[index];
    } else {
      fail(`unknown fieldsV1 key ${key} at ${path}`);
    }
    const leaf = !isMap(child) || Object.keys(child).length === 0;
    owned.set(childPath, leaf ? 'leaf' : 'node');
    if (!leaf) walkOwned(child, liveChild, desiredChild, childPath, owned);
  }
}

function itemIndex(kind: string, rest: string, live: readonly Json[]): number {
  let wanted: Json;
  try {
    wanted = JSON.parse(rest) as Json;
  } catch {
    fail(`unreadable fieldsV1 key ${kind}${rest}`);
  }
  if (kind === 'i:') {
    if (typeof wanted !== 'number' || !Number.isInteger(wanted) || wanted < 0 || wanted >= live.length) {
      fail(`index ${rest} out of range`);
    }
    return wanted;
  }
  const matches: number[] = [];
  live.forEach((item, i) => {
    const hit =
      kind === 'v:'
        ? deepEqual(item, wanted)
        : isMap(wanted) && isMap(item) && Object.entries(wanted).every(([k, v]) => deepEqual(item[k], v));
    if (hit) matches.push(i);
  });
  if (matches.length !== 1) fail(`${matches.length} list items match ${kind}${rest}`);
  return matches[0]!;
}

/**
 * Checks that `desired` is contained in `live` and that each of its fields is owned by us
 * (`covered` once an owned leaf, such as an atomic list or map, is above).
 */
function walkDesired(desired: Json, live: Json, path: string, owned: Map<string, 'leaf' | 'node'>, covered: boolean) {
  if (UNTRACKED.has(path)) {
    if (!deepEqual(desired, live)) fail(`${path} differs`);
    return;
  }
  const here = owned.get(path);
  const under = covered || here === 'leaf';
  if (desired === null || desired === undefined) fail(`null at ${path || '/'}`);
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) fail(`list ${path} differs`);
    if (desired.length === 0 && !under && here === undefined) fail(`${path} is not ours`);
    desired.forEach((item, i) => {
      walkDesired(item, live[i], `${path}/${i}`, owned, under);
    });
    return;
  }
  if (isMap(desired)) {
    if (!isMap(live)) fail(`${path} differs`);
    const keys = Object.keys(desired);
    if (keys.length === 0 && path !== '' && !under && here === undefined) fail(`${path} is not ours`);
    for (const key of keys) {
      const childPath = `${path}/${escapePointer(key)}`;
      if (!Object.hasOwn(live, key)) fail(`${childPath} is not live`);
      walkDesired(desired[key], live[key], childPath, owned, under);
    }
    return;
  }
  if (desired !== live) fail(`${path} differs`);
  if (!under && here === undefined) fail(`${path} is not ours`);
}

/**
 * A Secret's stringData is write-only: the server stores each value base64-encoded in data, while
 * managedFields keep the stringData keys. The live object as the comparison sees it: each desired
 * stringData key moved back from data, once its stored value is shown to be the desired one.
 */
function withStringData(desired: Record<string, unknown>, live: Record<string, unknown>): Record<string, unknown> {
  const strings = desired['stringData'];
  if (!isMap(strings)) fail('Secret stringData is not a map');
  const desiredData = isMap(desired['data']) ? desired['data'] : {};
  const liveData = isMap(live['data']) ? live['data'] : {};
  for (const [key, value] of Object.entries(strings)) {
    if (typeof value !== 'string') fail(`/stringData/${escapePointer(key)} is not a string`);
    if (Object.hasOwn(desiredData, key)) fail(`${key} is in both data and stringData`);
    if (liveData[key] !== Buffer.from(value, 'utf8').toString('base64'))
      fail(`/stringData/${escapePointer(key)} differs`);
  }
  const data = Object.fromEntries(Object.entries(liveData).filter(([key]) => !Object.hasOwn(strings, key)));
  return { ...live, data, stringData: strings };
}
