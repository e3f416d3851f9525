// A preview of a home-ops style monorepo: 80 Kustomizations (apps in namespaces network, media,
// observability, …, each an app's ks.yaml under a parent that applies them all) for a pull request
// that bumps one image. One Kustomization changes (a Deployment's image: a diff), two fail because
// of the pull request, three have failed on main for a while (their inventories recorded it), the
// rest are unchanged, and the same notes come from most of them. The golden comment
// (__tests__/golden/monorepo-80.md) and the screenshot (docs/screenshots/preview-comment-monorepo.png)
// are rendered from it.
import { combinedError, failedFirst } from '../../src/report/combine.js';
import { reportOf, type Report } from '../../src/report/model.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { diffObjects } from '../../src/ssa/diff.js';
import { yamlDiff } from '../../src/ssa/yaml-diff.js';

export const MONOREPO_REVISION = '9c41e7d2b85a3f60c1d4e8b7a2f9350d6e1c4b8a';
export const MONOREPO_KEY = 'kubernetes/apps/*/*/ks.yaml';

/** The apps, per namespace, in the order the parent lists them. */
const APPS: Record<string, string[]> = {
  'actions-runner-system': ['actions-runner-controller', 'arc-runners'],
  'cert-manager': ['cert-manager', 'cert-manager-issuers'],
  database: ['cloudnative-pg', 'cloudnative-pg-cluster', 'dragonfly-operator', 'dragonfly-cluster', 'emqx', 'pgadmin'],
  default: ['homepage', 'paperless', 'mealie', 'atuin', 'miniflux', 'linkding', 'actual'],
  'flux-system': ['flux-operator', 'flux-instance', 'weave-gitops'],
  'home-automation': ['home-assistant', 'zigbee2mqtt', 'mosquitto', 'esphome', 'node-red', 'music-assistant'],
  'kube-system': [
    'cilium',
    'coredns',
    'metrics-server',
    'reloader',
    'spegel',
    'descheduler',
    'intel-device-plugin',
    'node-feature-discovery',
    'snapshot-controller',
    'irqbalance',
  ],
  media: [
    'autobrr',
    'bazarr',
    'jellyfin',
    'jellyseerr',
    'maintainerr',
    'overseerr',
    'plex',
    'prowlarr',
    'qbittorrent',
    'radarr',
    'recyclarr',
    'sabnzbd',
    'sonarr',
    'tautulli',
  ],
  network: [
    'cloudflared',
    'echo-server',
    'external-dns',
    'ingress-nginx-external',
    'ingress-nginx-internal',
    'k8s-gateway',
    'multus',
    'unifi-dns',
  ],
  observability: [
    'blackbox-exporter',
    'gatus',
    'grafana',
    'karma',
    'kromgo',
    'kube-prometheus-stack',
    'loki',
    'promtail',
    'silence-operator',
    'smartctl-exporter',
    'unpoller',
    'vector-aggregator',
  ],
  security: ['authelia', 'lldap', 'external-secrets', 'external-secrets-stores', 'onepassword-connect'],
  storage: ['rook-ceph', 'rook-ceph-cluster', 'volsync', 'openebs', 'csi-driver-nfs'],
};

/** The notes most of them share, as a run writes them for each Kustomization. */
export const ACTING_NOTE =
  'Acting as system:serviceaccount:flux-system:kustomize-controller (input default-service-account)';
export const VOLSYNC_NOTE = 'Ignored missing component(s): ../../../../components/volsync';
const USES_VOLSYNC = new Set([
  'autobrr',
  'bazarr',
  'jellyseerr',
  'overseerr',
  'prowlarr',
  'radarr',
  'home-assistant',
  'zigbee2mqtt',
  'esphome',
  'paperless',
  'mealie',
  'atuin',
]);

/** The failures this pull request causes. */
export const NEW_FAILURES: Record<string, string> = {
  'network/echo-server': [
    '1 object of the apply stage failed the dry-run; nothing of the stage was applied:',
    'Deployment/network/echo-server dry-run failed (Invalid): Deployment.apps "echo-server" is invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 80800: must be between 1 and 65535, inclusive',
  ].join('\n'),
  'media/sonarr':
    "kustomize build failed: accumulating resources: accumulation err='accumulating resources from './helmrelease.yaml': open kubernetes/apps/media/sonarr/app/helmrelease.yaml: no such file or directory'",
};

/** The failures main has had for a while: its inventories recorded them (Report.before). */
export const OLD_FAILURES: Record<string, { error: string; since: string }> = {
  'database/dragonfly-cluster': {
    error:
      '1 object of the apply stage failed the dry-run; nothing of the stage was applied:\nDragonfly/database/dragonfly dry-run failed (NotFound): no matches for kind "Dragonfly" in version "dragonflydb.io/v1alpha1"',
    since: '2026-10-27T06:41:09.000Z',
  },
  'media/plex': {
    error:
      '1 object of the apply stage failed the dry-run; nothing of the stage was applied:\nHorizontalPodAutoscaler/media/plex dry-run failed (Invalid): HorizontalPodAutoscaler.autoscaling "plex" is invalid: spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
    since: '2026-11-18T21:07:33.000Z',
  },
  'observability/loki': {
    error:
      '1 object of the apply stage failed the dry-run; nothing of the stage was applied:\nServiceMonitor/observability/loki dry-run failed (NotFound): no matches for kind "ServiceMonitor" in version "monitoring.coreos.com/v1"',
    since: '2026-11-02T08:14:51.000Z',
  },
};

