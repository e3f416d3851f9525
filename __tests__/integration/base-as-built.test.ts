// Issue 50, item 2: a preview judges the base commit's Kustomizations as their parents' builds on that
// commit make them, exactly as the run sees the head's. A child whose namespace its folder's
// kustomization.yaml sets (its file says none) and whose substituteFrom the parent's patch gives it reads
// its Secret in a preview when the base gives it the same; a pull request that makes the parent give a
// child another Secret is still refused it.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { commitAll, initRepository } from '../helpers/git-repos.js';
import { reconcile, testSettings } from '../helpers/reconcile.js';

const parent = (ns: string, secret: string) => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  path: ./kubernetes/apps
  sourceRef: {kind: GitRepository, name: flux-system}
  patches:
    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
      patch: |
        - op: add
          path: /spec/postBuild
          value: {substituteFrom: [{kind: Secret, name: ${secret}}]}
        - op: add
          path: /spec/targetNamespace
          value: ${ns}
`;

function tree(ns: string): Record<string, string> {
  return {
    'kubernetes/flux/cluster/ks.yaml': parent(ns, 'cluster-secrets'),
    // cluster-template: the namespace folder's kustomization.yaml places its apps' Kustomizations.
    'kubernetes/apps/network/kustomization.yaml': `namespace: ${ns}\nresources: [./echo/ks.yaml]\n`,
    'kubernetes/apps/network/echo/ks.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: echo}
spec:
  interval: 1h
  prune: true
  path: ./kubernetes/apps/network/echo/app
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
`,
    'kubernetes/apps/network/echo/app/kustomization.yaml': 'resources: [./cm.yaml]\n',
    'kubernetes/apps/network/echo/app/cm.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: echo}\ndata: {domain: "${SECRET_DOMAIN}", image: "echo:1.0.0"}\n',
  };
}

describe("a preview judges the base's Kustomizations as their parents build them", () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
  });
  afterAll(() => {
    client.close();
  });

  const putSecret = (ns: string, name: string, value: string) =>
    client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { SECRET_DOMAIN: value } },
    });

  const preview = (root: string, ns: string, base: string) =>
    reconcile(
      {
        ...testSettings(root, {
          mode: 'preview',
          kustomizations: ['kubernetes/flux/cluster/ks.yaml', 'kubernetes/apps/*/*/ks.yaml'],
          inventoryNamespace: ns,
          run: { holder: `base-as-built ${ns}`, source: 'acme/home-ops', branch: 'main' },
        }),
        untrustedTree: { reason: 'this run is for a pull_request event, whose tree is not trusted', base, root },
      },
      { log: () => {}, secret: () => {} },
    );

  it('lets a child read the Secret its parent gives it on the base, and refuses one the pull request gives', async () => {
    const ns = await freshNamespace(client);
    await putSecret(ns, 'cluster-secrets', 'example.org');
    await putSecret(ns, 'platform-admin', 'admin.internal');
    const root = await writeTree(tree(ns));
    try {
      const base = initRepository(root);
      // The pull request bumps the app's image only.
      const files = tree(ns);
      await writeFile(
        join(root, 'kubernetes/apps/network/echo/app/cm.yaml'),
        files['kubernetes/apps/network/echo/app/cm.yaml']!.replace('echo:1.0.0', 'echo:1.0.1'),
      );
      commitAll(root, 'echo 1.0.1');
      const bump = await preview(root, ns, base);
      const echo = (bump.kustomizations ?? []).find((k) => k.kustomization === `${ns}/echo`);
      expect(echo, JSON.stringify(bump.kustomizations?.map((k) => k.kustomization))).toBeDefined();
      expect(echo?.error).toBeUndefined();
      expect(echo?.ok).toBe(true);
      expect(echo?.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([`ConfigMap/${ns}/echo created`]);

      // The pull request makes the parent give every child the platform's Secret: refused, saying why.
      await writeFile(join(root, 'kubernetes/flux/cluster/ks.yaml'), parent(ns, 'platform-admin'));
      commitAll(root, 'borrow');
      const borrow = await preview(root, ns, base);
      const refused = (borrow.kustomizations ?? []).find((k) => k.kustomization === `${ns}/echo`);
      expect(refused?.ok).toBe(false);
      expect(refused?.error).toContain(`Secret ${ns}/platform-admin is not read`);
      expect(JSON.stringify(borrow)).not.toContain('admin.internal');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);
});
