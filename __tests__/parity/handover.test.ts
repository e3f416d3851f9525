// Hand-over both ways on one cluster with real Flux (kustomize-controller v1.10.1): a namespace Flux
// reconciled is taken over by ours with nothing configured and no field ownership changed, and handed
// back to Flux with no change; an object removed from Git at the switch is pruned, as Flux would.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import {
  ArtifactServer,
  applyKustomization,
  kustomizationPath,
  parseLog,
  publishExternalArtifact,
  requestReconcile,
  testClusterClient,
  waitForReconcile,
  type Api,
  type FluxLogLine,
} from '../../test/flux/flux.ts';
import { fluxVerdicts } from '../../test/parity/compare.ts';
import { applyOurs, writeOurKustomizations, type OurReport } from '../../test/parity/sides.ts';

const KS_NS = 'flux-system';

function tree(ns: string, withExtra: boolean): Record<string, string> {
  const files: Record<string, string> = {
    'deploy/ns.yaml': stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    'deploy/cm.yaml': stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
      data: { mode: 'a' },
    }),
    'deploy/secret.yaml': stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns },
      stringData: { user: 'admin' },
    }),
    'deploy/svc.yaml': stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    }),
    'deploy/deploy.yaml': stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] },
        },
      },
    }),
  };
  if (withExtra) {
    files['deploy/extra.yaml'] = stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'extra', namespace: ns },
      data: { x: '1' },
    });
  }
  return files;
}

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  await rm(join(root, 'deploy'), { recursive: true, force: true });
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

const SUBJECTS = (ns: string) => [
  ['/api/v1/namespaces/' + ns, `Namespace/${ns}`],
  [`/api/v1/namespaces/${ns}/configmaps/settings`, `ConfigMap/${ns}/settings`],
  [`/api/v1/namespaces/${ns}/secrets/creds`, `Secret/${ns}/creds`],
  [`/api/v1/namespaces/${ns}/services/web`, `Service/${ns}/web`],
  [`/apis/apps/v1/namespaces/${ns}/deployments/web`, `Deployment/${ns}/web`],
];

interface Snap {
  /** The object without status, resourceVersion and managedFields: what the tools write. */
  body: string;
  /** The tools' managed fields (manager kustomize-controller, both use it: operation, time, fields). */
  managed: string;
}

/**
 * What the tools wrote of each object. Not the resourceVersion: controllers bump it through the status
 * subresource (a Deployment rolling out) whatever the tools do. A write by a tool shows in the body or
 * in its managed fields entry, whose time moves with every change it makes.
 */
async function snapshot(api: Api, ns: string): Promise<Record<string, Snap>> {
  const out: Record<string, Snap> = {};
  for (const [path, subject] of SUBJECTS(ns)) {
    const o = await api.request<{ metadata: Record<string, unknown> & { managedFields?: Record<string, unknown>[] } }>(
      'GET',
      path!,
    );
    const managed = (o.metadata.managedFields ?? [])
      .filter((m) => m['subresource'] === undefined && m['manager'] === 'kustomize-controller')
      .map((m) => JSON.stringify([m['manager'], m['operation'], m['time'], m['fieldsV1']]))
      .sort();
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
    // The Deployment controller's own mark, set when it gets to it.
    const annotations = { ...(metadata['annotations'] as Record<string, string> | undefined) };
    delete annotations['deployment.kubernetes.io/revision'];
    metadata['annotations'] = annotations;
    const { status: _status, ...rest } = o as Record<string, unknown>;
    out[subject!] = { body: JSON.stringify({ ...rest, metadata }), managed: managed.join('\n') };
  }
  return out;
}

async function setSuspend(api: Api, name: string, suspend: boolean): Promise<void> {
  await api.request('PATCH', kustomizationPath(KS_NS, name), {
    body: { spec: { suspend } },
    contentType: 'application/merge-patch+json',
  });
}

async function fluxLines(): Promise<FluxLogLine[]> {
  return parseLog(await readFile(inject('parity').fluxLog, 'utf8'));
}

async function world(): Promise<{
  api: Api & { close(): void };
  artifacts: ArtifactServer;
  kubeconfig: string;
  root: string;
  name: string;
}> {
  const w = inject('parity');
  const name = `ho-${randomBytes(3).toString('hex')}`;
  const root = await mkdtemp(join(tmpdir(), 'kr-handover-'));
  return {
    api: await testClusterClient(w.fluxKubeconfig),
    artifacts: ArtifactServer.attach(w.artifacts, w.artifactBase),
    kubeconfig: w.fluxKubeconfig,
    root,
    name,
  };
}

