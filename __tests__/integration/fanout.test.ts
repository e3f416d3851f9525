// The fan-out as a workflow runs it: `plan` writes the matrix, one bundled CLI process per entry
// starts at once (as matrix jobs do), dependents wait for their dependencies through the inventory
// in the cluster, and `report` merges their report files. The final state, inventories and
// verdicts must be those of one job reconciling everything. Against the shared test cluster, and
// against two clusters (a second apiserver started here).
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { decodeInventory } from '../../src/inventory/codec.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree, type RunResult } from '../helpers/cluster.js';
import { gitIn, initRepository } from '../helpers/git-repos.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { startSecondCluster, type SecondCluster } from '../helpers/second-cluster.js';

const cm = (name: string, data = 'a: b') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {${data}}\n`;

/**
 * Four Kustomizations in `ns` per cluster directory: infra ← apps ← tests, and monitoring alone.
 * `broken` makes infra's apply fail (its object is of a kind the cluster does not serve).
 */
function fleet(
  ns: string,
  dir: (cluster: string) => string,
  clusters: string[],
  broken = false,
): Record<string, string> {
  const files: Record<string, string> = {
    'infra/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml]\n`,
    'infra/cm.yaml': broken
      ? 'apiVersion: fanout.example.com/v1\nkind: NoSuchKind\nmetadata: {name: infra}\n'
      : cm('infra'),
    'apps/kustomization.yaml': `namespace: ${ns}\nresources: [cms.yaml]\n`,
    'apps/cms.yaml': [1, 2, 3, 4, 5].map((i) => cm(`apps-${i}`, `i: "${i}"`)).join('---\n'),
    'monitoring/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml]\n`,
    'monitoring/cm.yaml': cm('monitoring'),
  };
  for (const c of clusters) {
    files[`tests-${c || 'x'}/kustomization.yaml`] = `namespace: ${ns}\nresources: [cm.yaml]\n`;
    files[`tests-${c || 'x'}/cm.yaml`] = cm(`tests-${c || 'x'}`);
    const ks = (name: string, path: string, deps: string[]) =>
      kustomizationYaml({
        name,
        namespace: ns,
        path,
        prune: true,
        spec: deps.length > 0 ? `dependsOn: [${deps.map((d) => `{name: ${d}}`).join(', ')}]` : '',
      });
    files[`${dir(c)}/infra.yaml`] = ks('infra', './infra', []);
    files[`${dir(c)}/apps.yaml`] = ks('apps', './apps', ['infra']);
    files[`${dir(c)}/tests.yaml`] = ks('tests', `./tests-${c || 'x'}`, ['apps']);
    files[`${dir(c)}/monitoring.yaml`] = ks('monitoring', './monitoring', []);
  }
  return files;
}

/** A tree committed to git, so that runs know the commit they are for (the CLI reads HEAD). */
async function committed(files: Record<string, string>): Promise<string> {
  const root = await writeTree(files);
  initRepository(root);
  return root;
}

const cli = (root: string, kubeconfig: string, ...args: string[]): Promise<RunResult> =>
  runNode('dist/cli.js', [...args, '--kubeconfig', kubeconfig, '--kustomize-path', KUSTOMIZE], { cwd: root });

interface Entry {
  id: string;
  cluster: string;
  kustomization: string;
  level: number;
}

/** The plan's entries; the plan is kept as plan.json in `root` (for report --matrix). */
async function plan(root: string, pattern: string): Promise<Entry[]> {
  const r = await runNode('dist/cli.js', ['plan', '--kustomizations', pattern, '--output', 'json'], { cwd: root });
  expect(r.code, r.stderr).toBe(0);
  await writeFile(join(root, 'plan.json'), r.stdout);
  return (JSON.parse(r.stdout) as { matrix: { include: Entry[] } }).matrix.include;
}

/**
 * Every matrix entry as its own process, all started at once, dependents first (the order a
 * runner pool might pick them up in): each reconciles its selection and writes its report file.
 */