export const CHANGED = 'media/jellyfin';

const object = (kind: string, ns: string, name: string, action: ChangeSetEntry['action']): ChangeSetEntry => ({
  subject: `${kind}/${ns}/${name}`,
  action,
  apiVersion: kind === 'Deployment' ? 'apps/v1' : kind === 'HelmRelease' ? 'helm.toolkit.fluxcd.io/v2' : 'v1',
  kind,
  namespace: ns,
  name,
});

/** Jellyfin's Deployment before and after the image bump, as the dry-run returns it. */
function jellyfin(tag: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'jellyfin', namespace: 'media', labels: { 'app.kubernetes.io/name': 'jellyfin' } },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { 'app.kubernetes.io/name': 'jellyfin' } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': 'jellyfin' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: `ghcr.io/jellyfin/jellyfin:${tag}`,
              env: [{ name: 'TZ', value: 'Europe/Amsterdam' }],
              ports: [{ name: 'http', containerPort: 8096 }],
              resources: { requests: { cpu: '100m' }, limits: { 'gpu.intel.com/i915': '1', memory: '8Gi' } },
            },
          ],
        },
      },
    },
  };
}

function kustomization(ns: string, app: string, i: number): Report {
  const name = `${ns}/${app}`;
  const path = `./kubernetes/apps/${ns}/${app}/app`;
  const base = { mode: 'preview' as const, kustomization: name, path, server: 'https://192.168.42.120:6443' };
  const inventory = `${ns}/kustomize-reconcile.${ns}.${app}`;
  const unchanged = ['HelmRelease', 'Service', 'ConfigMap', 'ServiceAccount', 'PersistentVolumeClaim']
    .slice(0, 2 + (i % 4))
    .map((kind) => object(kind, ns, app, 'unchanged'));
  const old = OLD_FAILURES[name];
  const fresh = NEW_FAILURES[name];
  const building = fresh === undefined || !fresh.startsWith('kustomize build failed');
  const suspended = name === 'security/onepassword-connect';
  const notes = suspended
    ? [`Kustomization ${name} is suspended (spec.suspend: true); nothing was built or applied`]
    : [...(building ? [ACTING_NOTE] : []), ...(USES_VOLSYNC.has(app) ? [VOLSYNC_NOTE] : [])];
  if (fresh !== undefined || old !== undefined) {
    const error = fresh ?? old!.error;
    return reportOf({
      ...base,
      changeset: [],
      durationMs: 900 + i * 7,
      notes,
      inventory,
      error,
      failure: {
        stage: building ? 'apply' : 'render',
        reason: building ? 'ReconciliationFailed' : 'BuildFailed',
        message: error,
      },
      ...(old !== undefined ? { before: { result: 'Failed', since: old.since, message: old.error } } : {}),
    });
  }
  const changeset =
    name === CHANGED
      ? [
          {
            ...object('Deployment', ns, app, 'configured'),
            diff: diffObjects(jellyfin('10.10.3'), jellyfin('10.10.5')),
            yamlDiff: yamlDiff(jellyfin('10.10.3'), jellyfin('10.10.5'))!,
          },
          ...unchanged,
        ]
      : unchanged;
  return reportOf({ ...base, changeset, durationMs: 800 + i * 11, notes, inventory });
}

/** The preview of the 80 Kustomizations, combined as a run over several combines them (src/reconcile/report.ts). */
export function monorepoReport(): Report {
  const parts = Object.entries(APPS).flatMap(([ns, apps]) => apps.map((app) => ({ ns, app })));
  const reports = parts.map(({ ns, app }, i) => kustomization(ns, app, i));
  if (reports.length !== 80) throw new Error(`the monorepo has ${reports.length} Kustomizations, not 80`);
  const failed = failedFirst(reports);
  const error = failed.length > 0 ? combinedError(failed) : undefined;
  return reportOf({
    mode: 'preview',
    kustomization: reports.map((r) => r.kustomization).join(', '),
    path: reports.map((r) => r.path).join(', '),
    server: 'https://192.168.42.120:6443',
    changeset: reports.flatMap((r) => r.changeset),
    durationMs: 48_200,
    notes: reports.flatMap((r) => r.notes.map((n) => `[${r.kustomization}] ${n}`)),
    ...(error !== undefined ? { error, failure: { ...failed[0]!.failure!, message: error } } : {}),
    kustomizations: reports,
  });
}
