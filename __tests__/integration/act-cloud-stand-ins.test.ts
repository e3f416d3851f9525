// The cloud stand-ins of the README's EKS, GKE and AKS recipes (test/act/actions/cloud.mjs), run
// here as a job runs their steps: each login mints a ServiceAccount token on the test cluster and
// puts fake CLIs on PATH; the recipe's commands write the kubeconfig the real tools write; and this
// project's own client, given that kubeconfig, connects through the exec plugin as that
// ServiceAccount. Then what the real tools and GitHub refuse, the stand-ins refuse too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ClusterClient } from '../../src/cluster/client.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { kubeconfigPath } from '../helpers/cluster.js';
import { NODE, REPO } from '../helpers/paths.js';

const CLOUD = join(REPO, 'test/act/actions/cloud.mjs');

/** A job on a runner: its files, and the environment its steps get (GITHUB_ENV and GITHUB_PATH applied). */
class Job {
  readonly dir = mkdtempSync(join(tmpdir(), 'kr-cloud-job-'));
  readonly env: Record<string, string>;
  readonly calls = join(this.dir, 'calls.jsonl');
  constructor(idToken = true) {
    for (const d of ['temp', 'workspace', 'home']) mkdirSync(join(this.dir, d));
    for (const f of ['env', 'path', 'output']) writeFileSync(join(this.dir, f), '');
    this.env = {
      PATH: process.env['PATH'] ?? '',
      HOME: join(this.dir, 'home'),
      RUNNER_TEMP: join(this.dir, 'temp'),
      GITHUB_WORKSPACE: join(this.dir, 'workspace'),
      GITHUB_ENV: join(this.dir, 'env'),
      GITHUB_PATH: join(this.dir, 'path'),
      GITHUB_OUTPUT: join(this.dir, 'output'),
      KR_ACT_CLOUD_KUBECONFIG: kubeconfigPath(),
      KR_ACT_CLOUD_LOG: this.calls,
      ...(idToken
        ? { ACTIONS_ID_TOKEN_REQUEST_URL: 'http://127.0.0.1:9/token', ACTIONS_ID_TOKEN_REQUEST_TOKEN: 't' }
        : {}),
    };
  }

  /** Runs one step (a command with its IN_* inputs), then takes in what it wrote to GITHUB_ENV and GITHUB_PATH. */
  step(command: string[], inputs: Record<string, string> = {}): { status: number | null; out: string } {
    const [cmd = '', ...args] = command;
    const r = spawnSync(cmd === 'cloud.mjs' ? NODE : cmd, cmd === 'cloud.mjs' ? [CLOUD, ...args] : args, {
      encoding: 'utf8',
      cwd: this.env['GITHUB_WORKSPACE'],
      env: { ...this.env, ...inputs },
    });
    for (const line of readFileSync(this.env['GITHUB_ENV']!, 'utf8').split('\n').filter(Boolean)) {
      const at = line.indexOf('=');
      this.env[line.slice(0, at)] = line.slice(at + 1);
    }
    // Each line of GITHUB_PATH goes in front of what the job's PATH already is, as the runner does.
    for (const dir of readFileSync(this.env['GITHUB_PATH']!, 'utf8').split('\n').filter(Boolean)) {
      this.env['PATH'] = `${dir}:${this.env['PATH'] ?? ''}`;
    }
    writeFileSync(this.env['GITHUB_ENV']!, '');
    writeFileSync(this.env['GITHUB_PATH']!, '');
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  }

  ok(command: string[], inputs: Record<string, string> = {}): string {
    const r = this.step(command, inputs);
    expect(r.status, r.out).toBe(0);
    return r.out;
  }
}

const saved = process.env;
afterEach(() => {
  process.env = saved;
});

