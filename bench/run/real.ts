// The trees of bench/run.ts written the way public repositories write them, not the way the other
// shapes are: a base per app (a Deployment with env, envFrom, volumes from a ConfigMap and a Secret,
// resources and probes; a Service, a ConfigMap, a ServiceAccount) and overlays/production over the
// bases with namespace, namePrefix, commonLabels, commonAnnotations, labels without selectors, images,
// replicas, strategic-merge patch files, a JSON 6902 patch file, generators and components.
//   real:     one such overlay of N objects;
//   realrepo: Flux's monorepo of MONOREPO_UNITS such overlays in dependsOn levels, each a team's;
// repo80, the parent/children layout over the same app bases, is in repo80.ts.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { Tree, Unit } from './tree.ts';

/** Objects written out in full where the same value repeats, as people write them (no YAML anchors). */
const PLAIN = { aliasDuplicateObjects: false } as const;

/** Objects in an app's base: a Deployment, a Service, a ConfigMap and a ServiceAccount. */
export const OBJECTS_PER_APP = 4;
/** Objects an overlay adds: its Namespace, a generated ConfigMap and a generated Secret. */
export const OBJECTS_PER_OVERLAY = 3;
export const IMAGE = 'ghcr.io/stefanprodan/podinfo';
export const KUSTOMIZATION = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };

/**
 * Where an overlay's strategic-merge patch on every Deployment comes from: a `patches:` entry with
 * a path and a target by kind, `patchesStrategicMerge:` (one document per Deployment, by name), or a
 * `components:` entry (kind: Component) holding the same `patches:` entry.
 */
export type SmpPlacement = 'patches' | 'patchesStrategicMerge' | 'component';
export const SMP_PLACEMENTS: readonly SmpPlacement[] = ['patches', 'patchesStrategicMerge', 'component'];