/** Ours, over `root` with a Kustomization file of the same name as Flux's. */
async function ours(root: string, name: string, kubeconfig: string): Promise<{ report: OurReport; stderr: string }> {
  await writeOurKustomizations(root, [{ name, spec: { path: './deploy', prune: true } }]);
  const { raw, report } = await applyOurs(root, kubeconfig);
  return { report, stderr: raw.stderr };
}

async function fluxReconciles(api: Api, artifacts: ArtifactServer, root: string, name: string): Promise<void> {
  const artifact = await artifacts.publish(name, root, ['.parity']);
  await publishExternalArtifact(api, KS_NS, name, artifact);
  await applyKustomization(api, KS_NS, name, { path: './deploy', prune: true }, name);
  const k = await waitForReconcile(api, KS_NS, name, { revision: artifact.revision });
  expect(k.status?.conditions?.find((c) => c.type === 'Ready')?.status, JSON.stringify(k.status?.conditions)).toBe(
    'True',
  );
}

describe('hand-over between Flux and ours', () => {
  it(
    'Flux → ours → Flux: nothing configured, no field ownership changed, no change events',
    { timeout: 300_000 },
    async () => {
      const { api, artifacts, kubeconfig, root, name } = await world();
      const ns = name;
      try {
        await writeFiles(root, tree(ns, false));
        await fluxReconciles(api, artifacts, root, name);
        const afterFlux = await snapshot(api, ns);

        // Flux → ours: suspend Flux's Kustomization (the documented hand-over), then run ours.
        await setSuspend(api, name, true);
        const first = await ours(root, name, kubeconfig);
        expect(first.report.ok, first.report.error ?? first.stderr).toBe(true);
        expect(first.report.counts['configured'], JSON.stringify(first.report.changeset)).toBe(0);
        expect(first.report.counts['created']).toBe(0);
        expect(await snapshot(api, ns)).toEqual(afterFlux);

        // ours → Flux: resume it; its reconcile reports every object unchanged and writes nothing.
        const since = Date.now() - 5;
        await setSuspend(api, name, false);
        const token = await requestReconcile(api, KS_NS, name);
        const k = await waitForReconcile(api, KS_NS, name, { token });
        expect(k.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
        const lines = (await fluxLines()).filter((l) => l.name === name && Date.parse(l.ts ?? '') >= since);
        const verdicts = fluxVerdicts(lines);
        expect(Object.keys(verdicts).sort()).toEqual(
          SUBJECTS(ns)
            .map(([, s]) => s!)
            .sort(),
        );
        expect(Object.entries(verdicts).filter(([, v]) => v !== 'unchanged')).toEqual([]);
        expect(await snapshot(api, ns)).toEqual(afterFlux);
      } finally {
        await api.request('DELETE', kustomizationPath(KS_NS, name)).catch(() => undefined);
        api.close();
        await rm(root, { recursive: true, force: true });
      }
    },
  );

  it(
    'an object removed from Git at the switch is pruned from Flux status.inventory',
    { timeout: 300_000 },
    async () => {
      const { api, artifacts, kubeconfig, root, name } = await world();
      const ns = name;
      try {
        await writeFiles(root, tree(ns, true));
        await fluxReconciles(api, artifacts, root, name);
        await api.request('GET', `/api/v1/namespaces/${ns}/configmaps/extra`);

        await setSuspend(api, name, true);
        await writeFiles(root, tree(ns, false));
        const run = await ours(root, name, kubeconfig);
        expect(run.report.ok, run.report.error ?? run.stderr).toBe(true);
        expect(run.report.pruned ?? []).toEqual([
          expect.objectContaining({ subject: `ConfigMap/${ns}/extra`, action: 'deleted' }),
        ]);
        expect(JSON.stringify(run.report.notes)).toMatch(/status\.inventory/);
        const gone = await api.request('GET', `/api/v1/namespaces/${ns}/configmaps/extra`).then(
          () => false,
          (err: unknown) => (err as { status?: number }).status === 404,
        );
        expect(gone).toBe(true);
      } finally {
        await api.request('DELETE', kustomizationPath(KS_NS, name)).catch(() => undefined);
        api.close();
        await rm(root, { recursive: true, force: true });
      }
    },
  );
});
