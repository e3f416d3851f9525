// Two short-lived test clusters (tier a) for spec.kubeConfig.configMapRef (issue 51): one publishes
// its service-account issuer (`testcluster up --publish-issuer`), the other trusts it through a
// structured AuthenticationConfiguration (`--authentication-config`). The binary is TESTCLUSTER
// (second-cluster.ts). Nothing is skipped: a binary without the options fails the test.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startSecondCluster, type SecondCluster } from './second-cluster.js';

export interface TestCluster extends SecondCluster {
  /** The API server's URL. */
  server: string;
  /** Its CA certificate (PEM). */
  ca: string;
}

/** Starts `testcluster up --tier a` with `args` (startSecondCluster), and reads its server and CA. */
export async function startCluster(name: string, args: readonly string[]): Promise<TestCluster> {
  const started = await startSecondCluster(name, args);
  const doc = parse(await readFile(started.kubeconfig, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  };
  const cluster = doc.clusters[0]!.cluster;
  return {
    ...started,
    server: cluster.server,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
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
