// A second, short-lived test cluster (tier a: etcd and kube-apiserver) beside the shared one, for
// tests of more than one cluster: started by the test file, stopped when it is done.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ClusterClient } from '../../src/cluster/client.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { TESTCLUSTER } from './paths.js';

export interface SecondCluster {
  /** Its kubeconfig file. */
  kubeconfig: string;
  client: ClusterClient;
  /** Closes the client and stops the cluster. */
  stop(): Promise<void>;
}

/** Starts it; `args` are more flags of `testcluster up` (e.g. `--feature-gates`, `HPAScaleToZero=true`). */
export async function startSecondCluster(name: string, args: readonly string[] = []): Promise<SecondCluster> {
  const dir = await mkdtemp(join(tmpdir(), `kr-${name}-`));
  const child = spawn(TESTCLUSTER, ['up', '--tier', 'a', '--dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('KUBECONFIG=')) resolve(line.slice('KUBECONFIG='.length));
    });
    child.on('exit', (code) => {
      reject(new Error(`the ${name} test cluster (${TESTCLUSTER}) exited with ${code}:\n${stderr.join('')}`));
    });
  });
  const client = new ClusterClient(await loadKubeConfig({ kind: 'path', path: kubeconfig }));
  return {
    kubeconfig,
    client,
    stop: async () => {
      client.close();
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
