// The tree bench/run.ts gives each tool: N objects written as YAML files, one object a file
// (Namespaces, a CRD and its custom resources, ConfigMaps, Secrets, Services and Deployments), in one
// of several shapes (a plain directory, an overlay over a base, Flux's monorepo of Kustomizations, and
// in real.ts the same written as repositories write them),
// with the edits its scenarios make to it (one ConfigMap changed, a tenth of the files removed).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { stringify } from 'yaml';
import { writeReal, writeRealRepo } from './real.ts';
import { writeRepo80 } from './repo80.ts';

/**
 * plain: a directory of YAML files, no kustomization file; overlay: the files in a base listed by
 * its kustomization.yaml, and an overlay over it (namespace, labels, patches); monorepo: Flux's
 * layout of MONOREPO_UNITS Kustomizations in dependsOn levels, each an overlay of its own files
 * over a base they all share. real, realrepo (real.ts) and repo80 (repo80.ts): an overlay as
 * repositories write them, Flux's monorepo of such overlays, and a parent of 80 child Kustomizations
 * in the parent/children layout (about 500 objects).
 */
export type Shape = 'plain' | 'overlay' | 'monorepo' | 'real' | 'realrepo' | 'repo80';
/** What --shapes runs when not given. */
export const SHAPES: readonly Shape[] = ['plain', 'overlay', 'monorepo'];
/** Every shape --shapes takes: also the trees written as repositories write them (bench/run/real.ts). */
export const SHAPE_NAMES: readonly Shape[] = [...SHAPES, 'real', 'realrepo', 'repo80'];
export const MONOREPO_UNITS = 20;
/** Services with a cluster IP in a tree by default (the test cluster's service range is a /24). */
export const CLUSTER_IPS = 40;

/** One Kustomization of a tree: a name, its directory relative to the tree, the names it depends on. */
export interface Unit {
  name: string;
  path: string;
  dependsOn: string[];
}

const KINDS = ['ConfigMap', 'Secret', 'Service', 'Deployment', 'ConfigMap'] as const;
type Kind = (typeof KINDS)[number] | 'Widget';

export interface Tree {
  dir: string;
  shape: Shape;
  /** Its Kustomizations in dependsOn order: one for plain (`.`) and overlay (`overlay`). */
  units: Unit[];
  /** monorepo: the Flux Kustomization files, a glob relative to `dir`. */
  kustomizations?: string;
  /** Objects in the tree as first written (Namespaces, the CRD, CRs and the rest). */
  objects: number;
  namespaces: string[];
  crdName: string;
  /** Edits one ConfigMap. */
  change: () => Promise<void>;
  /** Deletes 10 % of the object files (never a Namespace or the CRD); returns how many objects went. */
  removeTenth: () => Promise<number>;
}

/** One object of the tree; an empty `namespace` leaves it out (an overlay sets it); a Service past 200 is headless. */
export function objectFor(
  kind: Kind,
  name: string,
  namespace: string,
  generation: number,
  group: string,
  headless = Number(name.split('-').pop()) >= CLUSTER_IPS * KINDS.length,
): unknown {
  const labels = { app: name, 'bench.kustomize-reconcile/tier': 'a' };
  const metadata = namespace === '' ? { name, labels } : { name, namespace, labels };
  switch (kind) {
    case 'ConfigMap':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        data: { generation: String(generation), 'app.properties': `x=${name}\ny=${'v'.repeat(64)}\n` },
      };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata, type: 'Opaque', stringData: { token: `t-${name}` } };
    case 'Service':
      return {
        apiVersion: 'v1',
        kind,
        metadata,
        spec: {
          // The test cluster's service range is a /24 (254 addresses) that the five tools share: past 40
          // per tool, headless.
          ...(headless ? { clusterIP: 'None' } : {}),
          selector: { app: name },
          ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        },
      };
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata,
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'ghcr.io/stefanprodan/podinfo:6.7.1',
                  ports: [{ containerPort: 8080 }],
                  env: [{ name: 'PODINFO_UI_MESSAGE', value: name }],
                  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
                  readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 10 },
                },
              ],
            },
          },
        },
      };
    case 'Widget':
      return {
        apiVersion: `${group}/v1`,
        kind,
        metadata,
        spec: { size: generation, color: 'blue', tags: ['bench', name] },
      };
  }
}

