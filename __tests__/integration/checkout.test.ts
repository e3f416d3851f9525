// A Kustomization whose source is another repository is never built from this checkout: it fails
// naming its source, its dependents are skipped, and the others are applied.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization flux-system/`name` building ./<name> from the GitRepository `source`. */
const ks = (name: string, source: string, spec = '') => kustomizationYaml({ name, prune: true, source, spec });

const gitRepository = (name: string, url: string, branch = 'main') => `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: flux-system}
spec: {interval: 1m, url: ${url}, ref: {branch: ${branch}}}
`;

const cm = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\n`;

describe('the source of a Kustomization', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  async function fleet(ns: string): Promise<string> {
    return writeTree({
      'clusters/dev/flux-system/gotk-sync.yaml': gitRepository('flux-system', 'ssh://git@github.com/acme/fleet'),
      'clusters/dev/infra.yaml': ks('infra', 'flux-system'),
      'clusters/dev/tenant.yaml': `${gitRepository('dev-team', 'https://github.com/acme/dev-team')}---\n${ks('tenant', 'dev-team')}`,
      'clusters/dev/apps.yaml': ks('apps', 'flux-system', 'dependsOn: [{name: tenant}]'),
      'infra/cm.yaml': cm(ns, 'infra'),
      'tenant/cm.yaml': cm(ns, 'tenant'),
      'apps/cm.yaml': cm(ns, 'apps'),
    });
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

  it('fails a tenant Kustomization of another repository and skips its dependents', async () => {
    const ns = await freshNamespace(client);
    const report = await run(await fleet(ns), ns, 'acme/fleet');
    expect(report.ok).toBe(false);
    const byName = new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName.get('flux-system/infra')?.ok).toBe(true);
    expect(byName.get('flux-system/tenant')?.error).toMatch(
      /spec\.sourceRef GitRepository flux-system\/dev-team \(clusters\/dev\/tenant\.yaml\) points at https:\/\/github\.com\/acme\/dev-team, not at this repository \(acme\/fleet\)/,
    );
    expect(byName.get('flux-system/apps')?.error).toMatch(/^skipped: dependency 'flux-system\/tenant' is not ready/);
    expect(await applied(ns, 'infra')).toBe(true);
    expect(await applied(ns, 'tenant')).toBe(false);
    expect(await applied(ns, 'apps')).toBe(false);
  });

  it('fails a tenant Kustomization that follows another branch of this repository (flux2-multi-tenancy)', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'clusters/dev/infra.yaml': `${gitRepository('flux-system', 'https://github.com/acme/fleet')}---\n${ks('infra', 'flux-system')}`,
      'clusters/dev/tenant.yaml': `${gitRepository('dev-team', 'https://github.com/acme/fleet', 'dev-team')}---\n${ks('tenant', 'dev-team')}`,
      'infra/cm.yaml': cm(ns, 'infra'),
      'tenant/cm.yaml': cm(ns, 'tenant'),
    });
    const onMain = await run(root, ns, 'acme/fleet');
    const byName = new Map((onMain.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName.get('flux-system/infra')?.ok).toBe(true);
    expect(byName.get('flux-system/tenant')?.error).toContain(
      'follows branch "dev-team" of this repository, not this checkout (branch main)',
    );
    expect(await applied(ns, 'tenant')).toBe(false);
    // A checkout of the dev-team branch builds the tenant, and not the main branch's infra.
    const onDevTeam = await run(root, ns, 'acme/fleet', undefined, 'dev-team');
    const byName2 = new Map((onDevTeam.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName2.get('flux-system/tenant')?.ok).toBe(true);
    expect(byName2.get('flux-system/infra')?.error).toContain('follows branch "main"');
    expect(await applied(ns, 'tenant')).toBe(true);
  });

  it('with the source input, only that GitRepository is this checkout', async () => {
    const ns = await freshNamespace(client);
    const report = await run(await fleet(ns), ns, 'acme/fleet', 'flux-system/dev-team');
    const byName = new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
    expect(byName.get('flux-system/infra')?.error).toContain('input source names flux-system/dev-team');
    expect(byName.get('flux-system/tenant')?.ok).toBe(true);
    expect(await applied(ns, 'infra')).toBe(false);
    expect(await applied(ns, 'tenant')).toBe(true);
  });
});
