// Report files as the jobs of a fan-out write them (report-file): each job's report is what
// src/reconcile makes of its one selected Kustomization (combine(), then the removed Kustomizations
// the cluster's first job handles), with the job's cluster, written by reportFileText.
import { combine } from '../../src/reconcile/report.js';
import { parseReportFile, reportFileText, type ReportFile } from '../../src/report/file.js';
import type { NamedReportFile } from '../../src/report/merge.js';
import { countReport, type PrunedObject, type RemovedKustomization, type Report } from '../../src/report/model.js';
import type { Mode, Settings } from '../../src/options/settings.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { diffObjects } from '../../src/ssa/diff.js';
import { yamlDiff } from '../../src/ssa/yaml-diff.js';

export const REVISION = '3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39';

export function entry(subject: string, action: ChangeSetEntry['action']): ChangeSetEntry {
  const [kind = '', a = '', b] = subject.split('/');
  return {
    subject,
    action,
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    ...(b !== undefined ? { namespace: a, name: b } : { name: a }),
  };
}

const deployment = (replicas: number, tag: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'apps' },
  spec: { replicas, template: { spec: { containers: [{ name: 'web', image: `ghcr.io/acme/web:${tag}` }] } } },
});

/** The web Deployment configured from (2 replicas, 1.4.0) to (`replicas`, `tag`), with its diffs. */
export function webDeployment(replicas: number, tag: string): ChangeSetEntry {
  const live = deployment(2, '1.4.0');
  const dry = deployment(replicas, tag);
  return { ...entry('Deployment/apps/web', 'configured'), diff: diffObjects(live, dry), yamlDiff: yamlDiff(live, dry) };
}

/** One Kustomization's report, as src/reconcile/kustomization.ts makes it. */
export function kustomization(name: string, path: string, changeset: ChangeSetEntry[], extra: Partial<Report> = {}) {
  return {
    mode: 'preview' as Mode,
    kustomization: name,
    path,
    server: 'https://k8s.example.com',
    ok: true,
    changeset,
    counts: countReport(changeset, extra.pruned),
    durationMs: 2100,
    notes: [],
    ...extra,
  } satisfies Report;
}

export interface JobOptions {
  cluster?: string;
  removed?: { r: RemovedKustomization; pruned: PrunedObject[] }[];
  server?: string;
  durationMs?: number;
  drift?: Report['drift'];
}

/** A job's report: combine() over its Kustomizations, then its removed ones and its cluster. */
export function jobReport(parts: Report[], opts: JobOptions = {}): Report {
  const mode = parts[0]?.mode ?? 'preview';
  const combined = combine({ mode } as Settings, parts, Date.now(), opts.server ?? 'https://k8s.example.com');
  const removedPruned = (opts.removed ?? []).flatMap((x) => x.pruned);
  const pruned = [...(combined.pruned ?? []), ...removedPruned];
  return {
    ...combined,
    durationMs: opts.durationMs ?? 3000,
    counts: countReport(combined.changeset, pruned),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(opts.removed?.length ? { removed: opts.removed.map((x) => x.r) } : {}),
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.drift ? { drift: opts.drift } : {}),
  };
}

/** The report file's text, as the job wrote it. */
export function fileText(report: Report, job = 'reconcile', revision = REVISION): string {
  return reportFileText(report, { revision, runUrl: 'https://github.example/org/repo/actions/runs/99', job });
}

/** The report file as mode: report reads it back. */
export function named(name: string, report: Report, revision = REVISION): NamedReportFile {
  const file: ReportFile = parseReportFile(fileText(report, 'reconcile', revision), name);
  return { name, file };
}

/**
 * A preview over two clusters, one job per cluster × Kustomization: production's apps configures
 * the web Deployment and would prune a ConfigMap; staging's infra creates a Namespace, its apps
 * scales the Deployment, and a Kustomization removed from staging would take its objects along.
 */
export function twoClusters(): Record<string, Report> {
  const legacy = {
    r: {
      kustomization: 'flux-system/legacy',
      inventory: 'flux-system/legacy-inventory',
      objects: 1,
      deletionPolicy: 'Delete' as const,
      action: 'deleted' as const,
      reason: 'deletionPolicy Delete: its objects are deleted',
    },
    pruned: [
      {
        subject: 'Deployment/legacy/api',
        action: 'deleted' as const,
        reason: 'flux-system/legacy removed',
        removedWith: 'flux-system/legacy',
      },
    ],
  };
  return {
    'production.flux-system.infra.json': jobReport(
      [
        kustomization('flux-system/infra', './infrastructure/production', [entry('Namespace/apps', 'unchanged')], {
          level: 0,
        }),
      ],
      { cluster: 'production' },
    ),
    'production.flux-system.apps.json': jobReport(
      [
        kustomization(
          'flux-system/apps',
          './apps/production',
          [
            webDeployment(2, '1.5.0'),
            entry('ConfigMap/apps/web-settings', 'created'),
            entry('Service/apps/web', 'unchanged'),
          ],
          { pruned: [{ subject: 'ConfigMap/apps/old-settings', action: 'deleted' }], level: 1 },
        ),
      ],
      { cluster: 'production' },
    ),
    'staging.flux-system.infra.json': jobReport(
      [
        kustomization(
          'flux-system/infra',
          './infrastructure/staging',
          [entry('Namespace/apps', 'unchanged'), entry('Namespace/monitoring', 'created')],
          { level: 0 },
        ),
      ],
      { cluster: 'staging', removed: [legacy] },
    ),
    'staging.flux-system.apps.json': jobReport(
      [
        kustomization(
          'flux-system/apps',
          './apps/staging',
          [webDeployment(1, '1.4.0'), entry('Service/apps/web', 'unchanged')],
          { level: 1 },
        ),
      ],
      { cluster: 'staging' },
    ),
  };
}