function crdFor(group: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer' },
                    color: { type: 'string' },
                    tags: { type: 'array', items: { type: 'string' } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * Writes N objects as plain YAML files, one object a file (no kustomization.yaml: one is generated, as
 * Flux does; kubectl and kapp read the directory as is): one Namespace per 200 objects, one CRD with
 * N/20 custom resources, the rest ConfigMaps (40 %), Secrets, Services and Deployments (20 % each)
 * spread over the namespaces. `prefix` keeps each tool's namespaces and CRD group apart.
 */
export async function writeTree(
  dir: string,
  n: number,
  prefix: string,
  shape: Shape = 'plain',
  /** Services given a cluster IP (the rest are headless), CLUSTER_IPS unless the trees on one cluster need fewer. */
  clusterIPs = CLUSTER_IPS,
): Promise<Tree> {
  if (shape === 'overlay') return writeOverlay(dir, n, prefix, clusterIPs);
  if (shape === 'monorepo') return writeMonorepo(dir, n, prefix);
  if (shape === 'real') return writeReal(dir, n, prefix, clusterIPs);
  if (shape === 'realrepo') return writeRealRepo(dir, n, prefix, MONOREPO_UNITS, clusterIPs);
  if (shape === 'repo80') return writeRepo80(dir, prefix, clusterIPs);
  await mkdir(dir, { recursive: true });
  const group = `${prefix}.bench.example.com`;
  const namespaces = Array.from({ length: Math.max(1, Math.round(n / 200)) }, (_, i) => `${prefix}-bench-${i}`);
  await writeFile(
    join(dir, '00-namespaces.yaml'),
    namespaces.map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).join('---\n'),
  );
  await writeFile(join(dir, '01-crd.yaml'), stringify(crdFor(group)));
  const crs = Math.floor(n / 20);
  const rest = Math.max(0, n - namespaces.length - 1 - crs);
  const files: string[] = [];
  const writes: Promise<void>[] = [];
  const put = (kind: Kind, name: string, ns: string) => {
    const file = join(dir, `${name}.yaml`);
    files.push(file);
    const i = Number(name.split('-').pop());
    writes.push(writeFile(file, stringify(objectFor(kind, name, ns, 1, group, i >= clusterIPs * KINDS.length))));
  };
  for (let i = 0; i < crs; i++) put('Widget', `widget-${i}`, namespaces[i % namespaces.length]!);
  for (let i = 0; i < rest; i++) {
    const kind = KINDS[i % KINDS.length]!;
    put(kind, `${kind.toLowerCase()}-${i}`, namespaces[i % namespaces.length]!);
  }
  await Promise.all(writes);
  return {
    dir,
    shape,
    units: [{ name: `${prefix}-bench`, path: '.', dependsOn: [] }],
    objects: namespaces.length + 1 + crs + rest,
    namespaces,
    crdName: `widgets.${group}`,
    change: () =>
      writeFile(
        join(dir, 'configmap-0.yaml'),
        stringify(objectFor('ConfigMap', 'configmap-0', namespaces[0]!, 2, group)),
      ),
    removeTenth: async () => {
      // Every 10th file, so each kind loses about a tenth; never configmap-0 (the changed one).
      const gone = files.filter((f, i) => i % 10 === 9 && !f.endsWith('/configmap-0.yaml'));
      await Promise.all(gone.map((f) => rm(f)));
      return gone.length;
    },
  };
}

/** Writes `files` (path relative to `dir` → object) as YAML, one object a file. */
async function writeObjects(dir: string, files: Map<string, unknown>): Promise<void> {
  const dirs = new Set([...files.keys()].map((f) => dirname(join(dir, f))));
  for (const d of dirs) await mkdir(d, { recursive: true });
  await Promise.all([...files].map(([f, obj]) => writeFile(join(dir, f), stringify(obj))));
}

/** A kustomization.yaml listing `resources`, with the overlay's fields when `overlay` names its namespace. */
function kustomization(resources: string[], overlay?: { namespace: string; partOf: string }): string {
  const k: Record<string, unknown> = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };
  if (overlay) {
    k['namespace'] = overlay.namespace;
    k['labels'] = [{ pairs: { 'app.kubernetes.io/part-of': overlay.partOf } }];
  }
  k['resources'] = resources;
  if (overlay) {
    k['patches'] = [
      { target: { kind: 'ConfigMap' }, patch: '- op: add\n  path: /data/overlay\n  value: "yes"\n' },
      { target: { group: 'apps', kind: 'Deployment' }, patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n' },
    ];
  }
  return stringify(k);
}

/**
 * The overlay shape: the plain tree's objects without namespaces in base/ (listed by its
 * kustomization.yaml), and overlay/ with a Namespace, `namespace:`, a label and two JSON patches.
 */
async function writeOverlay(dir: string, n: number, prefix: string, clusterIPs: number): Promise<Tree> {
  const group = `${prefix}.bench.example.com`;
  const ns = `${prefix}-bench-0`;
  const crs = Math.floor(n / 20);
  const rest = Math.max(0, n - 2 - crs);
  const files = new Map<string, unknown>([['base/01-crd.yaml', crdFor(group)]]);
  for (let i = 0; i < crs; i++) files.set(`base/widget-${i}.yaml`, objectFor('Widget', `widget-${i}`, '', 1, group));
  for (let i = 0; i < rest; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const obj = objectFor(kind, `${kind.toLowerCase()}-${i}`, '', 1, group, i >= clusterIPs * KINDS.length);
    files.set(`base/${kind.toLowerCase()}-${i}.yaml`, obj);
  }
  files.set('overlay/ns.yaml', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await writeObjects(dir, files);
  const listed = [...files.keys()].filter((f) => f.startsWith('base/')).map((f) => f.slice('base/'.length));
  const writeBase = () => writeFile(join(dir, 'base/kustomization.yaml'), kustomization(listed));
  await writeBase();
  await writeFile(
    join(dir, 'overlay/kustomization.yaml'),
    kustomization(['ns.yaml', '../base'], { namespace: ns, partOf: prefix }),
  );
  return {
    dir,
    shape: 'overlay',
    units: [{ name: `${prefix}-bench`, path: 'overlay', dependsOn: [] }],
    objects: 2 + crs + rest,
    namespaces: [ns],
    crdName: `widgets.${group}`,
    change: () =>
      writeFile(join(dir, 'base/configmap-0.yaml'), stringify(objectFor('ConfigMap', 'configmap-0', '', 2, group))),
    removeTenth: async () => {
      const gone = listed.filter((f, i) => i % 10 === 9 && f !== 'configmap-0.yaml' && f !== '01-crd.yaml');
      await Promise.all(gone.map((f) => rm(join(dir, 'base', f))));
      listed.splice(0, listed.length, ...listed.filter((f) => !gone.includes(f)));
      await writeBase();
      return gone.length;
    },
  };
}

/**
 * Flux's monorepo: MONOREPO_UNITS Kustomizations (flux/*.yaml) of about N / MONOREPO_UNITS objects
 * each, apps/app-NN overlays of their own files (Namespace, ConfigMaps, Secrets, headless Services,
 * Deployments, custom resources) over bases/common, which every app shares. app-00 holds the CRD;
 * app-01 to app-04 depend on it, the others on one of those (three dependsOn levels).
 */
async function writeMonorepo(dir: string, n: number, prefix: string): Promise<Tree> {
  const group = `${prefix}.bench.example.com`;
  const per = Math.max(10, Math.floor(n / MONOREPO_UNITS));
  const common = new Map<string, unknown>([
    ['bases/common/config.yaml', objectFor('ConfigMap', 'common-config', '', 1, group)],
    ['bases/common/secret.yaml', objectFor('Secret', 'common-secret', '', 1, group)],
    ['bases/common/service.yaml', objectFor('Service', 'common-service', '', 1, group, true)],
    ['bases/common/deployment.yaml', objectFor('Deployment', 'common-deployment', '', 1, group)],
  ]);
  await writeObjects(dir, common);
  await writeFile(
    join(dir, 'bases/common/kustomization.yaml'),
    kustomization([...common.keys()].map((f) => f.slice('bases/common/'.length))),
  );
  const units: Unit[] = [];
  const own = new Map<string, string[]>();
  const namespaces: string[] = [];
  let objects = 0;
  await mkdir(join(dir, 'flux'), { recursive: true });
  for (let u = 0; u < MONOREPO_UNITS; u++) {
    const app = `app-${String(u).padStart(2, '0')}`;
    const name = `${prefix}-${app}`;
    const ns = `${prefix}-${app}`;
    namespaces.push(ns);
    const dependsOn = u === 0 ? [] : u <= 4 ? [`${prefix}-app-00`] : [`${prefix}-app-0${String(1 + (u % 4))}`];
    units.push({ name, path: `apps/${app}`, dependsOn });
    const files = new Map<string, unknown>([
      [`apps/${app}/ns.yaml`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
    ]);
    if (u === 0) files.set(`apps/${app}/crd.yaml`, crdFor(group));
    const count = per - 1 - common.size;
    for (let i = 0; i < count; i++) {
      const kind: Kind = u > 0 && i % 10 === 9 ? 'Widget' : KINDS[i % KINDS.length]!;
      const obj = `${kind.toLowerCase()}-${i}`;
      files.set(`apps/${app}/${obj}.yaml`, objectFor(kind, obj, '', 1, group, true));
    }
    await writeObjects(dir, files);
    own.set(
      app,
      [...files.keys()].map((f) => relative(`apps/${app}`, f)),
    );
    objects += files.size + common.size;
    await writeFile(
      join(dir, 'flux', `${app}.yaml`),
      stringify({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name, namespace: 'flux-system' },
        spec: {
          interval: '10m',
          path: `./apps/${app}`,
          prune: true,
          sourceRef: { kind: 'GitRepository', name: 'flux-system' },
          ...(dependsOn.length > 0 ? { dependsOn: dependsOn.map((d) => ({ name: d })) } : {}),
        },
      }),
    );
  }
  const writeApp = (app: string) =>
    writeFile(
      join(dir, 'apps', app, 'kustomization.yaml'),
      kustomization([...own.get(app)!, '../../bases/common'], { namespace: `${prefix}-${app}`, partOf: app }),
    );
  for (const app of own.keys()) await writeApp(app);
  return {
    dir,
    shape: 'monorepo',
    units,
    kustomizations: 'flux/*.yaml',
    objects,
    namespaces,
    crdName: `widgets.${group}`,
    change: () =>
      writeFile(
        join(dir, 'apps/app-05/configmap-0.yaml'),
        stringify(objectFor('ConfigMap', 'configmap-0', '', 2, group)),
      ),
    removeTenth: async () => {
      let gone = 0;
      for (const [app, files] of own) {
        const drop = files.filter((f, i) => i % 10 === 9 && !['ns.yaml', 'crd.yaml', 'configmap-0.yaml'].includes(f));
        await Promise.all(drop.map((f) => rm(join(dir, 'apps', app, f))));
        own.set(
          app,
          files.filter((f) => !drop.includes(f)),
        );
        gone += drop.length;
        await writeApp(app);
      }
      return gone;
    },
  };
}
