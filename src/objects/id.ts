/**
 * The inventory id of an object, in Flux's format (`.status.inventory.entries[]`, cli-utils' ObjMetadata):
 * `id` is `<namespace>_<name>_<group>_<kind>` (namespace empty for cluster-scoped objects, group empty
 * for the core group) and `v` the version. Pure.
 */
import { subjectOf } from './kube.js';

export interface Entry {
  id: string;
  v: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The API group of an apiVersion: what comes before its `/`, '' for the core group (`v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** The entry of an object; `_` cannot occur in names, namespaces, groups or kinds, so ids split cleanly. */
export function entryOf(ref: ObjectRef): Entry {
  const slash = ref.apiVersion.indexOf('/');
  const group = groupOf(ref.apiVersion);
  const version = slash === -1 ? ref.apiVersion : ref.apiVersion.slice(slash + 1);
  return { id: `${ref.namespace ?? ''}_${ref.name}_${group}_${ref.kind}`, v: version };
}

/** The object an entry names; throws on an id that is not four `_`-separated parts. */
export function refOf(entry: Entry): ObjectRef {
  const parts = entry.id.split('_');
  if (parts.length !== 4 || parts[1] === '' || parts[3] === '' || entry.v === '') {
    throw new Error(`inventory entry ${JSON.stringify(entry)} is not <namespace>_<name>_<group>_<kind> with a version`);
  }
  const [namespace, name, group, kind] = parts as [string, string, string, string];
  return {
    apiVersion: group === '' ? entry.v : `${group}/${entry.v}`,
    kind,
    name,
    ...(namespace !== '' ? { namespace } : {}),
  };
}

/** `Kind/namespace/name` or `Kind/name`, as the changeset prints objects. */
export function subjectOfEntry(entry: Entry): string {
  return subjectOf(refOf(entry));
}