function fanOut(
  root: string,
  entries: Entry[],
  pattern: string,
  kubeconfig: (cluster: string) => string,
  extra: string[] = [],
) {
  return Promise.all(
    [...entries].reverse().map(async (e) => ({
      e,
      r: await cli(
        root,
        kubeconfig(e.cluster),
        'apply',
        '--kustomizations',
        pattern,
        ...(e.cluster ? ['--cluster', e.cluster] : []),
        '--select',
        e.kustomization,
        '--report-file',
        `reports/${e.id}.json`,
        '--dependency-timeout',
        '3m',
        ...extra,
      ),
    })),
  );
}

/** The ConfigMaps a run made in `ns` (name → data), the inventories' own left out. */
async function state(client: ClusterClient, ns: string): Promise<Record<string, unknown>> {
  const list = await client.request<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>(
    'GET',
    `/api/v1/namespaces/${ns}/configmaps`,
  );
  return Object.fromEntries(
    list.items
      .filter((i) => !i.metadata.name.startsWith('kustomize-reconcile.') && i.metadata.name !== 'kube-root-ca.crt')
      .map((i) => [i.metadata.name, i.data]),
  );
}

/** Each Kustomization's inventory: its entries (with `ns` written as NS) and its result. */
async function inventories(client: ClusterClient, ns: string, names: string[]) {
  const out: Record<string, { entries: string[]; result: string; commit?: string }> = {};
  for (const name of names) {
    const c = await client.request<{ data?: Record<string, string>; binaryData?: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.${ns}.${name}`,
    );
    const record = decodeInventory(c.data ?? {}, c.binaryData ?? {}, []);
    out[name] = {
      entries: record.entries.map((e) => e.id.replaceAll(ns, 'NS')).sort(),
      result: record.status.result,
      ...(record.status.commit ? { commit: record.status.commit } : {}),
    };
  }
  return out;
}

/** Each Kustomization's verdict and changeset, with `ns` written as NS. */
function verdicts(reports: Report[], ns: string) {
  return Object.fromEntries(
    reports.map((k) => [
      `${k.cluster ?? ''}:${k.kustomization.replaceAll(ns, 'NS')}`,
      { ok: k.ok, changes: k.changeset.map((c) => `${c.subject.replaceAll(ns, 'NS')} ${c.action}`).sort() },
    ]),
  );
}

const head = (root: string) => gitIn(root, 'rev-parse', 'HEAD');

describe('fan-out across processes on one cluster', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });
  const names = ['infra', 'apps', 'tests', 'monitoring'];

  it('N processes give the final state, inventories and verdicts of one job; report merges them', async () => {
    const [nsA, nsB] = [await freshNamespace(client, 'fan'), await freshNamespace(client, 'one')];
    const rootA = await committed(fleet(nsA, () => 'ks', ['']));
    const rootB = await committed(fleet(nsB, () => 'ks', ['']));

    const entries = await plan(rootA, 'ks/*.yaml');
    expect(entries.map((e) => `${e.kustomization.replace(nsA, 'NS')}@${e.level}`)).toEqual([
      'NS/infra@0',
      'NS/monitoring@0',
      'NS/apps@1',
      'NS/tests@2',
    ]);
    const runs = await fanOut(rootA, entries, 'ks/*.yaml', () => kubeconfigPath());
    for (const { e, r } of runs) expect(r.code, `${e.id}: ${r.stdout}\n${r.stderr}`).toBe(0);
    // The dependents started before their dependencies were done and waited for them in the cluster.
    const tests = runs.find((x) => x.e.kustomization.endsWith('/tests'))!.r.stdout;
    expect(tests).toContain(`waiting for ${nsA}/apps (reconciled by other jobs) to be ready at commit`);
    expect(tests).toContain(`dependency ${nsA}/apps is ready`);

    const one = await cli(rootB, kubeconfigPath(), 'apply', '--kustomizations', 'ks/*.yaml', '--output', 'json');
    expect(one.code, one.stderr).toBe(0);
    const single = JSON.parse(one.stdout) as Report;

    expect(await state(client, nsA)).toEqual(await state(client, nsB));
    expect(Object.keys(await state(client, nsA))).toHaveLength(8);
    const invA = await inventories(client, nsA, names);
    const invB = await inventories(client, nsB, names);
    expect(Object.fromEntries(Object.entries(invA).map(([k, v]) => [k, { ...v, commit: undefined }]))).toEqual(
      Object.fromEntries(Object.entries(invB).map(([k, v]) => [k, { ...v, commit: undefined }])),
    );
    expect(Object.values(invA).map((i) => i.commit)).toEqual(names.map(() => head(rootA)));

    expect(await readdir(join(rootA, 'reports'))).toHaveLength(4);
    const merged = await runNode(
      'dist/cli.js',
      ['report', '--reports', 'reports/*.json', '--matrix', 'plan.json', '--output', 'json'],
      { cwd: rootA },
    );
    expect(merged.code, merged.stderr).toBe(0);
    const report = JSON.parse(merged.stdout) as Report;
    expect(verdicts(report.kustomizations!, nsA)).toEqual(verdicts(single.kustomizations!, nsB));
    expect(report.counts).toEqual(single.counts);
    expect(report.ok).toBe(true);
    expect(report.notes).toEqual(single.notes);
  }, 240_000);

  it('dependents in other processes skip, with the reason, when a dependency fails; nothing of theirs is applied', async () => {
    const ns = await freshNamespace(client, 'fail');
    const root = await committed(fleet(ns, () => 'ks', [''], true));
    const entries = (await plan(root, 'ks/*.yaml')).filter((e) => !e.kustomization.endsWith('/monitoring'));
    const runs = await fanOut(root, entries, 'ks/*.yaml', () => kubeconfigPath());
    const by = (name: string) => runs.find((x) => x.e.kustomization === `${ns}/${name}`)!.r;
    expect(by('infra').code).toBe(2);
    expect(by('apps').code).toBe(2);
    expect(by('apps').stdout).toContain(`skipped: dependency '${ns}/infra' failed in another job:`);
    expect(by('tests').code).toBe(2);
    expect(by('tests').stdout).toContain(
      `skipped: dependency '${ns}/apps' failed in another job: skipped: dependency '${ns}/infra'`,
    );
    expect(await state(client, ns)).toEqual({});
    // The skips are recorded for this commit, so a later dependent does not wait out its timeout.
    const inv = await inventories(client, ns, ['apps', 'tests']);
    expect(inv['apps']).toMatchObject({ entries: [], result: 'Failed', commit: head(root) });
    const merged = await runNode('dist/cli.js', ['report', '--reports', 'reports/*.json'], { cwd: root });
    expect(merged.code).toBe(2);
    expect(merged.stdout).toMatch(/Failed: 1 failed, 2 skipped of 3 Kustomizations/);
  }, 240_000);
});

describe('a fan-out preview', () => {
  it('plans a job whose Namespace a dependency in another job would create as would create, not failed', async () => {
    const client = await adminClient();
    try {
      const ns = await freshNamespace(client, 'pre');
      const made = `${ns}-made`;
      const root = await committed({
        'ks/infra.yaml': kustomizationYaml({ name: 'infra', namespace: ns, path: './infra' }),
        'ks/apps.yaml': kustomizationYaml({
          name: 'apps',
          namespace: ns,
          path: './apps',
          spec: 'dependsOn: [{name: infra}]',
        }),
        'infra/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${made}}\n`,
        'apps/kustomization.yaml': `namespace: ${made}\nresources: [cm.yaml]\n`,
        'apps/cm.yaml': cm('settings'),
      });
      const r = await cli(root, kubeconfigPath(), 'diff', '--kustomizations', 'ks/*.yaml', '--select', `${ns}/apps`);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain(`dependencies reconciled by other jobs, not waited for in a preview: ${ns}/infra`);
      expect(r.stdout).toContain(`Namespaces that dependencies in other jobs would create: ${made}`);
      expect(r.stdout).toContain(`ConfigMap/${made}/settings created`);
    } finally {
      client.close();
    }
  }, 120_000);
});

