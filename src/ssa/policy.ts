import {
  FORCE_MARKER,
  hasMarker,
  OWNER_NAME_LABEL,
  OWNER_NAMESPACE_LABEL,
  RECONCILE_MARKER,
  SSA_MARKER,
} from '../objects/flux.js';
import type { KubeObject } from '../objects/kube.js';
import { isMap } from './json.js';

type Meta = { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } } | undefined;

/** What the per-object policies say about one object, desired and live considered as Flux does. */
export interface ObjectPolicy {
  /** `ssa: Ignore` or `reconcile: disabled` on either: neither applied nor pruned. */
  skip: boolean;
  /** `ssa: IfNotPresent` on the desired object and the object exists: left as it is. */
  ifNotPresent: boolean;
  /** `ssa: Merge` on either: fields of other managers are kept (no managedFields migration). */
  merge: boolean;
  /** `force: Enabled` on either, or spec.force: recreate on an immutable-field change. */
  force: boolean;
}

export function policyOf(desired: KubeObject, live: Meta, specForce: boolean): ObjectPolicy {
  const either = (key: string, value: string) => hasMarker(desired, key, value) || hasMarker(live, key, value);
  return {
    skip: either(SSA_MARKER, 'Ignore') || either(RECONCILE_MARKER, 'disabled'),
    ifNotPresent: hasMarker(desired, SSA_MARKER, 'IfNotPresent') && live !== undefined,
    merge: either(SSA_MARKER, 'Merge'),
    force: specForce || either(FORCE_MARKER, 'enabled'),
  };
}

/** Flux's SetOwnerLabels: every object carries the name and namespace of its Kustomization. Returns new objects. */
export function setOwnerLabels(objects: readonly KubeObject[], name: string, namespace: string): KubeObject[] {
  return objects.map((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...o.metadata.labels, [OWNER_NAME_LABEL]: name, [OWNER_NAMESPACE_LABEL]: namespace },
    },
  }));
}

/**
 * How the API server says "this field cannot change" (Kubernetes 1.34 to 1.37: the texts, provoked on a
 * real server, are in __tests__/unit/immutable.test.ts, and __tests__/integration/immutable-wordings.test.ts
 * provokes them again on each version CI runs). From 1.37 the StatefulSet's one sentence about `spec`
 * is a "field is immutable" per field, and declarative validation adds the "field cannot be ..."
 * wordings. Each wording is matched in the detail of one cause (see detailOf), so that a value which
 * happens to contain the words counts for nothing.
 */
export const IMMUTABLE_WORDINGS: readonly { pattern: RegExp; where: string }[] = [
  {
    pattern: /\bfield is immutable\b/,
    where:
      'apimachinery ValidateImmutableField: Job selector and template, Deployment, DaemonSet and ReplicaSet ' +
      'selector, Secret type, CRD scope, StorageClass provisioner and parameters, PriorityClass ' +
      'preemptionPolicy, EndpointSlice addressType, ...; ConfigMap and Secret with immutable: true ' +
      '("field is immutable when `immutable` is set")',
  },
  {
    pattern: /^field cannot be (?:set once created|cleared once set|modified once set)$/,
    where: "declarative validation's update rules (+k8s:update: NoSet, NoUnset, NoModify; Kubernetes 1.35+)",
  },
  { pattern: /\bmay not change once set\b/, where: 'Service clusterIP/clusterIPs, ipFamilies, loadBalancerClass' },
  { pattern: /\bprimary (?:clusterIP|ipFamily) can not be unset\b/, where: 'Service clusterIPs, ipFamilies' },
  {
    pattern: /\bupdates to statefulset spec for fields other than\b.*\bare forbidden\b/,
    where: 'StatefulSet selector, serviceName, volumeClaimTemplates, podManagementPolicy (before 1.37)',
  },
  {
    pattern: /\bis immutable after creation\b/,
    where: 'PersistentVolumeClaim spec (unbound), PersistentVolume source',
  },
  { pattern: /\bpod updates may not change fields other than\b/, where: 'Pod spec' },
  { pattern: /\bupdates to [\w.]+ are forbidden\b/, where: 'StorageClass parameters and provisioner (older servers)' },
  { pattern: /\bmay not be changed in an update\b/, where: 'PriorityClass value' },
  { pattern: /\bcannot change roleRef\b/, where: 'RoleBinding and ClusterRoleBinding roleRef' },
  { pattern: /^failed rule: (?:self == oldSelf|oldSelf == self)$/, where: 'a CEL immutability rule without a message' },
  {
    pattern: /\b(?:is|are) immutable\b|\bimmutable field\b/i,
    where: "CEL rules' and admission webhooks' own messages, as Flux's IsImmutableError matches them",
  },
];

