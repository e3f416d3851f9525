// Decrypted and substituted secret values never leave the cluster path (issue #17, findings 4 and 11):
// on the real cluster, with real sops and kustomize, through the action (a fresh bundle of src/, or
// dist/ with KR_SECRETS_BUNDLE=dist to see the defects), the CLI and the fake GitHub API. Every byte of
// every surface is searched for the canary values and their base64, JSON-escaped and upper-cased forms.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree, type RunResult } from '../helpers/cluster.js';
import { commitAll, initRepository } from '../helpers/git-repos.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE, NODE, REPO, TOOLS } from '../helpers/paths.js';

const run = promisify(execFile);

/** Every canary starts with this; searched case-insensitively (so `${v^^}` and `${v:0:4}` are caught). */
const MARK = 'Qz7x';

async function ageKey(): Promise<{ identity: string; recipient: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-age-'));
  await run(join(TOOLS, 'age-keygen'), ['-o', join(dir, 'key.txt')]);
  const identity = await readFile(join(dir, 'key.txt'), 'utf8');
  return { identity, recipient: /# public key: (age1\S+)/.exec(identity)![1]! };
}

async function sopsEncrypt(text: string, recipient: string, type: 'yaml' | 'dotenv', regex?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-sops-'));
  const file = join(dir, `plain.${type === 'yaml' ? 'yaml' : 'env'}`);
  await writeFile(file, text);
  const extra = regex ? ['--encrypted-regex', regex] : [];
  const { stdout } = await run(
    join(TOOLS, 'sops'),
    ['--encrypt', '--age', recipient, '--input-type', type, '--output-type', type, ...extra, file],
    { cwd: dir },
  );
  return stdout;
}

/** The forms of `values` that must appear nowhere: as is, upper-cased, JSON-escaped, base64 of each. */
function forms(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    for (const x of [v, v.replaceAll('\n', ''), ...v.split('\n')]) {
      if (x.length < 4) continue;
      out.add(x.toUpperCase());
      out.add(JSON.stringify(x).slice(1, -1));
      out.add(Buffer.from(x).toString('base64'));
      out.add(Buffer.from(x.toUpperCase()).toString('base64'));
    }
  }
  return [...out];
}

/**
 * The places in `text` where a secret shows: the mark in any case, and every form of `values`.
 * `::add-mask::` lines are the runner's masking commands, never shown.
 */
function leaks(text: string, values: readonly string[]): string[] {
  const shown = text
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  const upper = shown.toUpperCase();
  const found: string[] = [];
  for (const f of [MARK, ...forms(values)]) {
    const plain = !/^[A-Za-z0-9+/]+=*$/.test(f) || f.toUpperCase().includes(MARK.toUpperCase());
    const at = plain ? upper.indexOf(f.toUpperCase()) : shown.indexOf(f);
    if (at >= 0) found.push(shown.slice(Math.max(0, at - 60), at + 40));
  }
  return [...new Set(found)];
}

const REPO_ENV = (fake: FakeGitHub) => ({
  GITHUB_REPOSITORY: 'org/repo',
  GITHUB_API_URL: fake.url,
  GITHUB_SERVER_URL: 'https://github.example',
  GITHUB_RUN_ID: '42',
  GITHUB_SHA: 'merge0000000000000000000000000000000000aa',
});

const PR_EVENT = {
  name: 'pull_request',
  payload: {
    action: 'synchronize',
    number: 17,
    pull_request: {
      number: 17,
      head: { sha: 'head000000000000000000000000000000000bb', repo: { full_name: 'org/repo' } },
    },
    repository: { full_name: 'org/repo' },
  },
};

/** The Kustomization app in `ns` building ./deploy, decrypting with SOPS, with `postBuild`'s lines. */
const ksFile = (ns: string, postBuild: string) =>
  kustomizationYaml({
    namespace: ns,
    path: './deploy',
    prune: true,
    spec: `decryption:\n  provider: sops\n${postBuild}`,
  });

const SUBSTITUTE_FROM = `postBuild:
  substituteFrom:
    - {kind: Secret, name: subst-vars}
`;

