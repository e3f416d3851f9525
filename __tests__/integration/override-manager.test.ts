// override-manager-before-dry-run (Flux's kustomize-controller v1.10 flag) on the real cluster: an
// object wedged by a foreign field manager, which co-owns a container Git removed so that the
// merged object is invalid, fails its dry-run on every run without the option and reconciles with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Report } from '../../src/report/model.js';
import { adminClient } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileIn, reconcileTree } from '../helpers/reconcile.js';

const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [e.subject, e.action]));

/** A Deployment `web` in `ns` with the containers named (each the same small image). */
const web = (ns: string, containers: readonly string[]) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
${containers.map((c) => `      - {name: ${c}, image: 'registry.k8s.io/pause:3.10'}`).join('\n')}
`;

interface Live {
  spec: { template: { spec: { containers: { name: string; image?: string }[] } } };
  metadata: { managedFields: { manager: string; operation: string }[] };
}

describe('override-manager-before-dry-run', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  /**
   * Applies web with containers main and sidecar, then has `legacy-controller` apply (server-side,
   * its own manager) the sidecar's name alone: it co-owns that list item, not its image. Then Git
   * drops the sidecar. The merge keeps the item (legacy-controller owns it) without its image.
   */
  async function wedged() {
    const { ns, root, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/deploy.yaml': web(ns, ['main', 'sidecar']),
    }));
    expect(report.error).toBeUndefined();
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
    await client.request('PATCH', path, {
      query: { fieldManager: 'legacy-controller', force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: ns },
        spec: { template: { spec: { containers: [{ name: 'sidecar' }] } } },
      },
    });
    await writeFile(join(root, 'app/deploy.yaml'), web(ns, ['main']));
    return { ns, root, path };
  }

  it('without it, the dry-run fails on every run: the foreign manager keeps the removed container', async () => {
    const { ns, root } = await wedged();
    for (let run = 0; run < 2; run++) {
      const r = await reconcileTree(root);
      expect(r.error).toMatch(new RegExp(`Deployment/${ns}/web dry-run failed \\(Invalid\\)`));
      expect(r.error).toMatch(/containers\[1\]\.image: Required value/);
    }
  });

  it('with the manager named, its fields are taken over before the dry-run and the object reconciles', async () => {
    const { ns, root, path } = await wedged();
    const log: string[] = [];
    const r = await reconcileTree(root, { overrideManagerBeforeDryRun: ['legacy'] }, log);
    expect(r.error).toBeUndefined();
    expect(actions(r)).toEqual({ [`Deployment/${ns}/web`]: 'configured' });
    expect(log).toContain(
      `Deployment/${ns}/web: fields of legacy-controller taken over by kustomize-controller before the dry-run`,
    );
    const live = await client.request<Live>('GET', path);
    expect(live.spec.template.spec.containers.map((c) => c.name)).toEqual(['main']);
    expect(live.metadata.managedFields.map((m) => m.manager)).not.toContain('legacy-controller');
    // Nothing left to take: the next run is a no-op with no takeover line.
    const again: string[] = [];
    const next = await reconcileTree(root, { overrideManagerBeforeDryRun: ['legacy'] }, again);
    expect(actions(next)).toEqual({ [`Deployment/${ns}/web`]: 'unchanged' });
    expect(again.join('\n')).not.toMatch(/taken over/);
  });

  it('a preview writes no takeover, and its failed dry-run says the apply would make one first', async () => {
    const { ns, root, path } = await wedged();
    const r = await reconcileTree(root, { overrideManagerBeforeDryRun: ['legacy'], mode: 'preview' });
    expect(r.error).toMatch(new RegExp(`Deployment/${ns}/web dry-run failed \\(Invalid\\)`));
    expect(r.error).toMatch(
      /the apply would first take over the fields of legacy-controller \(override-manager-before-dry-run\)/,
    );
    const live = await client.request<Live>('GET', path);
    expect(live.metadata.managedFields.map((m) => m.manager)).toContain('legacy-controller');
  });

  it('leaves an object with ssa: Merge to its other managers', async () => {
    const { ns, root, path } = await wedged();
    await writeFile(
      join(root, 'app/deploy.yaml'),
      web(ns, ['main']).replace(
        'metadata: {name: web,',
        'metadata: {annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge}, name: web,',
      ),
    );
    const r = await reconcileTree(root, { overrideManagerBeforeDryRun: ['legacy-controller'] });
    expect(r.error).toMatch(/dry-run failed \(Invalid\)/);
    const live = await client.request<Live>('GET', path);
    expect(live.metadata.managedFields.map((m) => m.manager)).toContain('legacy-controller');
  });
});
