/**
 * Where secret values went: per object (by inventory entry id), the JSON pointers of the fields
 * written from a secret source — SOPS ciphertext decrypted, a secret variable substituted (through
 * any envsubst function), or any field holding a known secret value (a decrypted patch file, a
 * secretGenerator source). Diffs and messages mask these fields whatever the object's kind. Pure.
 */
import type { KubeObject } from '../objects/kube.js';
import { entryOf } from '../objects/id.js';
import { maskPaths, pathsHolding } from '../ssa/mask.js';

/** Secret field paths by inventory entry id. */
export type SecretPaths = Map<string, string[]>;

/**
 * The secret paths of each final object: those carried by index through the stages (decryption and
 * substitution keep the objects' order), plus the fields holding any of `values`.
 */
export function collectSecretPaths(
  objects: readonly KubeObject[],
  byIndex: readonly (readonly string[] | undefined)[],
  values: Iterable<string>,
  idOf: (obj: KubeObject) => string = secretPathsId,
): SecretPaths {
  const known = [...values];
  const out: SecretPaths = new Map();
  objects.forEach((obj, i) => {
    const paths = [...new Set([...(byIndex[i] ?? []), ...pathsHolding(obj, known)])].sort();
    if (paths.length > 0) out.set(idOf(obj), paths);
  });
  return out;
}

/** Both maps' paths, per id (sorted, without duplicates). */
export function mergeSecretPaths(
  ...maps: readonly (ReadonlyMap<string, readonly string[]> | undefined)[]
): SecretPaths {
  const out: SecretPaths = new Map();
  for (const m of maps) {
    for (const [id, paths] of m ?? []) out.set(id, [...new Set([...(out.get(id) ?? []), ...paths])].sort());
  }
  return out;
}

/** Only the ids in `keep` (the objects still in the inventory). */
export function keepSecretPaths(paths: ReadonlyMap<string, readonly string[]>, keep: Iterable<string>): SecretPaths {
  const ids = new Set(keep);
  return new Map([...paths].filter(([id]) => ids.has(id)).map(([id, p]) => [id, [...p]]));
}

/** The key of an object's secret paths: its inventory entry id. */
export function secretPathsId(obj: KubeObject): string {
  return entryOf({
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
  }).id;
}

/** Copies of the objects with every secret field replaced by `***` (build output without --show-secrets). */
export function maskSecretFields(
  objects: readonly KubeObject[],
  paths: ReadonlyMap<string, readonly string[]>,
): KubeObject[] {
  return objects.map((o) => maskPaths(o, paths.get(secretPathsId(o)) ?? []));
}

/**
 * The inventory's `secretPaths` after a write: the recorded ones and this run's, for the entries the
 * inventory still holds (absent when there are none). Once secret, a field stays secret while its
 * object is in the inventory: its live value may be an old secret.
 */
export function recordSecretPaths(
  recorded: Readonly<Record<string, readonly string[]>> | undefined,
  fresh: ReadonlyMap<string, readonly string[]>,
  kept: readonly { id: string }[],
): { secretPaths?: Record<string, string[]> } {
  const merged = mergeSecretPaths(new Map(Object.entries(recorded ?? {})), fresh);
  const paths = keepSecretPaths(
    merged,
    kept.map((e) => e.id),
  );
  return paths.size > 0 ? { secretPaths: Object.fromEntries(paths) } : {};
}