describe('secret values never leave the cluster path', () => {
  let client: ClusterClient;
  let fake: FakeGitHub;
  let key: { identity: string; recipient: string };
  let script: { index: string; cli: string };
  beforeAll(async () => {
    client = await adminClient();
    key = await ageKey();
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    if (process.env['KR_SECRETS_BUNDLE'] === 'dist') {
      script = { index: join(REPO, 'dist/index.js'), cli: join(REPO, 'dist/cli.js') };
    } else {
      const dir = await mkdtemp(join(tmpdir(), 'kr-bundle-'));
      await run(NODE, [join(REPO, 'scripts/bundle.mjs'), dir], { cwd: REPO });
      script = { index: join(dir, 'index.js'), cli: join(dir, 'cli.js') };
    }
  }, 120_000);
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  /**
   * The bundled action on `workspace`. A run that is not a pull request's commits the tree as it is
   * (the branch the cluster follows); a pull request's run has that commit as its base, as a PR's
   * checkout with its history does, so the Kustomizations the base defines keep their Secrets.
   */
  const bases = new Map<string, string>();
  const action = (workspace: string, inputs: Record<string, string>, pr = false): Promise<ActionResult> => {
    if (!pr)
      bases.set(
        workspace,
        existsSync(join(workspace, '.git')) ? commitAll(workspace, 'applied') : initRepository(workspace),
      );
    const base = bases.get(workspace);
    const event = {
      ...PR_EVENT,
      payload: {
        ...PR_EVENT.payload,
        pull_request: { ...PR_EVENT.payload.pull_request, ...(base ? { base: { sha: base } } : {}) },
      },
    };
    return runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), 'sops-age-key': key.identity, 'github-token': 'tok-rw', ...inputs },
      { script: script.index, env: REPO_ENV(fake), ...(pr ? { event } : {}) },
    );
  };

  async function cli(root: string, args: string[]): Promise<RunResult> {
    const keyFile = join(root, '..', `age-${Math.random().toString(36).slice(2)}.txt`);
    await writeFile(keyFile, key.identity);
    // The same repository as the action's runs (REPO_ENV), as a developer's clone is.
    return runNode(script.cli, [...args, '--kustomize-path', KUSTOMIZE, '--sops-age-key', keyFile], {
      cwd: root,
      env: { ...process.env, GITHUB_REPOSITORY: 'org/repo', GITHUB_SERVER_URL: 'https://github.example' },
    });
  }

  /** All bytes an action run left anywhere: log, outputs, summary, and the comments and check runs it posted. */
  function actionBytes(res: ActionResult, commentsBefore: number, checksBefore: number): string {
    return [
      res.stdout,
      res.stderr,
      res.summary,
      JSON.stringify(res.outputs),
      JSON.stringify(fake.comments.slice(commentsBefore)),
      JSON.stringify(fake.checkRuns.slice(checksBefore)),
    ].join('\n');
  }

  /** The inventory ConfigMaps' bytes; `written` says whether the run must have written one. */
  async function inventoryBytes(ns: string, written = true): Promise<string> {
    const list = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { labelSelector: 'kustomize-reconcile/inventory=true' },
    });
    expect(list.items.length > 0).toBe(written);
    return JSON.stringify(list.items);
  }

  async function putSecret(ns: string, name: string, data: Record<string, string>): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, stringData: data };
    await client
      .request('DELETE', `/api/v1/namespaces/${ns}/secrets/${name}`)
      .catch(() => undefined)
      .then(() => client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body }));
  }

  /** The canary tree: a SOPS ConfigMap, a SOPS Secret, a ConfigMap filled from substituteFrom and secret-vars. */
  async function canaryTree(ns: string, v: string): Promise<Record<string, string>> {
    const sopsCm = await sopsEncrypt(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sops-cm\n  namespace: ${ns}\ndata:\n  token: ${MARK}-sopscm-${v}\n  plain: visible-${v}\n`,
      key.recipient,
      'yaml',
      '^token$',
    );
    const sopsSecret = await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: sops-secret\n  namespace: ${ns}\nstringData:\n  password: ${MARK}-sopssec-${v}\n`,
      key.recipient,
      'yaml',
      '^(data|stringData)$',
    );
    return {
      'clusters/app.yaml': ksFile(ns, SUBSTITUTE_FROM),
      'deploy/kustomization.yaml': 'resources: [sops-cm.yaml, sops-secret.yaml, subst.yaml]\n',
      'deploy/sops-cm.yaml': sopsCm,
      'deploy/sops-secret.yaml': sopsSecret,
      'deploy/subst.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: subst-cm
  namespace: ${ns}
data:
  from_secret: "\${from_secret}"
  from_var: "\${sv}"
  upper: "\${sv^^}"
  prefix: "\${sv:0:4}"
  replaced: "\${sv/secvar/SECVAR}"
  plain: "visible-${v}"
`,
    };
  }

  const secretVars = (v: string) => `sv: "${MARK}-secvar-${v}\\nline2-${v}"\n`;
  const canaries = (v: string) => [
    `${MARK}-sopscm-${v}`,
    `${MARK}-sopssec-${v}`,
    `${MARK}-subfrom-${v}`,
    `${MARK}-secvar-${v}\nline2-${v}`,
  ];

  it('canary: no mode and no surface shows a secret value, of this run or the last', async () => {
    const ns = await freshNamespace(client);
    await putSecret(ns, 'subst-vars', { from_secret: `${MARK}-subfrom-a` });
    const root = await writeTree(await canaryTree(ns, 'a'));
    const inputs = (v: string) => ({ kustomizations: 'clusters/app.yaml', 'secret-vars': secretVars(v) });

    const first = await action(root, { ...inputs('a'), mode: 'apply' });
    expect(first.code, first.stdout + first.stderr).toBe(0);

    // Every value rotates: the PR's run sees new values, the cluster holds the old ones.
    await putSecret(ns, 'subst-vars', { from_secret: `${MARK}-subfrom-b` });
    for (const [file, text] of Object.entries(await canaryTree(ns, 'b'))) await writeFile(join(root, file), text);
    const values = [...canaries('a'), ...canaries('b')];
    const surfaces: Record<string, string> = {};

    const comments = fake.comments.length;
    const checks = fake.checkRuns.length;
    const preview = await action(root, { ...inputs('b'), mode: 'preview' }, true);
    expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    surfaces['action preview'] = actionBytes(preview, comments, checks);
    // The diff is there, masked: the ConfigMap's secret field changed.
    expect(preview.outputs['changeset']).toContain('*** (before)');
    expect(preview.outputs['changeset']).toContain('visible-b');
    expect(fake.comments.length).toBeGreaterThan(comments);
    const drift = await action(root, { ...inputs('b'), mode: 'drift' });
    expect(drift.code, drift.stdout + drift.stderr).toBe(1);
    surfaces['action drift'] = actionBytes(drift, comments, checks);

    // The CLI has no secret-vars (a --var is the caller's own, shown): the live fields the action filled
    // from secret-vars stay masked by what the inventory recorded.
    const vars = ['--var', 'sv=cli-plain-value'];
    const kube = ['--kubeconfig', kubeconfigPath(), '--kustomizations', 'clusters/app.yaml', ...vars];
    for (const mode of ['build', 'diff']) {
      for (const output of ['text', 'json']) {
        const res = await cli(root, [mode, ...kube, '--output', output]);
        expect(res.code, res.stderr + res.stdout).toBeLessThan(2);
        surfaces[`cli ${mode} ${output}`] = res.stdout + res.stderr;
      }
    }
    const applied = await cli(root, ['apply', ...kube, '--output', 'json']);
    expect(applied.code, applied.stderr).toBe(0);
    surfaces['cli apply json'] = applied.stdout + applied.stderr;

    // Back to the old values through the action, then the new ones again through the CLI's text output.
    await putSecret(ns, 'subst-vars', { from_secret: `${MARK}-subfrom-a` });
    for (const [file, text] of Object.entries(await canaryTree(ns, 'a'))) await writeFile(join(root, file), text);
    const again = await action(root, { ...inputs('a'), mode: 'apply' });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    surfaces['action apply'] = actionBytes(again, comments, checks);
    await putSecret(ns, 'subst-vars', { from_secret: `${MARK}-subfrom-b` });
    for (const [file, text] of Object.entries(await canaryTree(ns, 'b'))) await writeFile(join(root, file), text);
    const text = await cli(root, ['apply', ...kube]);
    expect(text.code, text.stderr).toBe(0);
    surfaces['cli apply text'] = text.stdout + text.stderr;
    surfaces['inventory'] = await inventoryBytes(ns);

    const found = Object.fromEntries(
      Object.entries(surfaces)
        .map(([where, bytes]) => [where, leaks(bytes, values)] as const)
        .filter(([, l]) => l.length > 0),
    );
    expect(found).toEqual({});
    expect(surfaces['inventory']).toContain('secret-paths.yaml');
  }, 240_000);

  it('a field once filled from a substituteFrom Secret stays masked after substituteFrom is dropped', async () => {
    const ns = await freshNamespace(client);
    await putSecret(ns, 'subst-vars', { from_secret: `${MARK}-dropped-a` });
    const cmText = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  token: "\${from_secret:=placeholder}"\n`;
    const root = await writeTree({
      'clusters/app.yaml': ksFile(ns, SUBSTITUTE_FROM),
      'deploy/kustomization.yaml': 'resources: [cm.yaml]\n',
      'deploy/cm.yaml': cmText,
    });
    const first = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'apply' });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // The PR drops substituteFrom: the field's new value is not secret, its live value still is.
    await writeFile(join(root, 'clusters/app.yaml'), ksFile(ns, 'postBuild:\n  substitute: {unused: x}\n'));
    const comments = fake.comments.length;
    const checks = fake.checkRuns.length;
    const preview = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'preview' }, true);
    expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    expect(preview.outputs['changeset']).toContain('/data/token');
    expect(leaks(actionBytes(preview, comments, checks), [`${MARK}-dropped-a`])).toEqual([]);
  }, 120_000);

  it('a dotenv SOPS file without its sops_* lines fails the run, naming the file; nothing is applied', async () => {
    const ns = await freshNamespace(client);
    const encrypted = await sopsEncrypt(`DB_PASSWORD=${MARK}-dotenv-a\n`, key.recipient, 'dotenv');
    const stripped = encrypted
      .split('\n')
      .filter((l) => !l.startsWith('sops_'))
      .join('\n');
    expect(stripped).toContain('ENC[AES256_GCM,');
    const root = await writeTree({
      'clusters/app.yaml': ksFile(ns, ''),
      'deploy/kustomization.yaml': `namespace: ${ns}\nsecretGenerator:\n  - name: db\n    envs: [db.env]\nresources: [cm.yaml]\n`,
      'deploy/db.env': stripped,
      'deploy/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n`,
    });
    const res = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'apply' });
    expect(res.code).toBe(2);
    expect(res.stdout).toContain(
      'deploy/db.env: holds SOPS ciphertext (ENC[AES256_GCM,…]) but no SOPS metadata (for a dotenv file, its sops_* lines)',
    );
    const list = await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/secrets`);
    expect(JSON.stringify(list.items)).not.toContain('"db-');
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/other`)).rejects.toThrow();
  }, 120_000);

  it('a decrypted label quoted back by the API server shows nowhere, not even in the inventory', async () => {
    const ns = await freshNamespace(client);
    // Not a valid label value: the API server refuses it and quotes it in its message.
    const encrypted = await sopsEncrypt(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labelled\n  namespace: ${ns}\n  labels:\n    team: "${MARK} label value!"\ndata:\n  a: b\n`,
      key.recipient,
      'yaml',
      '^team$',
    );
    const root = await writeTree({
      'clusters/app.yaml': ksFile(ns, ''),
      'deploy/kustomization.yaml': 'resources: [cm.yaml]\n',
      'deploy/cm.yaml': encrypted,
    });
    // The base commit decrypts the same way: a pull request's run gets the keys only as the base uses them.
    bases.set(root, initRepository(root));
    const comments = fake.comments.length;
    const checks = fake.checkRuns.length;
    const res = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'apply' }, true);
    expect(res.code).toBe(2);
    expect(res.outputs['report']).toContain('ConfigMap/' + ns + '/labelled');
    // Refused before the first write (the value is no label value), without quoting it.
    expect(res.outputs['report']).toContain('is not a valid label value');
    expect(leaks(actionBytes(res, comments, checks), [`${MARK} label value!`])).toEqual([]);
    const cli2 = await cli(root, ['apply', '--kustomizations', 'clusters/app.yaml', '--kubeconfig', kubeconfigPath()]);
    expect(cli2.code).toBe(2);
    expect(leaks(cli2.stdout + cli2.stderr, [`${MARK} label value!`])).toEqual([]);
    // Nothing was recorded: the run stopped before its inventory was written.
    expect(leaks(await inventoryBytes(ns, false), [`${MARK} label value!`])).toEqual([]);
  }, 120_000);

  it('a preview of a fork pull request says its SOPS files were not decrypted, and why', async () => {
    const ns = await freshNamespace(client);
    const encrypted = await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ${ns}\nstringData:\n  password: ${MARK}-fork\n`,
      key.recipient,
      'yaml',
      '^stringData$',
    );
    const root = await writeTree({
      'clusters/app.yaml': ksFile(ns, ''),
      'deploy/kustomization.yaml': 'resources: [secret.yaml]\n',
      'deploy/secret.yaml': encrypted,
    });
    const fork = {
      ...PR_EVENT,
      payload: {
        ...PR_EVENT.payload,
        pull_request: {
          ...PR_EVENT.payload.pull_request,
          head: { ...PR_EVENT.payload.pull_request.head, repo: { full_name: 'someone/repo' } },
        },
      },
    };
    const run = (event: typeof PR_EVENT) =>
      runAction(
        root,
        {
          kubeconfig: kubeconfigPath(),
          kustomizations: 'clusters/app.yaml',
          mode: 'preview',
          'github-token': 'tok-rw',
        },
        { script: script.index, env: REPO_ENV(fake), event },
      );
    // No sops-age-key: a fork's workflow gets no secrets.
    const fromFork = await run(fork);
    expect(fromFork.code).toBe(2);
    expect(fromFork.outputs['report']).toContain(`Secret/${ns}/db (deploy/secret.yaml): SOPS decryption failed`);
    expect(fromFork.outputs['report']).toContain('Not decrypted because this pull request comes from a fork');
    // The same pull request from a branch of the repository: only the error itself.
    const fromBranch = await run(PR_EVENT);
    expect(fromBranch.code).toBe(2);
    expect(fromBranch.outputs['report']).toContain(`Secret/${ns}/db (deploy/secret.yaml): SOPS decryption failed`);
    expect(fromBranch.outputs['report']).not.toContain('comes from a fork');
  }, 120_000);

  it('a secret-vars value starting with * is not quoted in the YAML error', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'deploy/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ${ns}\ndata:\n  a: \${pw}\n`,
    });
    const comments = fake.comments.length;
    const checks = fake.checkRuns.length;
    const res = await action(root, { path: 'deploy', mode: 'preview', 'secret-vars': `pw: "*${MARK}alias"\n` }, true);
    expect(res.code).toBe(2);
    expect(res.outputs['report']).toContain('postBuild substitution made invalid YAML');
    expect(leaks(actionBytes(res, comments, checks), [`*${MARK}alias`])).toEqual([]);
  }, 120_000);

  it('a PR that adds fields transforming a secret variable (^^, :0:4, /a/b) shows them masked', async () => {
    const ns = await freshNamespace(client);
    const password = `${MARK}-dbpassword-a`;
    await putSecret(ns, 'subst-vars', { db_password: password });
    const cm = (extra: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: ${ns}\ndata:\n  plain: one\n${extra}`;
    const root = await writeTree({
      'clusters/app.yaml': ksFile(ns, SUBSTITUTE_FROM),
      'deploy/kustomization.yaml': 'resources: [cm.yaml]\n',
      'deploy/cm.yaml': cm(''),
    });
    const first = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'apply' });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    await writeFile(
      join(root, 'deploy/cm.yaml'),
      cm('  upper: "${db_password^^}"\n  prefix: "${db_password:0:4}"\n  replaced: "${db_password/a/b}"\n'),
    );
    const comments = fake.comments.length;
    const checks = fake.checkRuns.length;
    const preview = await action(root, { kustomizations: 'clusters/app.yaml', mode: 'preview' }, true);
    expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    for (const field of ['upper', 'prefix', 'replaced'])
      expect(preview.outputs['changeset']).toContain(`/data/${field}`);
    expect(leaks(actionBytes(preview, comments, checks), [password, password.replace('a', 'b')])).toEqual([]);
  }, 120_000);
});