const isImmutableWording = (text: string) => IMMUTABLE_WORDINGS.some((w) => w.pattern.test(text));

/**
 * The detail of a cause message: for `Invalid value: <value>: <detail>` what follows the value (a
 * JSON or Go literal, skipped up to the first `: ` outside brackets and quotes); for
 * `Forbidden: <detail>` (which a diff of the object may follow) the first line of the detail.
 */
export function detailOf(message: string): string {
  const prefix = 'Invalid value: ';
  if (!message.startsWith(prefix)) return message.replace(/^Forbidden: /, '').split('\n', 1)[0]!;
  let depth = 0;
  let quoted = false;
  for (let i = prefix.length; i < message.length; i++) {
    const ch = message[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if ('{[('.includes(ch)) depth++;
    else if ('}])'.includes(ch)) depth--;
    else if (depth <= 0 && ch === ':' && message[i + 1] === ' ') return message.slice(i + 2);
  }
  return message;
}

/** Statuses an immutable-field refusal comes with: 422 from validation, 400/403 from a webhook. */
const REFUSALS = new Set([400, 403, 422]);

/**
 * A server error that means "this field cannot change", so that deleting and creating the object
 * again would succeed: every cause of the error (a 422 from validation or CEL) is an immutable
 * field, or, for an error without causes (an admission webhook's denial), its message says so.
 * Stricter than Flux, which recreates on any 409 or 422: a 422 with any other cause (a bad port,
 * a selector that does not match the template, a smaller volume request) is left to fail, since
 * the recreate would delete the object and then fail the same way. Returns the fields the server
 * names (possibly none), or undefined when the error is something else.
 */
export function immutableFields(err: {
  status: number;
  message: string;
  details?: { causes?: { field?: string; message?: string }[] };
}): string[] | undefined {
  if (!REFUSALS.has(err.status)) return undefined;
  const causes = err.details?.causes ?? [];
  if (causes.length === 0) return isImmutableWording(err.message) ? [] : undefined;
  if (!causes.every((c) => isImmutableWording(detailOf(c.message ?? '')))) return undefined;
  return [...new Set(causes.map((c) => c.field ?? '?'))];
}

/**
 * What changed under a cause that names the whole `spec` (a StatefulSet's, a Pod's, an unbound
 * claim's; the other causes name their field): the keys of the desired object there whose value the live object does not already hold
 * (defaults the server added to the live object do not count), leaving out the keys the message
 * quotes as mutable ('replicas', 'template', ...). Empty when the field is no map or nothing is
 * found; then the server's field is the best name.
 */
export function changedFields(field: string, message: string, desired: unknown, live: unknown): string[] {
  if (field !== 'spec' || !isMap(desired) || !isMap(live)) return [];
  const want = desired['spec'];
  const have = live['spec'];
  if (!isMap(want) || !isMap(have)) return [];
  const mutable = new Set([...message.matchAll(/'(\w+)'/g)].map((m) => m[1]));
  return Object.keys(want)
    .filter((k) => !mutable.has(k) && !holds(have[k], want[k]))
    .sort()
    .map((k) => `${field}.${k}`);
}

/** Whether `live` holds every value of `desired` (maps by key, lists element by element). */
function holds(live: unknown, desired: unknown): boolean {
  if (isMap(desired)) return isMap(live) && Object.keys(desired).every((k) => holds(live[k], desired[k]));
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((d, i) => holds(live[i], d));
  }
  return live === desired;
}

/** The immutable fields to name in messages: a cause on the whole spec replaced by what changed in it. */
export function namedFields(fields: readonly string[], message: string, desired: unknown, live: unknown): string[] {
  return fields.flatMap((f) => {
    const changed = changedFields(f, message, desired, live);
    return changed.length > 0 ? changed : [f];
  });
}
