/**
 * kustomize's name references (FixBackReferences, at the top after the hash suffixes) for the
 * in-process overlay build: every field of kustomize's nameReference table (overlay-namerefs-table.ts)
 * that names an object renamed by namePrefix, nameSuffix or the hash suffix takes its new name.
 * kustomize picks the object among those that had the name before a rename, of the kind the field
 * names, that the referrer can see (the same namespace, or cluster-scoped); this build answers only
 * where at most one object ever had that name (current, in its file, or before a rename) and passes
 * those sieves, and leaves the rest to kustomize: several candidates (kustomize sieves further by
 * prefixes, or fails), a kind whose scope is not certain, a field holding a map (a RoleBinding's
 * subjects, a webhook's service: kustomize sets their namespace too), a value that is not a string.
 */
import { isRecord } from '../util/record.js';
import { namesOf } from './overlay-generators.js';
import { groupVersion } from './legacy-order.js';
import { apiNamespaced } from './overlay-scope.js';
import { NAME_REFERENCES, type GvkSelector } from './overlay-namerefs-table.js';
import type { Built, Finish } from './overlay-types.js';

/** Cluster-scoped kinds kustomize's built-in schema (Kubernetes 1.21) knows, by apiVersion/kind. */
const CLUSTER_SCOPED = new Set([
  'v1/Namespace',
  'v1/Node',
  'v1/PersistentVolume',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
  'storage.k8s.io/v1/StorageClass',
  'scheduling.k8s.io/v1/PriorityClass',
  'networking.k8s.io/v1/IngressClass',
  'apiextensions.k8s.io/v1/CustomResourceDefinition',
  'apiregistration.k8s.io/v1/APIService',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration',
]);

/** The namespace kustomize compares (its EffectiveNamespace), or undefined when the scope is not certain. */
function effectiveNamespace(b: Built): string | undefined {
  const { apiVersion, kind, metadata } = b.obj;
  if (CLUSTER_SCOPED.has(`${apiVersion}/${kind}`)) return '\0cluster';
  const [group] = groupVersion(apiVersion);
  if (apiNamespaced(group, kind) === false) return undefined;
  const ns = metadata.namespace;
  return ns === undefined || ns === '' ? 'default' : ns;
}

function selects(sel: GvkSelector, b: Built): boolean {
  const [group, version] = groupVersion(b.obj.apiVersion);
  return (
    sel.kind === b.obj.kind &&
    (sel.group === undefined || sel.group === group) &&
    (sel.version === undefined || sel.version === version)
  );
}

/** Thrown inside the walk when kustomize's answer is not certain; the finish gives undefined. */
class Unsure extends Error {}

/** kustomize's name references on the whole output (in place), or undefined. */
export const nameReferences: Finish = (built) => {
  // Objects by kind and every name they had: a lookup per reference, not a pass over the whole output.
  const byName = new Map<string, Built[]>();
  for (const c of built) {
    for (const name of new Set(namesOf(c))) {
      const key = `${c.obj.kind}\n${name}`;
      byName.set(key, [...(byName.get(key) ?? []), c]);
    }
  }
  const had = (target: GvkSelector, name: string) =>
    (byName.get(`${target.kind}\n${name}`) ?? []).filter((c) => selects(target, c));
  try {
    for (const referrer of built) {
      for (const ref of NAME_REFERENCES) {
        for (const field of ref.referrers) {
          if (!selects(field, referrer)) continue;
          walk(referrer.obj, field.path, {
            scalar: (value) => newName(value, had(ref.target, value), referrer, field.path),
            mapping: (map) => {
              mapping(map, (name) => had(ref.target, name));
            },
          });
        }
      }
    }
  } catch (err) {
    if (err instanceof Unsure) return undefined;
    throw err;
  }
  return built;
};

interface Visit {
  /** The name a string field takes. */
  scalar(value: string): string;
  /** A map at the end of the path (kustomize reads its name and namespace): checked, never changed here. */
  mapping(map: Record<string, unknown>): void;
}

