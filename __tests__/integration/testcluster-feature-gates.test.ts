// `testcluster up --feature-gates`: a repository that needs a Kubernetes feature gate can be tried on
// the test cluster. An HPA with minReplicas: 0 (HPAScaleToZero: alpha, off by default, up to 1.36; beta,
// on, from 1.37) is refused by a cluster started with the gate off and accepted, and applied by a
// reconcile, on one started with it on; a malformed or unknown gate stops `up` before anything starts.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { TESTCLUSTER } from '../helpers/paths.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { startSecondCluster, type SecondCluster } from '../helpers/second-cluster.js';

const hpa = (ns: string) => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'scale-to-zero', namespace: ns },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'worker' },
    minReplicas: 0,
    maxReplicas: 3,
    metrics: [
      {
        type: 'External',
        external: { metric: { name: 'queue_depth' }, target: { type: 'AverageValue', averageValue: '10' } },
      },
    ],
  },
});
const hpaPath = (ns: string) => `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`;

describe('testcluster up --feature-gates', () => {
  let off: SecondCluster | undefined;
  let gated: SecondCluster | undefined;

  beforeAll(async () => {
    [off, gated] = await Promise.all([
      startSecondCluster('feature-gates-off', ['--feature-gates', 'HPAScaleToZero=false']),
      startSecondCluster('feature-gates', ['--feature-gates', 'HPAScaleToZero=true']),
    ]);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([off?.stop(), gated?.stop()]);
  });

  it('with HPAScaleToZero=false an HPA with minReplicas: 0 is refused', async () => {
    const ns = await freshNamespace(off!.client);
    await expect(off!.client.request('POST', hpaPath(ns), { body: hpa(ns), query: { dryRun: 'All' } })).rejects.toThrow(
      /minReplicas/,
    );
  });

  it('with --feature-gates HPAScaleToZero=true it is accepted', async () => {
    const ns = await freshNamespace(gated!.client);
    await gated!.client.request('POST', hpaPath(ns), { body: hpa(ns) });
    const got = await gated!.client.request<{ spec: { minReplicas: number } }>('GET', `${hpaPath(ns)}/scale-to-zero`);
    expect(got.spec.minReplicas).toBe(0);
  });

  it('a repository with such an HPA applies on the gated cluster', async () => {
    const ns = await freshNamespace(gated!.client);
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, path: './app', prune: true }),
      'app/hpa.yaml': JSON.stringify(hpa(ns)),
    });
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: gated!.kubeconfig } });
    expect(report.error).toBeUndefined();
    expect(report.changeset.map((e) => [e.subject, e.action])).toEqual([
      [`HorizontalPodAutoscaler/${ns}/scale-to-zero`, 'created'],
    ]);
  });
});

describe('testcluster up refuses a bad --feature-gates before starting anything', () => {
  it.each<{ why: string; value: string; message: string }>([
    {
      why: 'an entry without a value',
      value: 'HPAScaleToZero',
      message:
        'testcluster up: --feature-gates: "HPAScaleToZero" has no value: write HPAScaleToZero=true or HPAScaleToZero=false',
    },
    {
      why: 'a value that is not a boolean',
      value: 'HPAScaleToZero=on',
      message: 'testcluster up: --feature-gates: HPAScaleToZero=on: the value must be true or false',
    },
    {
      why: 'a gate this version does not know',
      value: 'HPAScaleToZero=true,NoSuchGate=true',
      message: 'testcluster up: --feature-gates: unrecognized feature gate: NoSuchGate',
    },
  ])('$why', async ({ value, message }) => {
    const dir = await mkdtemp(join(tmpdir(), 'kr-bad-gates-'));
    const run = spawnSync(TESTCLUSTER, ['up', '--tier', 'a', '--dir', dir, '--feature-gates', value], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(message);
    expect(run.stdout).toBe('');
    // Nothing was started or written.
    expect(await readdir(dir)).toEqual([]);
  });
});
