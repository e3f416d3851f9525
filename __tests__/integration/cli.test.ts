import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree } from '../helpers/cluster.js';
import { bareRepository } from '../helpers/git-repos.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';

describe('the bundled CLI', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  const cli = (root: string, ...args: string[]) =>
    runNode('dist/cli.js', [...args, '--kubeconfig', kubeconfigPath(), '--kustomize-path', KUSTOMIZE], { cwd: root });

  it('diff exits 1 with changes and writes nothing; apply creates; diff then exits 0', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [cm.yaml]\n`,
      'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n',
    });
    const diff = await cli(root, 'diff', '--path', 'app');
    expect(diff.code, diff.stderr).toBe(1);
    expect(diff.stdout).toContain(`ConfigMap/${ns}/settings created`);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/settings`)).rejects.toSatisfy(isNotFound);

    const apply = await cli(root, 'apply', '--path', 'app', '--output', 'json');
    expect(apply.code, apply.stderr).toBe(0);
    const report = JSON.parse(apply.stdout) as { ok: boolean; changeset: { subject: string; action: string }[] };
    expect(report.ok).toBe(true);
    expect(report.changeset).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${ns}/settings`, action: 'created' }),
    ]);

    const after = await cli(root, 'diff', '--path', 'app');
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain(`ConfigMap/${ns}/settings unchanged`);
  });

  it('counts a prune in the final line and the JSON, prints each prune line once, and diff exits 1 for it', async () => {
    const ns = await freshNamespace(client);
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: b\n`;
    const root = await writeTree({
      'app/kustomization.yaml': `namespace: ${ns}\nresources: [a.yaml, b.yaml, c.yaml]\n`,
      'app/a.yaml': cm('a'),
      'app/b.yaml': cm('b'),
      'app/c.yaml': cm('c'),
    });
    const flags = ['--path', 'app', '--prune', '--inventory-namespace', ns];
    const first = await cli(root, 'apply', ...flags);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    await writeFile(join(root, 'app/kustomization.yaml'), `namespace: ${ns}\nresources: [a.yaml]\n`);
    const lines = (out: string) => out.split('\n').filter((l) => l !== '');
    const times = (out: string, line: string) => lines(out).filter((l) => l === line).length;

    // Only a prune is pending: that is a change for diff.
    const diff = await cli(root, 'diff', ...flags);
    expect(diff.code, diff.stdout + diff.stderr).toBe(1);
    expect(times(diff.stdout, `ConfigMap/${ns}/b deleted (dry run)`)).toBe(1);
    expect(lines(diff.stdout).at(-1)).toMatch(
      /^Preview of Kustomization \S+ \(\.\/app\): 0 created, 0 configured, 2 deleted, 1 unchanged in /,
    );
    const json = await cli(root, 'diff', ...flags, '--output', 'json');
    expect(json.code, json.stderr).toBe(1);
    expect((JSON.parse(json.stdout) as { counts: unknown }).counts).toEqual({
      created: 0,
      configured: 0,
      unchanged: 1,
      skipped: 0,
      deleted: 2,
    });

    const apply = await cli(root, 'apply', ...flags);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(times(apply.stdout, `ConfigMap/${ns}/b deleted`)).toBe(1);
    expect(times(apply.stdout, `ConfigMap/${ns}/c deleted`)).toBe(1);
    expect(lines(apply.stdout).at(-1)).toMatch(
      /^Applied Kustomization \S+ \(\.\/app\): 0 created, 0 configured, 2 deleted, 1 unchanged in /,
    );
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/b`)).rejects.toSatisfy(isNotFound);

    const after = await cli(root, 'diff', ...flags);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect(lines(after.stdout).at(-1)).toMatch(
      /^Preview of Kustomization \S+ \(\.\/app\): 0 created, 0 configured, 0 deleted, 1 unchanged in /,
    );
  });

  it('applies a CRD and its custom resource in one run (definitions stage first)', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.example.com`;
    const root = await writeTree({
      'crd/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {size: {type: integer}}}
`,
      'crd/widget.yaml': `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: ${ns}\nspec:\n  size: 3\n`,
    });
    const apply = await cli(root, 'apply', '--path', 'crd');
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain(`CustomResourceDefinition/widgets.${group} created`);
    expect(apply.stdout).toContain(`Widget/${ns}/w1 created`);
    const w = await client.request<{ spec: { size: number } }>('GET', `/apis/${group}/v1/namespaces/${ns}/widgets/w1`);
    expect(w.spec.size).toBe(3);
    await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`);
  });

  it('reports a path outside the root and an unknown kind as errors with exit code 2', async () => {
    const root = await writeTree({
      'x/thing.yaml': 'apiVersion: nowhere.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: default\n',
    });
    const escape = await cli(root, 'apply', '--path', '../..');
    expect(escape.code).toBe(2);
    expect(escape.stdout).toContain('input "path": "../.." must stay inside the source root');

    const unknown = await cli(root, 'apply', '--path', 'x');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toContain(
      'Gadget/default/g: the server has no resource for kind Gadget in nowhere.example.com/v1',
    );
  });

  it('in a workflow step, no line of its output is a workflow command; elsewhere the bytes are as built', async () => {
    const root = await writeTree({
      'app/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\ndata:\n  v: |\n    ::warning::KRMARK\n    ok ##[add-mask]y\n',
    });
    const build = (env: NodeJS.ProcessEnv) =>
      runNode('dist/cli.js', ['build', '--path', 'app', '--kustomize-path', KUSTOMIZE], { cwd: root, env });
    const { GITHUB_ACTIONS: _, ...outside } = process.env;
    const inStep = await build({ ...outside, GITHUB_ACTIONS: 'true' });
    expect(inStep.code, inStep.stderr).toBe(0);
    const commands = inStep.stdout.split(/\r\n|\r|\n/).filter((l) => /^\s*::/.test(l) || l.includes('##['));
    expect(commands).toEqual([]);
    expect(inStep.stdout).toContain('%3A:warning::KRMARK');
    const plain = await build(outside);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('    ::warning::KRMARK\n    ok ##[add-mask]y\n');
  });

  it('build takes a Kustomization of another GitRepository from that repository, and refuses one it cannot fetch', async () => {
    const tenant = await bareRepository({
      main: {
        'apps/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, namespace: x}\ndata: {from: tenant}\n',
      },
    });
    const source = (url: string) =>
      `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: tenant, namespace: flux-system}\nspec: {interval: 1m, url: ${url}, ref: {branch: main}}\n---\n` +
      kustomizationYaml({ name: 'tenant', path: './apps', source: 'tenant' });
    const tree = (url: string) =>
      writeTree({
        'clusters/tenant.yaml': source(url),
        'apps/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, namespace: x}\ndata: {from: checkout}\n',
      });
    const build = (root: string) =>
      // A checkout without a git remote is told by --source which GitRepository it is.
      runNode(
        'dist/cli.js',
        [
          'build',
          '--kustomizations',
          'clusters/tenant.yaml',
          '--source',
          'flux-system/flux-system',
          '--kustomize-path',
          KUSTOMIZE,
          // the tenant's git server listens on loopback
          '--allow-private-source-hosts',
        ],
        { cwd: root },
      );
    const ok = await build(await tree(tenant.url));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('from: tenant');
    expect(ok.stdout).not.toContain('from: checkout');
    expect(ok.stderr).toContain(`built from GitRepository flux-system/tenant at main@sha1:${tenant.commits['main']}`);
    const refused = await build(await tree('ssh://git@example.com/acme/tenant'));
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).not.toContain('from: checkout');
    expect(refused.stderr).toContain('building this repository instead is never done');
  });

  it('build prints the built objects without a cluster', async () => {
    const root = await writeTree({
      'plain/a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n',
      'plain/nested/b.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: x\n',
    });
    const res = await runNode('dist/cli.js', ['build', '--path', 'plain', '--kustomize-path', KUSTOMIZE], {
      cwd: root,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('name: a');
    expect(res.stdout).toContain('name: b');
  });

  it('build names the Kustomization, its file and the field of a spec.path that does not exist', async () => {
    const root = await writeTree({
      'clusters/ks.yaml': kustomizationYaml({ name: 'apps', path: './nowhere' }),
    });
    const res = await runNode(
      'dist/cli.js',
      ['build', '--kustomizations', 'clusters/ks.yaml', '--kustomize-path', KUSTOMIZE],
      { cwd: root },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /Kustomization flux-system\/apps: spec\.path "(?:\.\/)?nowhere" \(clusters\/ks\.yaml, document 1\) does not exist under the source root /,
    );
  });
});
