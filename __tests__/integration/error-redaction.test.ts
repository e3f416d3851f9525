// Values the API server quotes back in its errors (issue 51; Flux v1.9.6+ redacts them): a SOPS value
// decrypted to a number where a string belongs (a type-conversion error prints it unquoted), a value
// substituted from a Secret into a field the server refuses (a validation error quotes it), and one
// substituted from a ConfigMap (Flux redacts every substituteFrom value). On the real cluster, with
// real sops and age, through the bundled action (apply on a push, preview on a pull request) and the
// CLI: no surface (log, summary, outputs, PR comment, check run, the inventory's message) shows them,
// and the errors still name the field and the reason.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree } from '../helpers/cluster.js';
import { initRepository } from '../helpers/git-repos.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE, NODE, REPO, TOOLS } from '../helpers/paths.js';

const run = promisify(execFile);

/** The values under test: short ones (no mask or scrub takes them) and long ones. */
const V = {
  /** Decrypted by SOPS as an int, into a Secret's stringData (a string belongs there). */
  sopsShort: 719,
  sopsLong: 86753091,
  /** Substituted from a Secret into a Deployment's imagePullPolicy. */
  fromSecret: 'Qz7xPullPolicy',
  /** Substituted from a ConfigMap into a Service port's protocol. */
  fromConfigMap: 'qzv',
};

/** Where each value would show if it leaked: the forms the server prints. */
const LEAKS: readonly RegExp[] = [
  new RegExp(`Value:${V.sopsShort}\\b`),
  new RegExp(`${V.sopsLong}`),
  new RegExp(Buffer.from(String(V.sopsLong)).toString('base64').replace(/=+$/, '')),
  new RegExp(V.fromSecret, 'i'),
  new RegExp(`["']${V.fromConfigMap}["']`),
];

function leaks(text: string): string[] {
  const shown = text
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  return LEAKS.flatMap((re) => {
    const m = re.exec(shown);
    return m ? [`${String(re)}: ${shown.slice(Math.max(0, m.index - 80), m.index + 40)}`] : [];
  });
}

const ENV = (fake: FakeGitHub) => ({
  GITHUB_REPOSITORY: 'org/repo',
  GITHUB_API_URL: fake.url,
  GITHUB_SERVER_URL: 'https://github.example',
  GITHUB_RUN_ID: '51',
  GITHUB_SHA: 'merge0000000000000000000000000000000000aa',
});

