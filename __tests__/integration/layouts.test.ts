// Golden files of the CLI's output for the public Flux repository layouts people try first, rebuilt
// under __fixtures__/layouts/ (and __fixtures__/flux-helm-example/): what `build` prints (stdout and
// stderr, each its own file) and what `diff` prints against the shared test cluster, normalised where
// a run differs from the next (temporary paths, timings, the tenant repository's URL and commit).
// UPDATE_GOLDEN=1 rewrites __tests__/golden/cli/; review the diff.
//
// `diff` is goldened only for layouts whose objects live in namespaces no other test writes to:
// podinfo (`default`), flux2-multi-tenancy (`flux-system`, `apps`) and flux2-monitoring-example
// (`monitoring`). flux2-kustomize-helm-example's namespaces (podinfo, cert-manager, ...) are applied by
// artifact-generator.test.ts on the same cluster, so its diff would depend on which test ran first.
import { cp, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentMarker, renderComment } from '../../src/report/comment.js';
import type { Report } from '../../src/report/model.js';
import { renderSummary } from '../../src/report/render.js';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, kubeconfigPath, runNode, type RunResult } from '../helpers/cluster.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { installStandInCrds, STAND_IN, type StandInKind } from '../helpers/flux-stand-in.js';
import { golden as goldenFile } from '../helpers/golden.js';
import { bareRepository } from '../helpers/git-repos.js';
import { KUSTOMIZE, REPO } from '../helpers/paths.js';

const FIXTURES = join(REPO, '__fixtures__');

const golden = (name: string, text: string): void => {
  goldenFile(`cli/${name}`, text);
};

/** Kinds the layouts apply that the test cluster does not serve (Flux's own CRDs come from installFluxKustomizationCrd). */
const STAND_INS: StandInKind[] = [
  STAND_IN.HelmRelease,
  STAND_IN.HelmRepository,
  STAND_IN.ClusterPolicy,
  STAND_IN.PodMonitor,
];

/**
 * flux bootstrap binds cluster-admin to flux-system's kustomize-controller; the multi-tenancy layout's
 * cluster Kustomizations act as it (spec.serviceAccountName), so its diff needs the same binding.
 */
const RECONCILER_BINDING = 'kr-test-layouts-kustomize-controller';

interface Layout {
  /** The golden files' stem. */
  name: string;
  /** The directory under __fixtures__/ copied as the checkout. */
  fixture: string;
  /** --kustomizations. */
  kustomizations: string;
  /** Whether `diff` is goldened too (see the header). */
  diff: boolean;
}

const LAYOUTS: Layout[] = [
  { name: 'podinfo', fixture: 'layouts/podinfo', kustomizations: 'clusters/my-cluster/*.yaml', diff: true },
  {
    name: 'flux-helm-example',
    fixture: 'flux-helm-example',
    kustomizations: 'clusters/staging/*.yaml',
    diff: false,
  },
  {
    name: 'flux2-multi-tenancy',
    fixture: 'layouts/flux2-multi-tenancy',
    kustomizations: 'clusters/staging/*.yaml',
    diff: true,
  },
  {
    name: 'flux2-monitoring-example',
    fixture: 'layouts/flux2-monitoring-example',
    kustomizations: 'clusters/test/*.yaml',
    diff: true,
  },
];

/** Every file under `dir` (relative path → text). */
async function readTree(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(dir, path)] = await readFile(path, 'utf8');
  }
  return files;
}

