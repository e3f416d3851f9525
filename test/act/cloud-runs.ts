// The README's cloud recipes (EKS, GKE, AKS through GitHub OIDC), each run under act as printed
// against the first test cluster: the login actions are stand-ins (test/act/actions/cloud.mjs) that
// mint a ServiceAccount token there and put fake aws, gcloud, gke-gcloud-auth-plugin, az and
// kubelogin commands on the job's PATH; the workflow's own steps (`aws eks update-kubeconfig`,
// `gcloud container clusters get-credentials`, aks-set-context's `kubelogin convert-kubeconfig`)
// write the kubeconfig the real tools write, and the action connects through its exec plugin.
// Then what must fail does: a recipe without `id-token: write`, and an AKS kubeconfig left unconverted
// (kubelogin's devicecode login, which needs a person).
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { workflowBlocks } from '../../scripts/workflows.mjs';
import { REPO, Origin } from './act.ts';
import { kubeFrom } from './kube.ts';
import { check, jobsAre, pushEvent, ZERO, type Checked, type Env } from './readme-runs.ts';
import { grantsIdToken } from './results.ts';

type Provider = 'eks' | 'gke' | 'aks';

interface Recipe {
  provider: Provider;
  /** The `uses:` that marks the README block. */
  login: string;
  /** The exec plugin the written kubeconfig names, and the arguments it is run with. */
  plugin: string;
  args: string[];
  /** The command that wrote the kubeconfig, as the log names it. */
  writer: string;
}

const RECIPES: Recipe[] = [
  {
    provider: 'eks',
    login: 'aws-actions/configure-aws-credentials@',
    plugin: 'aws',
    args: ['--region', 'eu-west-1', 'eks', 'get-token', '--cluster-name', 'production', '--output', 'json'],
    writer: 'aws',
  },
  {
    provider: 'gke',
    login: 'google-github-actions/auth@',
    plugin: 'gke-gcloud-auth-plugin',
    args: [],
    writer: 'gcloud',
  },
  {
    provider: 'aks',
    login: 'azure/login@',
    plugin: 'kubelogin',
    args: ['get-token', '--login', 'azurecli', '--server-id', '6dae42f8-4368-4678-94ff-3960e28e3630'],
    writer: 'kubelogin',
  },
];

/** The README's recipe blocks, by provider. */
export function cloudRecipes(): Record<Provider, { yaml: string; at: string }> {
  const blocks = workflowBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
  const out = {} as Record<Provider, { yaml: string; at: string }>;
  for (const r of RECIPES) {
    const b = blocks.find((x) => x.yaml.includes(`uses: ${r.login}`));
    if (!b) throw new Error(`README.md prints no ${r.provider} recipe any more: update test/act/cloud-runs.ts`);
    out[r.provider] = { yaml: b.yaml, at: `README.md:${b.line}` };
  }
  return out;
}