describe('values the API server quotes back are redacted everywhere', () => {
  let client: ClusterClient;
  let fake: FakeGitHub;
  let key: { identity: string; recipient: string };
  let script: { index: string; cli: string };

  beforeAll(async () => {
    client = await adminClient();
    const dir = await mkdtemp(join(tmpdir(), 'kr-age-'));
    await run(join(TOOLS, 'age-keygen'), ['-o', join(dir, 'key.txt')]);
    const identity = await readFile(join(dir, 'key.txt'), 'utf8');
    key = { identity, recipient: /# public key: (age1\S+)/.exec(identity)![1]! };
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    const given = process.env['KR_ACTION_SCRIPT'];
    if (given) {
      script = { index: given, cli: join(given, '..', 'cli.js') };
    } else {
      const out = await mkdtemp(join(tmpdir(), 'kr-bundle-'));
      await run(NODE, [join(REPO, 'scripts/bundle.mjs'), out], { cwd: REPO });
      script = { index: join(out, 'index.js'), cli: join(out, 'cli.js') };
    }
  }, 120_000);
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  async function sopsEncrypt(text: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'kr-sops-'));
    await writeFile(join(dir, 'plain.yaml'), text);
    const { stdout } = await run(
      join(TOOLS, 'sops'),
      ['--encrypt', '--age', key.recipient, '--encrypted-regex', '^(data|stringData)$', join(dir, 'plain.yaml')],
      { cwd: dir },
    );
    return stdout;
  }

  async function tree(ns: string): Promise<Record<string, string>> {
    const typed = await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata: {name: typed, namespace: ${ns}}\nstringData:\n  port: ${V.sopsShort}\n`,
    );
    const typedLong = await sopsEncrypt(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed-long, namespace: ${ns}}\ndata:\n  n: ${V.sopsLong}\n`,
    );
    expect(typed).toContain('type:int');
    return {
      'clusters/app.yaml': kustomizationYaml({
        namespace: ns,
        path: './deploy',
        spec: `decryption:\n  provider: sops\npostBuild:\n  substituteFrom:\n    - {kind: Secret, name: vars}\n    - {kind: ConfigMap, name: plain-vars}`,
      }),
      'deploy/kustomization.yaml': 'resources: [typed.yaml, typed-long.yaml, refused.yaml]\n',
      'deploy/typed.yaml': typed,
      'deploy/typed-long.yaml': typedLong,
      'deploy/refused.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: c, image: 'registry.k8s.io/pause:3.10', imagePullPolicy: "\${pull}"}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports:
  - {port: 80, protocol: "\${proto}"}
`,
    };
  }

  async function setUp(): Promise<{ ns: string; root: string }> {
    const ns = await freshNamespace(client);
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { metadata: { name: 'vars' }, stringData: { pull: V.fromSecret } },
    });
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'plain-vars' }, data: { proto: V.fromConfigMap } },
    });
    const root = await writeTree(await tree(ns));
    return { ns, root };
  }

  const action = (root: string, mode: string, base?: string): Promise<ActionResult> => {
    const event = base
      ? {
          name: 'pull_request',
          payload: {
            action: 'synchronize',
            number: 51,
            pull_request: {
              number: 51,
              base: { sha: base },
              head: { sha: 'head000000000000000000000000000000000bb', repo: { full_name: 'org/repo' } },
            },
            repository: { full_name: 'org/repo' },
          },
        }
      : undefined;
    return runAction(
      root,
      {
        kubeconfig: kubeconfigPath(),
        'sops-age-key': key.identity,
        'github-token': 'tok-rw',
        kustomizations: 'clusters/app.yaml',
        mode,
      },
      { script: script.index, env: ENV(fake), ...(event ? { event } : {}) },
    );
  };

  const bytes = (res: ActionResult, comments: number, checks: number) =>
    [
      res.stdout,
      res.stderr,
      res.summary,
      JSON.stringify(res.outputs),
      JSON.stringify(fake.comments.slice(comments)),
      JSON.stringify(fake.checkRuns.slice(checks)),
    ].join('\n');

  /** The errors still say which field was refused and why: the refusals happened. */
  function refusals(text: string): void {
    expect(text).toMatch(/\.data\.port: expected string/);
    expect(text).toMatch(/\.data\.n: expected string/);
    expect(text).toMatch(/imagePullPolicy: Unsupported value/);
    expect(text).toMatch(/protocol: Unsupported value/);
  }

  it('apply (a push) and preview (a pull request): every surface, and the inventory', async () => {
    const { ns, root } = await setUp();
    const base = initRepository(root);
    const surfaces: Record<string, string> = {};

    let comments = fake.comments.length;
    let checks = fake.checkRuns.length;
    const applied = await action(root, 'apply');
    expect(applied.code, applied.stdout + applied.stderr).toBe(2);
    surfaces['action apply'] = bytes(applied, comments, checks);
    refusals(applied.outputs['report'] ?? '');
    // A trusted run keeps the server's wording, values redacted where it shows them.
    expect(applied.outputs['report']).toContain('&value.valueUnstructured{Value:***}');
    expect(applied.outputs['report']).toContain('protocol: Unsupported value: \\"***\\"');

    comments = fake.comments.length;
    checks = fake.checkRuns.length;
    const preview = await action(root, 'preview', base);
    expect(preview.code, preview.stdout + preview.stderr).toBe(2);
    surfaces['action preview'] = bytes(preview, comments, checks);
    refusals(surfaces['action preview']);
    // A pull request's run: an object holding secret-derived values shows no value the server quoted.
    expect(preview.outputs['report']).toContain('.data.port: expected string, got (value hidden');
    expect(fake.comments.length).toBeGreaterThan(comments);

    const keyFile = join(root, '..', `age-${Math.random().toString(36).slice(2)}.txt`);
    await writeFile(keyFile, key.identity);
    for (const mode of ['diff', 'apply']) {
      const res = await runNode(
        script.cli,
        [mode, '--kubeconfig', kubeconfigPath(), '--kustomizations', 'clusters/app.yaml'].concat(
          ['--kustomize-path', KUSTOMIZE, '--sops-age-key', keyFile],
          ['--output', 'json'],
        ),
        { cwd: root, env: { ...process.env, GITHUB_REPOSITORY: 'org/repo' } },
      );
      expect(res.code, res.stderr).toBe(2);
      surfaces[`cli ${mode}`] = res.stdout + res.stderr;
    }

    const inventories = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { labelSelector: 'kustomize-reconcile/inventory=true' },
    });
    surfaces['inventory'] = JSON.stringify(inventories.items);

    const found = Object.fromEntries(
      Object.entries(surfaces)
        .map(([where, text]) => [where, leaks(text)] as const)
        .filter(([, l]) => l.length > 0),
    );
    expect(found).toEqual({});
  }, 300_000);
});