describe('the CLI on the public Flux layouts (golden files)', () => {
  let client: ClusterClient;
  const roots: string[] = [];
  /** Replacements that make a run's output the same as the next one's: [found, written instead]. */
  const replacements: [string, string][] = [];

  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
    await installStandInCrds(client, STAND_INS);
    await client
      .request('POST', '/api/v1/namespaces', {
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flux-system' } },
      })
      .catch((err: unknown) => {
        if (!/409|AlreadyExists|already exists/i.test(String(err))) throw err;
      });
    await client.request('PATCH', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${RECONCILER_BINDING}`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: RECONCILER_BINDING },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'kustomize-controller', namespace: 'flux-system' }],
      },
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'kr-test-layouts', force: 'true' },
    });
  }, 60_000);
  afterAll(async () => {
    client.close();
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  /** A copy of __fixtures__/<fixture> in a new temporary directory. */
  const checkout = async (fixture: string): Promise<string> => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'kr-layout-')));
    roots.push(root);
    await cp(join(FIXTURES, fixture), root, { recursive: true });
    replacements.push([root, '<root>']);
    return root;
  };

  const normalise = (text: string): string => {
    let out = text;
    for (const [found, instead] of replacements) out = out.replaceAll(found, instead);
    // Durations: "in 0.3s" in the closing line.
    return out.replace(/ in \d+(?:\.\d+)?s\b/g, ' in <duration>');
  };

  const cli = (root: string, ...args: string[]): Promise<RunResult> =>
    runNode('dist/cli.js', [...args, '--kustomize-path', KUSTOMIZE], { cwd: root });

  for (const layout of LAYOUTS) {
    it(`build: ${layout.name}`, async () => {
      const root = await checkout(layout.fixture);
      const out = await cli(root, 'build', '--kustomizations', layout.kustomizations);
      expect(out.code, out.stderr).toBe(0);
      golden(`${layout.name}.build.yaml`, normalise(out.stdout));
      golden(`${layout.name}.build.stderr.txt`, normalise(out.stderr));
    });
  }

  for (const layout of LAYOUTS.filter((l) => l.diff)) {
    it(`diff: ${layout.name}`, async () => {
      const root = await checkout(layout.fixture);
      const out = await cli(root, 'diff', '--kustomizations', layout.kustomizations, '--kubeconfig', kubeconfigPath());
      // 1: changes (every object would be created); the cluster never had these objects.
      expect(out.code, out.stdout + out.stderr).toBe(1);
      golden(`${layout.name}.diff.txt`, normalise(out.stdout));
      golden(`${layout.name}.diff.stderr.txt`, normalise(out.stderr));
    });
  }

  // The same preview as a reviewer reads it on a pull request: the PR comment and the job summary,
  // rendered from the report `diff --output json` prints.
  for (const layout of LAYOUTS.filter((l) => l.diff)) {
    it(`comment and summary: ${layout.name}`, async () => {
      const root = await checkout(layout.fixture);
      const out = await cli(
        root,
        'diff',
        '--kustomizations',
        layout.kustomizations,
        '--kubeconfig',
        kubeconfigPath(),
        '--output',
        'json',
      );
      expect(out.code, out.stderr).toBe(1);
      const report = { ...(JSON.parse(out.stdout) as Report), durationMs: 1000 };
      for (const k of report.kustomizations ?? []) k.durationMs = 1000;
      const comment = renderComment(report, {
        marker: commentMarker(layout.kustomizations),
        revision: '3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39',
      });
      golden(`${layout.name}.comment.md`, normalise(comment.body));
      golden(`${layout.name}.summary.md`, normalise(renderSummary(report)));
    });
  }

  // The tenant Kustomization `dev-team` has its own GitRepository, another repository: here a local
  // bare one holding the dev-team branch's layout, written into the copy of the fleet. The tenant's
  // file is named beside the cluster's, and --source says which GitRepository is the checkout (without
  // a git remote, the one GitRepository the repository defines would be taken to be it).
  it('build: flux2-multi-tenancy with the tenant, from its own repository', async () => {
    const root = await checkout('layouts/flux2-multi-tenancy');
    const files = await readTree(join(FIXTURES, 'layouts', 'flux2-multi-tenancy-dev-team'));
    delete files['README.md'];
    const tenant = await bareRepository({ 'dev-team': files });
    roots.push(dirname(fileURLToPath(tenant.fileUrl)));
    replacements.push([tenant.url, '<dev-team repository>'], [tenant.commits['dev-team']!, '<dev-team commit>']);
    const sync = join(root, 'tenants/base/dev-team/sync.yaml');
    const placeholder = 'https://github.com/example/dev-team';
    const text = await readFile(sync, 'utf8');
    expect(text).toContain(placeholder);
    await writeFile(sync, text.replace(placeholder, tenant.url));

    const out = await cli(
      root,
      'build',
      '--kustomizations',
      'clusters/staging/*.yaml,tenants/base/dev-team/sync.yaml',
      '--source',
      'flux-system/flux-system',
      '--allow-private-source-hosts',
    );
    // The tenant's source is fetched, and the tenant is built as the staging overlay patches it
    // (spec.path ./staging), as under Flux: built from its file as written (path ./), the tenant
    // repository's root holds both environments and kustomize refused the duplicates.
    expect(out.stderr).toContain('built as its parent Kustomization flux-system/tenants produces it');
    expect(out.stderr).toContain('built from GitRepository apps/dev-team at dev-team@sha1:');
    expect(out.code, out.stderr).toBe(0);
    golden('flux2-multi-tenancy-tenant.build.yaml', normalise(out.stdout));
    golden('flux2-multi-tenancy-tenant.build.stderr.txt', normalise(out.stderr));
  });
});
