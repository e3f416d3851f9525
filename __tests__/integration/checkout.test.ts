// A Kustomization whose source is another GitRepository is never built from this checkout: it is
// built from that repository, fetched with git (local file:// repositories here, proven by content),
// or, when it cannot be had, it fails naming its source, its dependents are skipped, and the others
// are applied.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { repositoryId } from '../../src/objects/names.js';
import type { Report } from '../../src/report/model.js';
import { basicAuth } from '../../src/source/git.js';
import { adminClient, exists, fluxSystemSecret, freshNamespace, writeTree } from '../helpers/cluster.js';
import { gitHttpServer } from '../helpers/git-http.js';
import { bareRepository, commitAll, initRepository } from '../helpers/git-repos.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcile, reconcileTree, testSettings } from '../helpers/reconcile.js';

/** The Kustomization flux-system/`name` building ./<name> from the GitRepository `source`. */
const ks = (name: string, source: string, spec = '') => kustomizationYaml({ name, prune: true, source, spec });

const gitRepository = (name: string, url: string, branch = 'main') => `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: flux-system}
spec: {interval: 1m, url: ${url}, ref: {branch: ${branch}}}
`;

const cm = (ns: string, name: string, from = 'this checkout') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {from: ${from}}\n`;

describe('the source of a Kustomization', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  async function fleet(ns: string, tenantUrl: string): Promise<string> {
    return writeTree({
      'clusters/dev/flux-system/gotk-sync.yaml': gitRepository('flux-system', 'ssh://git@github.com/acme/fleet'),
      'clusters/dev/infra.yaml': ks('infra', 'flux-system'),
      'clusters/dev/tenant.yaml': `${gitRepository('dev-team', tenantUrl)}---\n${ks('tenant', 'dev-team')}`,
      'clusters/dev/apps.yaml': ks('apps', 'flux-system', 'dependsOn: [{name: tenant}]'),
      'infra/cm.yaml': cm(ns, 'infra'),
      'tenant/cm.yaml': cm(ns, 'tenant'),
      'apps/cm.yaml': cm(ns, 'apps'),
    });
  }

  /**
   * The fleet with a private tenant repository (basic auth bob:hunter2) and, in flux-system, the
   * Secret with those credentials; `withSecret` is the tenant's file naming it as spec.secretRef.
   */
  async function privateFleet(ns: string) {
    const tenant = await bareRepository({ main: { 'tenant/cm.yaml': cm(ns, 'tenant', 'the private repository') } });
    const server = await gitHttpServer(tenant.fileUrl, basicAuth('bob', 'hunter2'));
    const secret = `tenant-auth-${ns}`;
    // The GitRepository's namespace, where its Secret is read.
    const removeSecret = await fluxSystemSecret(client, secret, { username: 'bob', password: 'hunter2' });
    const root = await fleet(ns, server.urlOf(tenant.fileUrl));
    const file = join(root, 'clusters/dev/tenant.yaml');
    const withSecret = (await readFile(file, 'utf8')).replace(
      'ref: {branch: main}',
      `ref: {branch: main}, secretRef: {name: ${secret}}`,
    );
    const close = async () => {
      await server.close();
      await removeSecret();
    };
    return { tenant, server, root, file, withSecret, close };
  }

  function run(root: string, ns: string, source: string, explicit?: string, branch = 'main') {
    return reconcileTree(root, {
      kustomizations: ['clusters/dev/*.yaml'],
      inventoryNamespace: ns,
      ...(explicit ? { source: explicit } : {}),
      run: { holder: 'checkout test', source, branch },
    });
  }

  const applied = (ns: string, name: string) => exists(client, `/api/v1/namespaces/${ns}/configmaps/${name}`);
  /** Where the live ConfigMap's content came from. */
  const from = async (ns: string, name: string) =>
    (await client.request<{ data?: { from?: string } }>('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).data
      ?.from;

  it('builds a tenant Kustomization from its own repository, and records that revision', async () => {
    const ns = await freshNamespace(client);
    const tenant = await bareRepository({ main: { 'tenant/cm.yaml': cm(ns, 'tenant', 'the tenant repository') } });
    const report = await run(await fleet(ns, tenant.url), ns, 'acme/fleet');
    const byName = new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(report.ok, report.error).toBe(true);
    expect(byName.get('flux-system/tenant')?.ok).toBe(true);
    expect(await from(ns, 'tenant')).toBe('the tenant repository');
    expect(await from(ns, 'infra')).toBe('this checkout');
    expect(await from(ns, 'apps')).toBe('this checkout');
    const inventory = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.flux-system.tenant`,
    );
    expect(inventory.data['status.yaml']).toContain(`lastAppliedRevision: main@sha1:${tenant.commits['main']}`);
  });

  it('fetches a private tenant repository with the credentials its spec.secretRef Secret holds', async () => {
    const ns = await freshNamespace(client);
    const tenant = await privateFleet(ns);
    try {
      await writeFile(tenant.file, tenant.withSecret);
      const report = await run(tenant.root, ns, 'acme/fleet');
      expect(report.ok, report.error).toBe(true);
      expect(await from(ns, 'tenant')).toBe('the private repository');
      expect(tenant.server.seen).toContain(basicAuth('bob', 'hunter2'));
    } finally {
      await tenant.close();
    }
  });

  it('in a preview, uses the Secret only for a definition the base commit has, and says why not otherwise', async () => {
    const ns = await freshNamespace(client);
    const { tenant, server, root, file, withSecret, close } = await privateFleet(ns);
    const other = await gitHttpServer(tenant.fileUrl, basicAuth('bob', 'hunter2'));
    try {
      await writeFile(file, withSecret);
      const base = initRepository(root);
      const preview = (untrustedTree: { reason: string; base?: string }) =>
        reconcile(
          {
            ...testSettings(root, {
              mode: 'preview',
              kustomizations: ['clusters/dev/*.yaml'],
              inventoryNamespace: ns,
              run: { holder: 'checkout test', source: 'acme/fleet', branch: 'main' },
            }),
            untrustedTree: { ...untrustedTree, root },
          },
          { log: () => {}, secret: () => {} },
        );
      const reason = 'this run is for a pull_request event, whose tree is not trusted';
      const tenantOf = (r: Report) => (r.kustomizations ?? []).find((k) => k.kustomization === 'flux-system/tenant');

      // Unchanged from the base commit: the Secret is read and sent to the repository's host.
      const same = await preview({ reason, base });
      expect(tenantOf(same)?.ok, tenantOf(same)?.error).toBe(true);
      expect(server.seen).toContain(basicAuth('bob', 'hunter2'));

      // The pull request points the same definition elsewhere: nothing is sent there, and the preview says why.
      await writeFile(file, withSecret.replace(server.urlOf(tenant.fileUrl), other.urlOf(tenant.fileUrl)));
      commitAll(root, 'the pull request');
      const moved = await preview({ reason, base });
      expect(other.seen.length).toBeGreaterThan(0);
      expect(other.seen.filter((h) => h !== undefined)).toEqual([]);
      expect(tenantOf(moved)?.ok).toBe(false);
      expect(tenantOf(moved)?.notes.join('\n')).toContain(
        'GitRepository flux-system/dev-team is fetched without credentials: this run is for a pull_request event, whose tree is not trusted, and its definition (URL or endpoint, provider, secretRef or namespace) is not the same on the base commit',
      );
      expect(tenantOf(moved)?.error).toContain('fetched without credentials');

      // A base the checkout does not have: no credentials at all, even for the definition of the base.
      await writeFile(file, withSecret);
      const seen = server.seen.length;
      const shallow = await preview({ reason, base: 'e'.repeat(40) });
      expect(server.seen.slice(seen).filter((h) => h !== undefined)).toEqual([]);
      expect(tenantOf(shallow)?.notes.join('\n')).toContain(
        `the base commit ${'e'.repeat(40)} is not in this checkout`,
      );
    } finally {
      await other.close();
      await close();
    }
  });

  it('fails a tenant Kustomization whose repository cannot be fetched and skips its dependents', async () => {
    const ns = await freshNamespace(client);
    const report = await run(await fleet(ns, 'http://127.0.0.1:9/acme/dev-team.git'), ns, 'acme/fleet');
    expect(report.ok).toBe(false);
    const byName = new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName.get('flux-system/infra')?.ok).toBe(true);
    expect(byName.get('flux-system/tenant')?.error).toMatch(
      /fetching GitRepository flux-system\/dev-team \(clusters\/dev\/tenant\.yaml\): http:\/\/127\.0\.0\.1:9\/acme\/dev-team\.git at branch main failed: .*\(no token for 127\.0\.0\.1:9 in the git-credentials input \(--git-credential on the CLI\)\)$/,
    );
    expect(byName.get('flux-system/apps')?.error).toMatch(/^skipped: dependency 'flux-system\/tenant' is not ready/);
    expect(await applied(ns, 'infra')).toBe(true);
    expect(await applied(ns, 'tenant')).toBe(false);
    expect(await applied(ns, 'apps')).toBe(false);
  });

  it('builds a tenant Kustomization that follows another branch of this repository from that branch (flux2-multi-tenancy)', async () => {
    const ns = await freshNamespace(client);
    const repo = await bareRepository({
      main: { 'tenant/cm.yaml': cm(ns, 'tenant', 'main') },
      'dev-team': { 'tenant/cm.yaml': cm(ns, 'tenant', 'the dev-team branch') },
    });
    const root = await writeTree({
      'clusters/dev/infra.yaml': `${gitRepository('flux-system', repo.url)}---\n${ks('infra', 'flux-system')}`,
      'clusters/dev/tenant.yaml': `${gitRepository('dev-team', repo.url, 'dev-team')}---\n${ks('tenant', 'dev-team')}`,
      'infra/cm.yaml': cm(ns, 'infra'),
      'tenant/cm.yaml': cm(ns, 'tenant'),
    });
    // The checkout is main of that repository: infra is built from it, the tenant from its branch.
    const onMain = await run(root, ns, repositoryId(repo.url));
    const byName = new Map((onMain.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName.get('flux-system/infra')?.ok).toBe(true);
    expect(byName.get('flux-system/tenant')?.ok).toBe(true);
    expect(await from(ns, 'infra')).toBe('this checkout');
    expect(await from(ns, 'tenant')).toBe('the dev-team branch');
  });

  it('with the source input, only that GitRepository is this checkout', async () => {
    const ns = await freshNamespace(client);
    const report = await run(
      await fleet(ns, 'https://github.com/acme/dev-team'),
      ns,
      'acme/fleet',
      'flux-system/dev-team',
    );
    const byName = new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
    // flux-system is defined over SSH: not this checkout, and not fetched.
    expect(byName.get('flux-system/infra')?.error).toContain('names flux-system/dev-team');
    expect(byName.get('flux-system/infra')?.error).toContain('building this repository instead is never done');
    expect(byName.get('flux-system/tenant')?.ok).toBe(true);
    expect(await applied(ns, 'infra')).toBe(false);
    expect(await from(ns, 'tenant')).toBe('this checkout');
  });

  it("adds what the checkout's GitRepository includes (spec.include), from that repository at its ref", async () => {
    const ns = await freshNamespace(client);
    const shared = await bareRepository({
      main: { 'deploy/cm.yaml': cm(ns, 'shared', 'the shared repository (main)') },
      v2: { 'deploy/cm.yaml': cm(ns, 'shared', 'the shared repository (v2)') },
    });
    const root = await writeTree({
      'clusters/dev/flux-system/gotk-sync.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 1m
  url: https://github.com/acme/fleet
  ref: {branch: main}
  include:
    - repository: {name: shared}
      fromPath: deploy
      toPath: vendor/shared
---
${gitRepository('shared', shared.url, 'v2')}`,
      'clusters/dev/apps.yaml': ks('apps', 'flux-system'),
      // apps reads a file that only the include puts there.
      'apps/kustomization.yaml': 'resources: [cm.yaml, ../vendor/shared/cm.yaml]\n',
      'apps/cm.yaml': cm(ns, 'apps'),
    });
    const report = await run(root, ns, 'acme/fleet');
    expect(report.ok, report.error).toBe(true);
    expect(await from(ns, 'apps')).toBe('this checkout');
    expect(await from(ns, 'shared')).toBe('the shared repository (v2)');
    const apps = report.kustomizations?.[0] ?? report;
    expect(apps.source?.ref).toBe('GitRepository flux-system/flux-system (this checkout, with its spec.include)');
  });
});
