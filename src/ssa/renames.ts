/**
 * Renamed objects and what replacing a live object costs, per kind (pure). A rename in Git is a
 * deletion and a creation to the API server: one object of a kind leaves a Kustomization's build
 * and one of the same kind, with nearly the same content, enters it. For most kinds that is cheap;
 * for some it is an outage or data loss, and a reviewer should read which before it happens.
 */
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';
import { normalizeForDiff } from './diff.js';
import { isMap } from './json.js';

/** An object that left the build (its live copy) or entered it (as it would be applied). */
export interface Side {
  subject: string;
  /** API group, '' for the core group. */
  group: string;
  kind: string;
  object: Record<string, unknown>;
}

export interface RenamedObject {
  /** `Kind/namespace/name` of the object deleted. */
  from: string;
  /** `Kind/namespace/name` of the object created in its place. */
  to: string;
  /** What replacing it costs, in words (costOf). */
  cost: string;
}

/** At least this share of the new object's fields must be the same in the old one. */
export const SIMILAR = 0.8;

/** Fields that name an object rather than say what it is: its name and namespace, its owner's labels. */
const NAMING_META = new Set(['name', 'namespace']);
const IGNORED_LABELS = new Set([OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, 'kubernetes.io/metadata.name']);

/**
 * The object's content as `path=value` leaves: as a diff compares it (normalizeForDiff: no status,
 * no server-set metadata), without apiVersion, kind, its name and namespace and its owner's labels.
 */
export function leavesOf(obj: Record<string, unknown>): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v))
      v.forEach((x, i) => {
        walk(x, `${path}/${i}`);
      });
    else if (isMap(v)) for (const [k, x] of Object.entries(v)) walk(x, `${path}/${k}`);
    else out.add(`${path}=${JSON.stringify(v)}`);
  };
  for (const [k, v] of Object.entries(normalizeForDiff(obj))) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (k !== 'metadata' || !isMap(v)) {
      walk(v, `/${k}`);
      continue;
    }
    for (const [mk, mv] of Object.entries(v)) {
      if (NAMING_META.has(mk)) continue;
      if ((mk === 'labels' || mk === 'annotations') && isMap(mv)) {
        for (const [lk, lv] of Object.entries(mv)) if (!IGNORED_LABELS.has(lk)) walk(lv, `/metadata/${mk}/${lk}`);
      } else walk(mv, `/metadata/${mk}`);
    }
  }
  return out;
}

/**
 * How much of the new object the old one has: the share of `created`'s leaves found with the same
 * value in `deleted` (fields the server added to the live copy do not count against it). Undefined
 * when the new object has no content to compare (a bare Namespace).
 */
export function similarity(deleted: Record<string, unknown>, created: Record<string, unknown>): number | undefined {
  const want = leavesOf(created);
  if (want.size === 0) return undefined;
  const have = leavesOf(deleted);
  let same = 0;
  for (const leaf of want) if (have.has(leaf)) same++;
  return same / want.size;
}

/**
 * The renames among what a Kustomization deletes and creates: per kind, the pairs whose content is
 * at least SIMILAR alike, best first, each object in one pair at most; a kind with one deletion and
 * one creation whose new object has no content (a bare Namespace) is a rename too.
 */
export function findRenames(
  deleted: readonly Side[],
  created: readonly Side[],
  opts: { wait: boolean },
): RenamedObject[] {
  const kindOf = (s: Side) => `${s.group}/${s.kind}`;
  const out: RenamedObject[] = [];
  for (const kind of new Set(deleted.map(kindOf))) {
    const olds = deleted.filter((s) => kindOf(s) === kind);
    const news = created.filter((s) => kindOf(s) === kind);
    const pairs: { o: Side; n: Side; score: number }[] = [];
    for (const o of olds) {
      for (const n of news) {
        const score = similarity(o.object, n.object) ?? (olds.length === 1 && news.length === 1 ? 1 : 0);
        if (score >= SIMILAR) pairs.push({ o, n, score });
      }
    }
    pairs.sort((a, b) => b.score - a.score || a.o.subject.localeCompare(b.o.subject));
    const used = new Set<Side>();
    for (const { o, n } of pairs) {
      if (used.has(o) || used.has(n)) continue;
      used.add(o).add(n);
      out.push({ from: o.subject, to: n.subject, cost: costOf(o, opts) });
    }
  }
  return out.sort((a, b) => a.from.localeCompare(b.from));
}

/** What replacing the live object `old` with a new one (deleted, then created) costs, per kind. */
export function costOf(old: Pick<Side, 'group' | 'kind' | 'object'>, opts: { wait: boolean }): string {
  const spec = isMap(old.object['spec']) ? old.object['spec'] : {};
  const workload = opts.wait
    ? 'the new one is applied and waited for (spec.wait) before the old one is pruned'
    : 'the old one is pruned right after the apply, without waiting for the new one (spec.wait is off)';
  switch (`${old.group}/${old.kind}`) {
    case '/PersistentVolumeClaim':
      return 'its data does not move (the new claim gets a new, empty volume; the old volume is released, and kept or deleted by its reclaim policy)';
    case '/Service':
      return spec['type'] === 'LoadBalancer'
        ? 'the new Service gets a new cluster IP and a new load-balancer address'
        : 'the new Service gets a new cluster IP';
    case '/Namespace':
      return 'everything in the old Namespace is deleted with it, whoever manages it';
    case 'apiextensions.k8s.io/CustomResourceDefinition':
      return 'every custom resource of the old definition, in every namespace, is deleted with it';
    case 'apps/StatefulSet':
      return `replaced: its pods are replaced and its volume claims (volumeClaimTemplates) are new, so their data does not move; ${workload}`;
    case 'apps/Deployment':
    case 'apps/DaemonSet':
      return `replaced: its pods are replaced; ${workload}`;
    default:
      return 'deleted and created: whatever refers to the old name must follow';
  }
}

/** What recreating an object in place (force, on an immutable field) costs, per kind. */
export function recreateCost(group: string, kind: string): string {
  switch (`${group}/${kind}`) {
    case '/PersistentVolumeClaim':
      return 'the new claim gets a new, empty volume; the data of the old one does not move';
    case '/Service':
      return 'the Service gets a new cluster IP (and a LoadBalancer a new address)';
    case 'apps/Deployment':
    case 'apps/StatefulSet':
    case 'apps/DaemonSet':
      return 'all its pods stop before the new ones start';
    default:
      return 'it is missing for as long as the recreate takes';
  }
}

/** Kinds whose deletion or replacement loses data, an address, or more than the object itself. */
export const DESTRUCTIVE_KINDS: readonly string[] = [
  '/PersistentVolumeClaim',
  '/PersistentVolume',
  '/Service',
  '/Namespace',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
];

/** Whether deleting or recreating an object of `group`/`kind` is a destructive change (DESTRUCTIVE_KINDS). */
export const isDestructiveKind = (group: string, kind: string): boolean =>
  DESTRUCTIVE_KINDS.includes(`${group}/${kind}`);

/** The annotation that approves deleting or recreating one live object (destructive-approval-label). */
export const DESTRUCTIVE_ANNOTATION = 'kustomize-reconcile.dev/destructive';
export const DESTRUCTIVE_ALLOWED = 'allowed';
