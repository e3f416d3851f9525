// The tree bench/run.ts gives each tool: N objects written as plain YAML files, one object a file
// (Namespaces, a CRD and its custom resources, ConfigMaps, Secrets, Services and Deployments), with
// the edits its scenarios make to it (one ConfigMap changed, a tenth of the files removed).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

const KINDS = ['ConfigMap', 'Secret', 'Service', 'Deployment', 'ConfigMap'] as const;
type Kind = (typeof KINDS)[number] | 'Widget';

export interface Tree {
  dir: string;
  /** Objects in the tree as first written (Namespaces, the CRD, CRs and the rest). */
  objects: number;
  namespaces: string[];
  crdName: string;
  /** Edits one ConfigMap. */
  change: () => Promise<void>;
  /** Deletes 10 % of the object files (never a Namespace or the CRD); returns how many objects went. */
  removeTenth: () => Promise<number>;
}

export function objectFor(kind: Kind, name: string, namespace: string, generation: number, group: string): unknown {
  const labels = { app: name, 'bench.kustomize-reconcile/tier': 'a' };
  const metadata = { name, namespace, labels };
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
          ...(Number(name.split('-').pop()) >= 200 ? { clusterIP: 'None' } : {}),
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
export async function writeTree(dir: string, n: number, prefix: string): Promise<Tree> {
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
    writes.push(writeFile(file, stringify(objectFor(kind, name, ns, 1, group))));
  };
  for (let i = 0; i < crs; i++) put('Widget', `widget-${i}`, namespaces[i % namespaces.length]!);
  for (let i = 0; i < rest; i++) {
    const kind = KINDS[i % KINDS.length]!;
    put(kind, `${kind.toLowerCase()}-${i}`, namespaces[i % namespaces.length]!);
  }
  await Promise.all(writes);
  return {
    dir,
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
