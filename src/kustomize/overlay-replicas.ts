/**
 * kustomize's replica count transformer (the `replicas` field) for the in-process overlay build:
 * each entry, in order, sets spec/replicas (created when absent) on every object its replicas
 * field specs select (Deployment, ReplicationController, ReplicaSet, StatefulSet, of any group)
 * whose name is the entry's by any of the object's ids: its current name or the one in its file.
 * kustomize fails when an entry matches no object; the build then runs kustomize.
 */
import { isRecord } from '../util/record.js';
import { applyFieldSpec, REPLICAS, selects } from './overlay-fieldspecs.js';
import type { Built, FieldReader } from './overlay-types.js';

/** Counts this build writes as kustomize does (an int64 printed and read back as the same number). */
const MAX_COUNT = 2 ** 31 - 1;

/** One `replicas` entry: a name and a whole count, or undefined. */
function entry(r: unknown): { name: string; count: number } | undefined {
  if (!isRecord(r) || Object.keys(r).some((f) => f !== 'name' && f !== 'count')) return undefined;
  const { name, count } = r;
  if (typeof name !== 'string' || name === '') return undefined;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > MAX_COUNT) return undefined;
  return { name, count };
}

/** Every name `b` had: kustomize matches a replicas entry against each of its ids. */
function names(b: Built): string[] {
  return [b.obj.metadata.name, b.fileName, ...(b.previousNames ?? [])];
}

/**
 * True when `b` was renamed with no record of the names between (Built.previousNames) and `name`
 * could have been one of them (it holds the name in its file and sits inside the current one).
 */
function mayHaveBeen(b: Built, name: string): boolean {
  const current = b.obj.metadata.name;
  if (current === b.fileName || b.previousNames !== undefined) return false;
  return name !== current && name !== b.fileName && name.includes(b.fileName) && current.includes(name);
}

/** `replicas`: one transformer per entry, in order. */
export const replicasReader: FieldReader = {
  fields: ['replicas'],
  read(k) {
    const list = k['replicas'];
    if (!Array.isArray(list)) return undefined;
    const entries = list.map(entry);
    if (entries.some((e) => e === undefined)) return undefined;
    return (built) => {
      for (const { name, count } of entries as { name: string; count: number }[]) {
        let found = false;
        for (const fs of REPLICAS) {
          for (const b of built) {
            if (!selects(fs, b.obj.apiVersion, b.obj.kind)) continue;
            if (mayHaveBeen(b, name)) return undefined;
            if (!names(b).includes(name)) continue;
            found = true;
            const set = (parent: Record<string, unknown>, key: string) => {
              // kustomize keeps the style of a scalar there: a quoted one stays a string.
              const v = parent[key];
              if (v !== undefined && typeof v !== 'number') return false;
              parent[key] = count;
              return true;
            };
            if (!applyFieldSpec(b.obj, fs, 'scalar', set)) return undefined;
          }
        }
        // kustomize: "resource with name … does not match a config with the following GVK …".
        if (!found) return undefined;
      }
      return built;
    };
  },
};
