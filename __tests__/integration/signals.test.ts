// A cancelled run ends what it started and frees its lock (src/util/lifecycle.ts): the bundled CLI,
// sent SIGTERM during a kustomize build that does not end, kills kustomize and what it started
// (they would otherwise go on in their own session, reading the scratch tree) and ends by SIGTERM
// (exit status 143); sent SIGTERM while it waits for health under its lock, it releases the Lease,
// so that the next run takes it at once instead of waiting for it to run out.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import type { ClusterClient } from '../../src/cluster/client.js';
import { LAST_HOLDER_ANNOTATION } from '../../src/inventory/lock.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree } from '../helpers/cluster.js';
import { KUSTOMIZE } from '../helpers/paths.js';

interface Lease {
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: { holderIdentity?: string | null };
}

/** Whether `pid` runs (a zombie, killed and not reaped yet, does not). */
const alive = async (pid: number) => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && !/^\d+ \(.*\) Z /.test(stat);
};

/** Polls `done` every 100 ms, `tries` times at most; throws `what` when it never holds. */
async function until(done: () => Promise<boolean> | boolean, what: string, tries = 600): Promise<void> {
  for (let i = 0; !(await done()); i++) {
    if (i > tries) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CM = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  x: "1"\n`;

describe('a cancelled run', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  const leases = async (ns: string) =>
    (await client.request<{ items: Lease[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`)).items;

  /** The CLI's apply of `app` in `root`, its inventory and lock in `ns`; `onStart` gets the process. */
  const apply = (root: string, ns: string, kustomize: string, extra: string[], onStart?: (c: ChildProcess) => void) =>
    runNode(
      'dist/cli.js',
      [
        'apply',
        '--path',
        'app',
        '--inventory-namespace',
        ns,
        '--kubeconfig',
        kubeconfigPath(),
        '--kustomize-path',
        kustomize,
        ...extra,
      ],
      { cwd: root, timeoutMs: 120_000, ...(onStart ? { onStart } : {}) },
    );

  it('SIGTERM during a kustomize build: kustomize and what it started are killed, the CLI ends by SIGTERM, the lock is free', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      // replacements: never built in process, so kustomize runs.
      'app/kustomization.yaml':
        `namespace: ${ns}\nresources: [cm.yaml]\nreplacements:\n` +
        '- source: {kind: ConfigMap, name: a, fieldPath: data.x}\n' +
        '  targets: [{select: {kind: ConfigMap, name: a}, fieldPaths: [data.y]}]\n',
      'app/cm.yaml': CM('a'),
    });
    // A kustomize that never finishes a build, and starts a process of its own; it writes both pids.
    const pids = join(root, '..', `pids-${ns}`);
    const standIn = join(root, '..', `kustomize-${ns}`);
    await writeFile(
      standIn,
      `#!/bin/sh\ncase "$1" in build) sleep 300 & echo $! >> ${pids}; echo $$ >> ${pids}; exec sleep 301;; *) exec ${KUSTOMIZE} "$@";; esac\n`,
    );
    await chmod(standIn, 0o755);
    let cli: ChildProcess | undefined;
    const started: number[] = [];
    const run = apply(root, ns, standIn, [], (c) => {
      cli = c;
    });
    await until(async () => {
      const text = await readFile(pids, 'utf8').catch(() => '');
      started.splice(0, started.length, ...text.split('\n').filter(Boolean).map(Number));
      return started.length === 2;
    }, 'kustomize started');
    for (const pid of started) expect(await alive(pid)).toBe(true);
    cli!.kill('SIGTERM');
    const result = await run;
    // Ended by the signal: a shell says 143 (128 + 15).
    expect(result.signal, result.stderr).toBe('SIGTERM');
    await until(async () => !(await alive(started[0]!)) && !(await alive(started[1]!)), 'kustomize killed', 100);
    // The lock taken before the build is not held any more.
    const held = (await leases(ns)).filter((l) => l.spec?.holderIdentity);
    expect(held).toEqual([]);
  }, 180_000);

  it('SIGTERM while it waits for health: the Lease is released, and the next run takes it at once', async () => {
    const ns = await freshNamespace(client);
    const stuck = `apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  replicas: 1
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: web, image: "nginx:1.27"}]
`;
    const root = await writeTree({
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml, stuck.yaml]\n`,
      'app/cm.yaml': CM('a'),
      'app/stuck.yaml': stuck,
    });
    let cli: ChildProcess | undefined;
    let out = '';
    const run = apply(root, ns, KUSTOMIZE, ['--wait', '--timeout', '5m'], (c) => {
      cli = c;
      c.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      c.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    });
    // Under the lock, the Deployment applied: the run is waiting for it.
    await until(async () => {
      const deployed = await client
        .request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/stuck`)
        .then(() => true)
        .catch(() => false);
      return deployed && (await leases(ns)).some((l) => l.spec?.holderIdentity);
    }, 'the Deployment applied under the lock');
    const [lease] = (await leases(ns)).filter((l) => l.spec?.holderIdentity);
    const holder = lease!.spec!.holderIdentity!;
    cli!.kill('SIGTERM');
    const result = await run;
    expect(result.signal, out).toBe('SIGTERM');
    const after = (await leases(ns)).find((l) => l.metadata.name === lease!.metadata.name)!;
    expect(after.spec?.holderIdentity ?? null).toBeNull();
    expect(after.metadata.annotations?.[LAST_HOLDER_ANNOTATION]).toBe(holder);

    // The next run (which no longer waits for the Deployment) gets the lock without waiting for it to expire.
    await writeFile(join(root, 'app/kustomization.yaml'), `namespace: ${ns}\nresources: [cm.yaml]\n`);
    const next = await apply(root, ns, KUSTOMIZE, ['--lock-timeout', '2s']);
    expect(next.code, next.stdout + next.stderr).toBe(0);
  }, 180_000);
});