/** Who the cluster takes the kubeconfig's user for, through this project's client (exec plugin included). */
async function whoami(job: Job, kubeconfig: string): Promise<string> {
  // The action runs the plugin with its own environment, which the job's steps have changed.
  process.env = { ...saved, ...job.env };
  const client = new ClusterClient(await loadKubeConfig({ kind: 'path', path: kubeconfig }));
  const review = await client.request<{ status: { userInfo: { username: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
  );
  return review.status.userInfo.username;
}

const execOf = (file: string) => {
  const doc = parse(readFileSync(file, 'utf8')) as { users: { user: { exec?: Record<string, unknown> } }[] };
  expect(doc.users).toHaveLength(1);
  return doc.users[0]!.user;
};

const EXEC_API = 'client.authentication.k8s.io/v1beta1';

describe('the cloud recipes, step by step, connect through the exec plugin', () => {
  it('EKS: configure-aws-credentials, aws eks update-kubeconfig, then aws eks get-token', async () => {
    const job = new Job();
    job.ok(['cloud.mjs', 'login', 'aws'], {
      IN_AWS_REGION: 'eu-west-1',
      IN_ROLE_TO_ASSUME: 'arn:aws:iam::123456789012:role/deploy',
    });
    expect(job.env['AWS_SESSION_TOKEN']).toBeTruthy();
    job.ok(['aws', 'eks', 'update-kubeconfig', '--name', 'production', '--region', 'eu-west-1']);
    const file = join(job.env['HOME']!, '.kube/config');
    expect(execOf(file)).toEqual({
      exec: {
        apiVersion: EXEC_API,
        args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'production', '--output', 'json'],
        command: 'aws',
      },
    });
    expect(await whoami(job, file)).toBe('system:serviceaccount:kr-cloud:aws-deployer');
  });

  it('GKE: auth, setup-gcloud with the plugin, gcloud get-credentials, then gke-gcloud-auth-plugin', async () => {
    const job = new Job();
    job.ok(['cloud.mjs', 'login', 'gcp'], {
      IN_WORKLOAD_IDENTITY_PROVIDER: 'projects/123456789012/locations/global/workloadIdentityPools/github/providers/r',
      IN_PROJECT_ID: 'my-project',
    });
    expect(existsSync(job.env['GOOGLE_APPLICATION_CREDENTIALS']!)).toBe(true);
    job.ok(['cloud.mjs', 'install', 'gcloud']);
    job.ok(['cloud.mjs', 'install', 'gke-gcloud-auth-plugin']);
    job.ok(['gcloud', 'container', 'clusters', 'get-credentials', 'production', '--location', 'europe-west1']);
    const file = join(job.env['HOME']!, '.kube/config');
    expect(execOf(file)).toMatchObject({
      exec: { apiVersion: EXEC_API, command: 'gke-gcloud-auth-plugin', provideClusterInfo: true },
    });
    expect((parse(readFileSync(file, 'utf8')) as { 'current-context': string })['current-context']).toBe(
      'gke_my-project_europe-west1_production',
    );
    expect(await whoami(job, file)).toBe('system:serviceaccount:kr-cloud:gcp-deployer');
  });

  it('AKS: azure/login, use-kubelogin, aks-set-context with use-kubelogin, then kubelogin get-token', async () => {
    const job = new Job();
    job.ok(['cloud.mjs', 'login', 'azure'], {
      IN_CLIENT_ID: '0b3c6a52-5d0e-4b6f-9a59-2f6c1d7e8a90',
      IN_TENANT_ID: '7f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
      IN_SUBSCRIPTION_ID: '11111111-2222-4333-8444-555555555555',
    });
    job.ok(['cloud.mjs', 'install', 'kubelogin']);
    job.ok(['cloud.mjs', 'aks-set-context'], {
      IN_RESOURCE_GROUP: 'rg',
      IN_CLUSTER_NAME: 'production',
      IN_USE_KUBELOGIN: 'true',
    });
    const file = job.env['KUBECONFIG']!;
    expect(file.startsWith(job.env['RUNNER_TEMP']!)).toBe(true);
    expect(execOf(file)).toMatchObject({
      exec: {
        apiVersion: EXEC_API,
        command: 'kubelogin',
        args: ['get-token', '--login', 'azurecli', '--server-id', '6dae42f8-4368-4678-94ff-3960e28e3630'],
      },
    });
    expect(await whoami(job, file)).toBe('system:serviceaccount:kr-cloud:azure-deployer');
    const calls = readFileSync(job.calls, 'utf8').trim().split('\n');
    expect(calls.map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(['az', 'kubelogin', 'kubelogin']);
  });
});

describe('the cloud stand-ins refuse what the real tools refuse', () => {
  const aws = { IN_AWS_REGION: 'eu-west-1', IN_ROLE_TO_ASSUME: 'arn:aws:iam::123456789012:role/deploy' };
  const azure = {
    IN_CLIENT_ID: '0b3c6a52-5d0e-4b6f-9a59-2f6c1d7e8a90',
    IN_TENANT_ID: '7f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
    IN_SUBSCRIPTION_ID: '11111111-2222-4333-8444-555555555555',
  };
  const wip = 'projects/123456789012/locations/global/workloadIdentityPools/github/providers/r';
  it.each<[string, (job: Job) => { status: number | null; out: string }, RegExp, boolean?]>([
    [
      'a role that is not an ARN',
      (j) => j.step(['cloud.mjs', 'login', 'aws'], { ...aws, IN_ROLE_TO_ASSUME: 'deploy' }),
      /is not a role ARN/,
    ],
    [
      'no region',
      (j) => j.step(['cloud.mjs', 'login', 'aws'], { ...aws, IN_AWS_REGION: '' }),
      /Input required and not supplied: aws-region/,
    ],
    [
      'a long-lived key',
      (j) => j.step(['cloud.mjs', 'login', 'aws'], { ...aws, IN_AWS_ACCESS_KEY_ID: 'AKIA' }),
      /no aws-access-key-id/,
    ],
    ['a job without id-token: write', (j) => j.step(['cloud.mjs', 'login', 'aws'], aws), /id-token: write/, false],
    [
      "aws eks get-token without the login's credentials in its environment",
      (j) => {
        j.ok(['cloud.mjs', 'login', 'aws'], aws);
        delete j.env['AWS_SESSION_TOKEN'];
        return j.step(['aws', '--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'p']);
      },
      /Unable to locate credentials: AWS_ACCESS_KEY_ID \/ AWS_SESSION_TOKEN are not the ones the login exported/,
    ],
    [
      "a pool name that is not the provider's full name",
      (j) => j.step(['cloud.mjs', 'login', 'gcp'], { IN_WORKLOAD_IDENTITY_PROVIDER: 'github' }),
      /full name/,
    ],
    [
      'gcloud without the credentials file auth exported',
      (j) => {
        j.ok(['cloud.mjs', 'login', 'gcp'], { IN_WORKLOAD_IDENTITY_PROVIDER: wip, IN_PROJECT_ID: 'p' });
        j.ok(['cloud.mjs', 'install', 'gcloud']);
        delete j.env['CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE'];
        return j.step(['gcloud', 'container', 'clusters', 'get-credentials', 'c', '--location', 'l']);
      },
      /CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE is not the auth step's file/,
    ],
    [
      'azure/login without a subscription',
      (j) => j.step(['cloud.mjs', 'login', 'azure'], { ...azure, IN_SUBSCRIPTION_ID: '' }),
      /subscription-id/,
    ],
    [
      'an AKS kubeconfig left with devicecode login',
      (j) => {
        j.ok(['cloud.mjs', 'login', 'azure'], azure);
        j.ok(['cloud.mjs', 'install', 'kubelogin']);
        const f = join(j.env['RUNNER_TEMP']!, 'kc');
        j.ok(['az', 'aks', 'get-credentials', '-g', 'rg', '-n', 'c', '-f', f]);
        const args = (execOf(f).exec as { args: string[] }).args;
        return j.step(['kubelogin', ...args]);
      },
      /devicecode login needs a person/,
    ],
    [
      'admin credentials of a cluster without local accounts',
      (j) => {
        j.ok(['cloud.mjs', 'login', 'azure'], azure);
        return j.step(['cloud.mjs', 'aks-set-context'], {
          IN_RESOURCE_GROUP: 'rg',
          IN_CLUSTER_NAME: 'c',
          IN_ADMIN: 'true',
        });
      },
      /disable local accounts/,
    ],
  ])('%s', (_, steps, refusal, idToken = true) => {
    const r = steps(new Job(idToken));
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(refusal);
  });
});