/** A repository with one Kustomization under clusters/production/, as the recipes name it. */
function tree(p: Provider) {
  return {
    'clusters/production/app.yaml': [
      'apiVersion: kustomize.toolkit.fluxcd.io/v1',
      'kind: Kustomization',
      'metadata:',
      `  name: cloud-${p}`,
      '  namespace: flux-system',
      'spec:',
      '  interval: 10m',
      `  path: ./apps/${p}`,
      '  prune: true',
      '  sourceRef:',
      '    kind: GitRepository',
      '    name: flux-system',
      '',
    ].join('\n'),
    [`apps/${p}/kustomization.yaml`]: 'resources:\n  - namespace.yaml\n  - settings.yaml\n',
    [`apps/${p}/namespace.yaml`]: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cloud-${p}\n`,
    [`apps/${p}/settings.yaml`]: [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: settings',
      `  namespace: cloud-${p}`,
      'data:',
      `  reached-through: ${p}`,
      '',
    ].join('\n'),
  };
}

interface LogLine {
  tool: string;
  args: string[];
  execInfo?: { apiVersion?: string } | null;
  wrote?: string;
}

export async function cloudRuns(env: Env, done: (c: Checked) => void): Promise<void> {
  const recipes = cloudRecipes();
  const [one] = env.clusters;
  if (!one) throw new Error('a test cluster is needed');
  const kube = kubeFrom(one.kubeconfig);
  await kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flux-system' } });

  const run = async (p: Provider, workflow: string) => {
    const origin = new Origin(env.root, `kr-test/cloud-${p}-${env.nextRunId()}`);
    const sha = origin.commit(tree(p), `${p} recipe`);
    const dir = mkdtempSync(join(env.root, `cloud-${p}-`));
    const cloudLog = join(dir, 'calls.jsonl');
    // HOME: where `aws` and `gcloud` write ~/.kube/config, and where the action looks: a runner's own.
    const home = join(dir, 'home');
    const idToken: Record<string, string> = grantsIdToken(workflow)
      ? { ACTIONS_ID_TOKEN_REQUEST_URL: `${env.fake.url}/oidc/token`, ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-act' }
      : {};
    const r = await env.act({
      workflow,
      event: 'push',
      payload: pushEvent(origin.fullName, ZERO, sha),
      origin,
      sha,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(workflow) },
      vars: {
        AZURE_CLIENT_ID: '0b3c6a52-5d0e-4b6f-9a59-2f6c1d7e8a90',
        AZURE_TENANT_ID: '7f1e2d3c-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
        AZURE_SUBSCRIPTION_ID: '11111111-2222-4333-8444-555555555555',
      },
      env: { KR_ACT_CLOUD_KUBECONFIG: one.kubeconfig, KR_ACT_CLOUD_LOG: cloudLog, HOME: home, ...idToken },
    });
    const calls = existsSync(cloudLog)
      ? readFileSync(cloudLog, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as LogLine)
      : [];
    return { run: r, calls, home };
  };

  for (const recipe of RECIPES) {
    const { yaml, at } = recipes[recipe.provider];
    const { run: r, calls, home } = await run(recipe.provider, yaml);
    const problems = jobsAre(r, { apply: 1 });
    const cm = await kube.get(`/api/v1/namespaces/cloud-${recipe.provider}/configmaps/settings`);
    check(
      problems,
      (cm?.['data'] as Record<string, string> | undefined)?.['reached-through'] === recipe.provider,
      `ConfigMap cloud-${recipe.provider}/settings was not applied`,
    );
    check(
      problems,
      calls.some((c) => c.tool === recipe.writer && c.wrote !== undefined),
      `${recipe.writer} did not write the kubeconfig`,
    );
    // The action ran the plugin (KUBERNETES_EXEC_INFO is set by an exec credential client only),
    // with the arguments the real tool writes into the kubeconfig.
    const plugin = calls.filter((c) => c.tool === recipe.plugin && c.execInfo);
    check(problems, plugin.length > 0, `the action did not run the exec plugin ${recipe.plugin}`);
    check(
      problems,
      plugin.every((c) => JSON.stringify(c.args) === JSON.stringify(recipe.args)),
      `${recipe.plugin} ran with ${JSON.stringify(plugin[0]?.args)}, expected ${JSON.stringify(recipe.args)}`,
    );
    check(
      problems,
      plugin.every((c) => c.execInfo?.apiVersion === 'client.authentication.k8s.io/v1beta1'),
      `KUBERNETES_EXEC_INFO did not carry the kubeconfig's apiVersion client.authentication.k8s.io/v1beta1`,
    );
    // The kubeconfig holds no credential of its own: only the plugin could have connected.
    const written = calls.find((c) => c.wrote !== undefined)?.wrote;
    const kubeconfigFile = recipe.provider === 'aks' ? undefined : (written ?? join(home, '.kube/config'));
    if (kubeconfigFile && existsSync(kubeconfigFile)) {
      const doc = parse(readFileSync(kubeconfigFile, 'utf8')) as { users: { user: Record<string, unknown> }[] };
      check(
        problems,
        doc.users.every((u) => Object.keys(u.user).join() === 'exec'),
        `${kubeconfigFile}: a user with more than an exec plugin`,
      );
    }
    done({ what: `${at} (${recipe.provider} recipe) on push, through ${recipe.plugin}`, run: r, problems });
  }

  // Without `id-token: write` GitHub gives the job no OIDC token: the login step fails, and says why.
  {
    const { yaml, at } = recipes.eks;
    const workflow = yaml.replace(/^ *id-token: write.*\n/m, '');
    const { run: r } = await run('eks', workflow);
    const problems = jobsAre(r, { apply: 1 }, 'failure');
    check(problems, r.log.includes('id-token: write'), 'the failed login does not name `id-token: write`');
    done({ what: `${at} (eks recipe) without id-token: write: the login fails`, run: r, problems });
  }
  // aks-set-context without use-kubelogin leaves kubelogin's devicecode login, which needs a
  // person: the action's error names the user and the plugin, with the plugin's stderr.
  {
    const { yaml, at } = recipes.aks;
    const workflow = yaml.replace(/^ *use-kubelogin: true.*\n/m, '');
    const { run: r } = await run('aks', workflow);
    const problems = jobsAre(r, { apply: 1 }, 'failure');
    const out = r.jobs.flatMap((j) => j.output).join('\n');
    check(
      problems,
      /the exec credential plugin "kubelogin" exited with code \d+: .*devicecode/.test(out),
      'the failure does not name the kubelogin plugin and its devicecode refusal',
    );
    done({ what: `${at} (aks recipe) without use-kubelogin: devicecode refused by name`, run: r, problems });
  }
}