/** An app's base: its files relative to the app's directory. */
export function appBase(
  app: string,
  opts: { generation: number; headless: boolean; envConfigMap: string; credentialsSecret: string },
): Map<string, unknown> {
  const labels = { 'app.kubernetes.io/name': app };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, labels },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: app,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 },
          containers: [
            {
              name: 'app',
              image: `${IMAGE}:6.7.0`,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: 'http', containerPort: 9898, protocol: 'TCP' }],
              env: [
                { name: 'PODINFO_UI_MESSAGE', value: app },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              envFrom: [{ configMapRef: { name: opts.envConfigMap } }],
              volumeMounts: [
                { name: 'config', mountPath: '/etc/app' },
                { name: 'credentials', mountPath: '/etc/credentials', readOnly: true },
              ],
              resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
              livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, initialDelaySeconds: 5 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 10 },
            },
          ],
          volumes: [
            { name: 'config', configMap: { name: `${app}-config` } },
            { name: 'credentials', secret: { secretName: opts.credentialsSecret } },
          ],
        },
      },
    },
  };
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: app, labels },
    spec: {
      // The test cluster's service range is a /24 that every tool's trees share: most Services are headless.
      ...(opts.headless ? { clusterIP: 'None' } : {}),
      selector: labels,
      ports: [{ name: 'http', port: 80, targetPort: 9898, protocol: 'TCP' }],
    },
  };
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${app}-config`, labels },
    data: {
      generation: String(opts.generation),
      'config.yaml': `server:\n  port: 9898\n  name: ${app}\nfeatures:\n  cache: true\n  tracing: false\n`,
    },
  };
  const serviceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: app, labels } };
  return new Map<string, unknown>([
    [
      'kustomization.yaml',
      { ...KUSTOMIZATION, resources: ['deployment.yaml', 'service.yaml', 'configmap.yaml', 'serviceaccount.yaml'] },
    ],
    ['deployment.yaml', deployment],
    ['service.yaml', service],
    ['configmap.yaml', configMap],
    ['serviceaccount.yaml', serviceAccount],
  ]);
}

/** The strategic-merge patch every Deployment gets in production (a document of it, by name). */
function deploymentPatch(name = 'not-used'): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'app',
              env: [{ name: 'ENVIRONMENT', value: 'production' }],
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
            },
          ],
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
          ],
        },
      },
    },
  };
}

/** The shared components (relative to the tree): monitoring (a port and annotations), and the SMP as a component. */
export function components(): Map<string, unknown> {
  const component = { apiVersion: 'kustomize.config.k8s.io/v1alpha1', kind: 'Component' };
  return new Map<string, unknown>([
    [
      'components/monitoring/kustomization.yaml',
      { ...component, patches: [{ path: 'monitoring-patch.yaml', target: { kind: 'Deployment' } }] },
    ],
    [
      'components/monitoring/monitoring-patch.yaml',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'not-used' },
        spec: {
          template: {
            metadata: { annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9797' } },
            spec: { containers: [{ name: 'app', ports: [{ name: 'metrics', containerPort: 9797, protocol: 'TCP' }] }] },
          },
        },
      },
    ],
    [
      'components/production-patch/kustomization.yaml',
      { ...component, patches: [{ path: 'deployment-patch.yaml', target: { kind: 'Deployment' } }] },
    ],
    ['components/production-patch/deployment-patch.yaml', deploymentPatch()],
  ]);
}

/** Several YAML documents in one file. */
class Documents {
  readonly docs: unknown[];
  constructor(docs: unknown[]) {
    this.docs = docs;
  }
}

/** Writes `files` (path relative to `dir` → a YAML value, Documents, or text). */
export async function writeFiles(dir: string, files: Map<string, unknown>): Promise<void> {
  for (const d of new Set([...files.keys()].map((f) => dirname(join(dir, f))))) await mkdir(d, { recursive: true });
  const text = (c: unknown) =>
    typeof c === 'string'
      ? c
      : c instanceof Documents
        ? c.docs.map((d) => stringify(d, PLAIN)).join('---\n')
        : stringify(c, PLAIN);
  const all = [...files];
  for (let i = 0; i < all.length; i += 256) {
    await Promise.all(all.slice(i, i + 256).map(([f, c]) => writeFile(join(dir, f), text(c))));
  }
}

interface Overlay {
  /** The overlay's directory and its base's, relative to the tree. */
  dir: string;
  baseDir: string;
  namespace: string;
  partOf: string;
  placement: SmpPlacement;
  /** The apps in the base (each a directory of it), as the tree stands. */
  apps: string[];
}

/** The overlay's files and its base's kustomization, relative to the tree. */
function overlayFiles(o: Overlay): Map<string, unknown> {
  const files = new Map<string, unknown>();
  const put = (f: string, content: unknown) => files.set(join(o.dir, f), content);
  const up = '../'.repeat(o.dir.split('/').length);
  const pinned = o.apps[0]!;
  put('kustomization.yaml', {
    ...KUSTOMIZATION,
    namespace: o.namespace,
    namePrefix: 'prod-',
    commonLabels: { environment: 'production' },
    commonAnnotations: {
      'example.com/owner': 'platform-team',
      'example.com/runbook': 'https://runbooks.example.com/app',
    },
    labels: [
      {
        pairs: { 'app.kubernetes.io/part-of': o.partOf, 'app.kubernetes.io/managed-by': 'kustomize' },
        includeSelectors: false,
      },
    ],
    resources: ['namespace.yaml', `${up}${o.baseDir}`],
    components: [
      `${up}components/monitoring`,
      ...(o.placement === 'component' ? [`${up}components/production-patch`] : []),
    ],
    images: [{ name: IMAGE, newName: 'registry.example.com/mirror/podinfo', newTag: '6.7.1' }],
    replicas: [{ name: pinned, count: 3 }],
    patches: [
      ...(o.placement === 'patches' ? [{ path: 'deployment-patch.yaml', target: { kind: 'Deployment' } }] : []),
      { path: 'service-patch.yaml', target: { kind: 'Service' } },
    ],
    patchesStrategicMerge: [
      'resources-patch.yaml',
      ...(o.placement === 'patchesStrategicMerge' ? ['deployments-patch.yaml'] : []),
    ],
    configMapGenerator: [
      { name: 'app-env', files: ['config/app.properties'], literals: ['LOG_LEVEL=info', 'ENVIRONMENT=production'] },
    ],
    secretGenerator: [{ name: 'app-credentials', literals: ['username=app', 'password=s3cr3t-production'] }],
  });
  put('namespace.yaml', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } });
  put('config/app.properties', 'cache.size=512\ntracing.enabled=false\nregion=eu-west-1\n');
  // A JSON 6902 patch file on every Service: the target port by name, and a field the apiserver defaults.
  put('service-patch.yaml', [
    { op: 'replace', path: '/spec/ports/0/targetPort', value: 'http' },
    { op: 'add', path: '/spec/internalTrafficPolicy', value: 'Cluster' },
  ]);
  // One Deployment given a CPU limit and a longer grace period, by name (patchesStrategicMerge as
  // repositories use it; kustomize applies it before the patches: entries).
  put('resources-patch.yaml', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: pinned },
    spec: {
      template: {
        spec: {
          terminationGracePeriodSeconds: 60,
          containers: [{ name: 'app', resources: { limits: { cpu: '1' } } }],
        },
      },
    },
  });
  if (o.placement === 'patches') put('deployment-patch.yaml', deploymentPatch());
  if (o.placement === 'patchesStrategicMerge') {
    put('deployments-patch.yaml', new Documents(o.apps.map((a) => deploymentPatch(a))));
  }
  files.set(join(o.baseDir, 'kustomization.yaml'), { ...KUSTOMIZATION, resources: o.apps });
  return files;
}

/** Service cluster IPs left to give out (the rest of the Services are headless). */
interface IpBudget {
  left: number;
}

/** Writes an overlay over `count` apps' bases; returns the scenarios' edits of it. */
async function writeOverlayTree(
  root: string,
  o: Overlay,
  count: number,
  ips: IpBudget,
): Promise<{ change: () => Promise<void>; removeTenth: (first?: number) => Promise<number> }> {
  const files = new Map<string, unknown>();
  const baseOf = (app: string, generation: number, headless: boolean) =>
    appBase(app, { generation, headless, envConfigMap: 'app-env', credentialsSecret: 'app-credentials' });
  for (let i = 0; i < count; i++) {
    const app = `app-${String(i).padStart(3, '0')}`;
    o.apps.push(app);
    for (const [f, c] of baseOf(app, 1, ips.left-- <= 0)) files.set(join(o.baseDir, app, f), c);
  }
  for (const [f, c] of overlayFiles(o)) files.set(f, c);
  await writeFiles(root, files);
  return {
    change: async () => {
      const app = o.apps[0]!;
      await writeFiles(
        root,
        new Map([[join(o.baseDir, app, 'configmap.yaml'), baseOf(app, 2, true).get('configmap.yaml')]]),
      );
    },
    removeTenth: async (first = 0) => {
      // Every tenth app counted from `first` (a monorepo counts on over its overlays), never the first
      // of the overlay (which it pins by name and the change edits).
      const gone = o.apps.filter((_, i) => i > 0 && (first + i) % 10 === 9);
      await Promise.all(gone.map((a) => rm(join(root, o.baseDir, a), { recursive: true })));
      o.apps.splice(0, o.apps.length, ...o.apps.filter((a) => !gone.includes(a)));
      await writeFiles(root, overlayFiles(o));
      return gone.length * OBJECTS_PER_APP;
    },
  };
}

/** Apps in an overlay of about `n` objects. */
const appsFor = (n: number) => Math.max(2, Math.floor((n - OBJECTS_PER_OVERLAY) / OBJECTS_PER_APP));

/**
 * The real shape: overlays/production over base/ (a directory per app), every field above, the
 * strategic-merge patch on every Deployment from a `patches:` entry; about N objects.
 */
export async function writeReal(dir: string, n: number, prefix: string, clusterIPs: number): Promise<Tree> {
  const ns = `${prefix}-bench-0`;
  const o: Overlay = {
    dir: 'overlays/production',
    baseDir: 'base',
    namespace: ns,
    partOf: prefix,
    placement: 'patches',
    apps: [],
  };
  await writeFiles(dir, components());
  const count = appsFor(n);
  const edits = await writeOverlayTree(dir, o, count, { left: clusterIPs });
  return {
    dir,
    shape: 'real',
    units: [{ name: `${prefix}-bench`, path: o.dir, dependsOn: [] }],
    objects: OBJECTS_PER_OVERLAY + count * OBJECTS_PER_APP,
    namespaces: [ns],
    crdName: '',
    ...edits,
  };
}

/**
 * The realrepo shape: Flux's monorepo (flux/team-NN.yaml, MONOREPO_UNITS Kustomizations in the
 * monorepo shape's dependsOn levels), each teams/team-NN/overlays/production over its own apps'
 * bases, with its own namespace; the strategic-merge patch on every Deployment comes, team by team,
 * from `patches:`, `patchesStrategicMerge:` or a component (SMP_PLACEMENTS in turn).
 */
export async function writeRealRepo(
  dir: string,
  n: number,
  prefix: string,
  units: number,
  clusterIPs: number,
): Promise<Tree> {
  await writeFiles(dir, components());
  const ips = { left: clusterIPs };
  const count = appsFor(Math.floor(n / units));
  const trees: Awaited<ReturnType<typeof writeOverlayTree>>[] = [];
  const list: Unit[] = [];
  const namespaces: string[] = [];
  const flux = new Map<string, unknown>();
  for (let u = 0; u < units; u++) {
    const team = `team-${String(u).padStart(2, '0')}`;
    const name = `${prefix}-${team}`;
    const dependsOn = u === 0 ? [] : u <= 4 ? [`${prefix}-team-00`] : [`${prefix}-team-0${String(1 + (u % 4))}`];
    const o: Overlay = {
      dir: `teams/${team}/overlays/production`,
      baseDir: `teams/${team}/base`,
      namespace: name,
      partOf: team,
      placement: SMP_PLACEMENTS[u % SMP_PLACEMENTS.length]!,
      apps: [],
    };
    trees.push(await writeOverlayTree(dir, o, count, ips));
    list.push({ name, path: o.dir, dependsOn });
    namespaces.push(name);
    flux.set(`flux/${team}.yaml`, {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: 'flux-system' },
      spec: {
        interval: '10m',
        path: `./${o.dir}`,
        prune: true,
        sourceRef: { kind: 'GitRepository', name: 'flux-system' },
        ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((d) => ({ name: d })) } : {}),
      },
    });
  }
  await writeFiles(dir, flux);
  return {
    dir,
    shape: 'realrepo',
    units: list,
    kustomizations: 'flux/*.yaml',
    objects: units * (OBJECTS_PER_OVERLAY + count * OBJECTS_PER_APP),
    namespaces,
    crdName: '',
    // The sixth team's first ConfigMap, as the monorepo shape edits app-05's.
    change: () => trees[Math.min(5, trees.length - 1)]!.change(),
    removeTenth: async () => {
      let gone = 0;
      for (const [u, t] of trees.entries()) gone += await t.removeTenth(u * count);
      return gone;
    },
  };
}