describe('fan-out across processes on two clusters', () => {
  let one: ClusterClient;
  let two: ClusterClient;
  let twoKubeconfig: string;
  let second: SecondCluster;

  beforeAll(async () => {
    one = await adminClient();
    second = await startSecondCluster('fan-two');
    two = second.client;
    twoKubeconfig = second.kubeconfig;
  }, 120_000);
  afterAll(async () => {
    one.close();
    await second.stop();
  });

  it('a cluster × Kustomization matrix gives each cluster what one job per cluster gives it', async () => {
    const kubeconfig = (c: string) => (c === 'one' ? kubeconfigPath() : twoKubeconfig);
    const clientOf = (c: string) => (c === 'one' ? one : two);
    const ns = { fan: `fan2-${Date.now().toString(36)}`, job: `job2-${Date.now().toString(36)}` };
    for (const c of [one, two])
      for (const n of Object.values(ns))
        await c.request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } },
        });
    const layout = (c: string) => `clusters/${c}`;
    const rootFan = await committed(fleet(ns.fan, layout, ['one', 'two']));
    const rootJob = await committed(fleet(ns.job, layout, ['one', 'two']));

    // One run over both clusters' files is refused, saying what to do.
    const mixed = await cli(rootJob, kubeconfigPath(), 'diff', '--kustomizations', 'clusters/*/*.yaml');
    expect(mixed.code).toBe(2);
    expect(mixed.stdout + mixed.stderr).toContain(
      'the files are of several clusters (one, two): reconcile one cluster per run with the input cluster (CLI --cluster NAME)',
    );

    const entries = await plan(rootFan, 'clusters/*/*.yaml');
    expect(entries).toHaveLength(8);
    expect(new Set(entries.map((e) => e.cluster))).toEqual(new Set(['one', 'two']));
    const runs = await fanOut(rootFan, entries, 'clusters/*/*.yaml', kubeconfig);
    for (const { e, r } of runs) expect(r.code, `${e.id}: ${r.stdout}\n${r.stderr}`).toBe(0);

    const jobs: Report[] = [];
    for (const c of ['one', 'two']) {
      const r = await cli(
        rootJob,
        kubeconfig(c),
        'apply',
        '--kustomizations',
        'clusters/*/*.yaml',
        '--cluster',
        c,
        '--output',
        'json',
      );
      expect(r.code, r.stderr).toBe(0);
      jobs.push(JSON.parse(r.stdout) as Report);
    }
    for (const c of ['one', 'two']) {
      const fan = await state(clientOf(c), ns.fan);
      expect(fan).toEqual(await state(clientOf(c), ns.job));
      // Each cluster has its own tests, not the other's.
      expect(Object.keys(fan)).toContain(`tests-${c}`);
      expect(Object.keys(fan)).not.toContain(`tests-${c === 'one' ? 'two' : 'one'}`);
      const names = ['infra', 'apps', 'tests', 'monitoring'];
      const strip = (inv: Awaited<ReturnType<typeof inventories>>, n: string) =>
        Object.fromEntries(
          Object.entries(inv).map(([k, v]) => [
            k,
            { entries: v.entries.map((e) => e.replaceAll(n, 'NS')), result: v.result },
          ]),
        );
      expect(strip(await inventories(clientOf(c), ns.fan, names), ns.fan)).toEqual(
        strip(await inventories(clientOf(c), ns.job, names), ns.job),
      );
    }
    const merged = await runNode('dist/cli.js', ['report', '--reports', 'reports/*.json', '--output', 'json'], {
      cwd: rootFan,
    });
    expect(merged.code, merged.stderr).toBe(0);
    const report = JSON.parse(merged.stdout) as Report;
    expect(verdicts(report.kustomizations!, ns.fan)).toEqual(
      verdicts(
        jobs.flatMap((j) => j.kustomizations!),
        ns.job,
      ),
    );
    expect(report.kustomizations!.map((k) => k.cluster)).toEqual([
      'one',
      'one',
      'one',
      'one',
      'two',
      'two',
      'two',
      'two',
    ]);
    const apps = entries.find((e) => e.cluster === 'one' && e.kustomization === `${ns.fan}/apps`)!;
    expect(JSON.parse(await readFile(join(rootFan, 'reports', `${apps.id}.json`), 'utf8'))).toMatchObject({
      kind: 'kustomize-reconcile/report',
      revision: head(rootFan),
      report: { cluster: 'one', kustomization: `${ns.fan}/apps`, ok: true },
    });
  }, 240_000);
});
