// The reconcile loop's phases as a user sees them: a failure names its stage and Flux's reason,
// points at the file of the object at fault (render stage included), and the action's log has one
// group per phase.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';

const cm = (ns: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  value: "${value}"\n`;

describe('phases and stage errors', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('a substitution failure is a render failure (BuildFailed) annotated on the file of the object', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/kustomization.yaml': 'resources: [ok.yaml, broken.yaml]\n',
      'app/ok.yaml': cm(ns, 'ok', 'fine'),
      'app/broken.yaml': `# a comment first, so that the line is not 1\n${cm(ns, 'broken', '${missing_variable}')}`,
    });
    const report = await reconcileTree(root, {
      path: 'app',
      vars: { present: 'yes' },
    });
    expect(report.ok).toBe(false);
    // The tree's mistake: marked so, as running again will not help.
    expect(report.failure).toMatchObject({ stage: 'render', reason: 'BuildFailed', userError: true });
    expect(report.error).toContain('missing_variable');
    expect(report.problems).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${ns}/broken`, file: 'app/broken.yaml', line: 5 }),
    ]);
    expect(report.changeset).toEqual([]);
  });

  it('a refusal is a plan or apply failure and a prune guard a prune failure, each with its reason', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'bad/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: ${ns}}\ndata: {"bad key!": x}\n`,
    });
    const report = await reconcileTree(root, {
      path: 'bad',
    });
    // The data key is refused by the server's dry-run: the apply stage.
    expect(report.failure).toMatchObject({ stage: 'apply', reason: 'ReconciliationFailed' });
    expect(report.problems?.[0]).toMatchObject({ subject: `ConfigMap/${ns}/bad`, file: 'bad/cm.yaml' });
    // A name the server would refuse is caught before anything is sent: the plan stage.
    const named = await writeTree({ 'bad/cm.yaml': cm(ns, 'Bad_Name', 'x') });
    const refused = await reconcileTree(named, { path: 'bad' });
    expect(refused.failure).toMatchObject({ stage: 'plan', reason: 'ReconciliationFailed' });
    expect(refused.error).toContain('Bad_Name');

    const two = await writeTree({
      'app/kustomization.yaml': 'resources: [a.yaml, b.yaml]\n',
      'app/a.yaml': cm(ns, 'a', '1'),
      'app/b.yaml': cm(ns, 'b', '2'),
    });
    const apply = { path: 'app', mode: 'apply', prune: true } as const;
    expect((await reconcileTree(two, apply)).ok).toBe(true);
    await writeFile(join(two, 'app/kustomization.yaml'), 'resources: []\n');
    // An empty build would prune everything: the guard refuses.
    const pruned = await reconcileTree(two, apply);
    expect(pruned.error).toMatch(/^prune refused/);
    expect(pruned.failure).toMatchObject({ stage: 'prune', reason: 'PruneFailed' });
  });

  it('a Kustomization file that breaks Flux rules is a resolve failure annotated on the field', async () => {
    const root = await writeTree({
      'clusters/apps.yaml': [
        'apiVersion: kustomize.toolkit.fluxcd.io/v1',
        'kind: Kustomization',
        'metadata: {name: apps, namespace: flux-system}',
        'spec:',
        '  interval: 10m',
        '  path: ./apps',
        '  prune: maybe',
        '  sourceRef: {kind: GitRepository, name: repo}',
        '',
      ].join('\n'),
    });
    const report = await reconcileTree(root, {
      kustomizations: ['clusters/*.yaml'],
    });
    expect(report.failure).toMatchObject({ stage: 'resolve', reason: 'ArtifactFailed', userError: true });
    expect(report.problems).toEqual([
      expect.objectContaining({ subject: 'spec.prune', file: 'clusters/apps.yaml', line: 7 }),
    ]);
  });

  it('a tree kustomize cannot build is the user’s failure, and the report says so', async () => {
    const root = await writeTree({ 'app/kustomization.yaml': 'resources: [missing.yaml]\n' });
    const report = await reconcileTree(root, { path: 'app' });
    expect(report.failure).toMatchObject({ stage: 'render', reason: 'BuildFailed', userError: true });
    expect(report.error).toContain('missing.yaml');
  });

  it('the action log has one group per phase, in order', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'app/cm.yaml': cm(ns, 'grouped', 'x') });
    const res = await runAction(root, { kubeconfig: kubeconfigPath(), path: 'app', mode: 'apply', wait: 'true' });
    expect(res.code).toBe(0);
    const groups = [...res.stdout.matchAll(/^::group::(.*)$/gm)].map((m) => m[1]);
    expect(groups).toEqual(['Render', 'Plan', 'Apply', 'Health', 'Prune', 'Record']);
    expect(res.stdout.match(/^::endgroup::$/gm)).toHaveLength(groups.length);
  });
});
