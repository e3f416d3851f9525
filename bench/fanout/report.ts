// What bench/fanout.ts reads back to compare the fan-out with the one job: the CLI's JSON report and
// plan, each Kustomization's verdict from the report, the ConfigMaps, Secrets and inventories left in
// the scenario's namespace, and the differences between two such readings.
import { parse } from 'yaml';
import type { CountingProxy } from '../common.ts';

interface ChangeSetEntry {
  subject: string;
  action: string;
}
export interface Report {
  kustomization: string;
  ok: boolean;
  changeset: ChangeSetEntry[];
  counts: Record<string, number>;
  durationMs: number;
  error?: string;
  failure?: { stage: string; reason: string };
  pruned?: { subject: string; action: string }[];
  kustomizations?: Report[];
}
export interface PlanEntry {
  id: string;
  cluster: string;
  kustomization: string;
  level: number;
  dependsOn: string;
}
export interface Plan {
  matrix: { include: PlanEntry[] };
  levels: string[][];
  count: number;
}

/** Each Kustomization's verdict and changeset, the scenario's namespace and repository replaced. */
export function verdicts(report: Report, namespace: string): Map<string, string> {
  const norm = (s: string) => s.split(namespace).join('NS');
  const out = new Map<string, string>();
  for (const r of report.kustomizations ?? [report]) {
    const changes = r.changeset.map((e) => `${e.action} ${norm(e.subject)}`).sort();
    const pruned = (r.pruned ?? []).map((p) => `pruned:${p.action} ${norm(p.subject)}`).sort();
    out.set(
      norm(r.kustomization),
      JSON.stringify({
        ok: r.ok,
        failure: r.failure ? `${r.failure.stage}/${r.failure.reason}` : undefined,
        counts: r.counts,
        changes: [...changes, ...pruned],
      }),
    );
  }
  return out;
}

export interface ClusterState {
  /** ConfigMaps and Secrets other than inventories: kind/name → labels and data. */
  objects: Map<string, string>;
  /** Inventories: Kustomization → entries, count and the status fields that do not vary by run. */
  inventories: Map<string, string>;
}

export async function clusterState(proxy: CountingProxy, namespace: string, repo: string): Promise<ClusterState> {
  const norm = (s: string) => s.split(repo).join('REPO').split(namespace).join('NS');
  const objects = new Map<string, string>();
  const inventories = new Map<string, string>();
  for (const kind of ['configmaps', 'secrets']) {
    const r = await proxy.upstream('GET', `/api/v1/namespaces/${namespace}/${kind}`);
    if (r.status !== 200) throw new Error(`listing ${kind} in ${namespace}: ${r.status} ${r.body.slice(0, 200)}`);
    const items = (
      JSON.parse(r.body) as {
        items: { metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> }[];
      }
    ).items;
    for (const o of items) {
      const { name, labels = {} } = o.metadata;
      if (labels['kustomize-reconcile/inventory'] === 'true') {
        const status = parse(o.data?.['status.yaml'] ?? '') as Record<string, unknown> | null;
        inventories.set(
          norm(name),
          norm(
            JSON.stringify({
              count: o.data?.count,
              entries: o.data?.['entries.yaml'],
              result: status?.result,
              set: status?.set,
              origin: status?.origin,
              prune: status?.prune,
            }),
          ),
        );
      } else if (!name.startsWith('kustomize-reconcile.') && name !== 'kube-root-ca.crt') {
        objects.set(`${kind}/${name}`, norm(JSON.stringify({ labels, data: o.data ?? {} })));
      }
    }
  }
  return { objects, inventories };
}

/** The differences between two maps, at most `max` of them, as lines. */
export function differences(what: string, a: Map<string, string>, b: Map<string, string>, max = 5): string[] {
  const out: string[] = [];
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(k);
    const y = b.get(k);
    if (x !== y)
      out.push(`${what} ${k}: one job ${x?.slice(0, 300) ?? 'missing'}; fan-out ${y?.slice(0, 300) ?? 'missing'}`);
  }
  return out.length > max ? [...out.slice(0, max), `... and ${out.length - max} more ${what} differences`] : out;
}