/**
 * Walks `path` in `node` as kustomize's field specs do (lists element by element, a missing or null
 * field ends it) and replaces each string at its end by the visitor's answer.
 */
function walk(node: unknown, path: readonly string[], visit: Visit): void {
  if (node === null || node === undefined) return;
  if (Array.isArray(node)) {
    for (const item of node) walk(item, path, visit);
    return;
  }
  if (!isRecord(node)) throw new Unsure();
  const [key, ...rest] = path;
  const value = node[key!];
  if (value === null || value === undefined) return;
  if (rest.length > 0) {
    walk(value, rest, visit);
    return;
  }
  if (typeof value === 'string') node[key!] = visit.scalar(value);
  else if (isRecord(value)) visit.mapping(value);
  else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') value[i] = visit.scalar(item);
      else if (isRecord(item)) visit.mapping(item);
      else if (item !== null) throw new Unsure();
    });
  } else {
    throw new Unsure();
  }
}

/** A map naming an object (kustomize sets its name and namespace): fine only when no object of the kind ever had that name. */
function mapping(map: Record<string, unknown>, had: (name: string) => Built[]): void {
  const name = map['name'];
  if (typeof name !== 'string') throw new Unsure();
  if (had(name).length > 0) throw new Unsure();
}

/** The name a field holding `value` takes (kustomize's selectReferral on a scalar), or Unsure. */
function newName(value: string, had: Built[], referrer: Built, path: readonly string[]): string {
  // The objects of the target's kind that ever had this name, in the output's order.
  let candidates = had;
  if (candidates.length === 0) return value;
  if (path.at(-2) === 'roleRef') candidates = candidates.filter(roleRefSieve(referrer));
  const here = effectiveNamespace(referrer);
  if (here === undefined) throw new Unsure();
  const seen = serviceAccountNamespaces(referrer);
  candidates = candidates.filter((c) => {
    const ns = effectiveNamespace(c);
    if (ns === undefined) throw new Unsure();
    if (here === '\0cluster' || ns === '\0cluster' || ns === here) return true;
    return c.obj.kind === 'ServiceAccount' && seen.has(c.obj.metadata.namespace ?? '');
  });
  if (candidates.length === 0) return value;
  if (candidates.length > 1) throw new Unsure();
  const c = candidates[0]!;
  if (c.obj.metadata.name === value) return value;
  if (!c.previousNames?.includes(value)) throw new Unsure();
  return c.obj.metadata.name;
}

/** A roleRef names the group and kind of its role: only those are candidates (when both are there). */
function roleRefSieve(referrer: Built): (c: Built) => boolean {
  const roleRef = referrer.obj['roleRef'];
  if (!isRecord(roleRef)) throw new Unsure();
  const { apiGroup, kind } = roleRef;
  if (apiGroup === undefined || apiGroup === null || kind === undefined || kind === null) return () => true;
  if (typeof apiGroup !== 'string' || typeof kind !== 'string') throw new Unsure();
  return (c) =>
    (kind === '' || c.obj.kind === kind) && (apiGroup === '' || groupVersion(c.obj.apiVersion)[0] === apiGroup);
}

/** A RoleBinding's ServiceAccount subjects' namespaces: accounts there are candidates too. */
function serviceAccountNamespaces(referrer: Built): Set<string> {
  const out = new Set<string>();
  if (referrer.obj.kind !== 'RoleBinding') return out;
  const subjects = referrer.obj['subjects'];
  if (subjects === undefined || subjects === null) return out;
  if (!Array.isArray(subjects)) throw new Unsure();
  for (const s of subjects) {
    if (!isRecord(s)) throw new Unsure();
    if (s['namespace'] === undefined || s['kind'] === undefined) continue;
    if (typeof s['kind'] !== 'string' || typeof s['namespace'] !== 'string') throw new Unsure();
    if (s['kind'] === 'ServiceAccount') out.add(s['namespace']);
  }
  return out;
}
