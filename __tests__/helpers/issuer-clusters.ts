// Two short-lived test clusters (tier a) for spec.kubeConfig.configMapRef (issue 51): one publishes
// its service-account issuer (`testcluster up --publish-issuer`), the other trusts it through a
// structured AuthenticationConfiguration (`--authentication-config`). The binary is TESTCLUSTER
// (test/cluster/bin), or the one KR_TESTCLUSTER_BIN names (an absolute path, for a build of
// test/cluster not linked yet). Nothing is skipped: a binary without the options fails the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'yaml';
import { ClusterClient } from '../../src/cluster/client.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { TESTCLUSTER } from './paths.js';

export interface TestCluster {
  kubeconfig: string;
  client: ClusterClient;
  /** The API server's URL. */
  server: string;
  /** Its CA certificate (PEM). */
  ca: string;
  stop(): Promise<void>;
}

const binary = () => process.env['KR_TESTCLUSTER_BIN'] || TESTCLUSTER;

/** Starts `testcluster up --tier a` with `args`; rejects with its stderr when it exits first. */
export async function startCluster(name: string, args: readonly string[]): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), `kr-${name}-`));
  const child: ChildProcess = spawn(binary(), ['up', '--tier', 'a', '--dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('KUBECONFIG=')) resolve(line.slice('KUBECONFIG='.length));
    });
    child.on('exit', (code) => {
      reject(new Error(`the ${name} test cluster (${binary()}) exited with ${code}:\n${stderr.join('')}`));
    });
  });
  const doc = parse(await readFile(kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  const cluster = doc.clusters[0]!.cluster;
  const client = new ClusterClient(await loadKubeConfig({ kind: 'path', path: kubeconfig }));
  return {
    kubeconfig,
    client,
    server: cluster.server,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
    stop: async () => {
      client.close();
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * An AuthenticationConfiguration (apiserver.config.k8s.io/v1) whose one JWT authenticator trusts
 * `issuer`'s service-account tokens for `audience`; their subject becomes the user `<prefix><sub>`.
 */
export async function trustIssuerConfig(issuer: TestCluster, audience: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-authn-'));
  const file = join(dir, 'authentication.json');
  const config = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: issuer.server, certificateAuthority: issuer.ca, audiences: [audience] },
        claimMappings: { username: { claim: 'sub', prefix } },
      },
    ],
  };
  await writeFile(file, JSON.stringify(config, null, 2));
  return file;
}
