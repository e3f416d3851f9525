// The layout of fluxcd/flux2-kustomize-helm-example (Flux 2.7): Kustomizations whose source is an
// ExternalArtifact that an ArtifactGenerator makes from the repository. Rebuilt under
// __fixtures__/flux-helm-example; here it is built, previewed and applied, and each Kustomization is
// proven to be built from its artifact (paths that only exist there), with Flux's revisions.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { commentMarker, renderComment } from '../../src/report/comment.js';
import type { Report } from '../../src/report/model.js';
import { renderSummary } from '../../src/report/render.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { installStandInCrds, playControllers, STAND_IN, type StandInKind } from '../helpers/flux-stand-in.js';
import { adminClient, eventually, exists, freshNamespace, runNode } from '../helpers/cluster.js';
import { KUSTOMIZE, REPO } from '../helpers/paths.js';
import { golden } from '../helpers/golden.js';
import { reconcileTree } from '../helpers/reconcile.js';

const STAND_INS: StandInKind[] = [
  STAND_IN.HelmRelease,
  STAND_IN.HelmRepository,
  STAND_IN.ClusterIssuer,
  STAND_IN.GatewayClass,
  STAND_IN.Gateway,
];
/** The kinds a controller must mark Ready before `wait: true` passes (the OCIRepository CRD is Flux's own). */
const PLAYED: StandInKind[] = [
  ...STAND_INS.slice(0, 2),
  {
    group: 'source.toolkit.fluxcd.io',
    version: 'v1',
    kind: 'OCIRepository',
    plural: 'ocirepositories',
    scope: 'Namespaced',
  },
];

const NAMESPACES = ['podinfo', 'cert-manager', 'envoy-gateway-system'];

describe('the flux2-kustomize-helm-example layout: ExternalArtifacts of an ArtifactGenerator', () => {
  let client: ClusterClient;
  let stop: () => Promise<void> = () => Promise.resolve();
  let root: string;
  let ns: string;
  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
    await installStandInCrds(client, STAND_INS);
    stop = playControllers(client, PLAYED);
    // The layout's namespaces have fixed names: a run just before this one may still be deleting them.
    for (const n of NAMESPACES) {
      await eventually(`namespace ${n} to be gone`, 120_000, async () =>
        (await exists(client, `/api/v1/namespaces/${n}`)) ? undefined : true,
      );
    }
    root = await mkdtemp(join(tmpdir(), 'kr-helm-example-'));
    await cp(join(REPO, '__fixtures__', 'flux-helm-example'), root, { recursive: true });
    ns = await freshNamespace(client);
  }, 180_000);
  afterAll(async () => {
    await stop();
    for (const n of NAMESPACES) await client.request('DELETE', `/api/v1/namespaces/${n}`).catch(() => undefined);
    await client.request('DELETE', '/apis/cert-manager.io/v1/clusterissuers/letsencrypt').catch(() => undefined);
    await client.request('DELETE', '/apis/gateway.networking.k8s.io/v1/gatewayclasses/envoy').catch(() => undefined);
    client.close();
    await rm(root, { recursive: true, force: true });
  });

  const run = (
    mode: 'apply' | 'preview',
    log: string[] = [],
    revision = 'main@sha1:1111111111111111111111111111111111111111',
  ) =>
    reconcileTree(
      root,
      {
        mode,
        kustomizations: ['clusters/staging/*.yaml'],
        inventoryNamespace: ns,
        run: { holder: 'helm example test', source: 'acme/fleet', branch: 'main', revision },
      },
      log,
    );
  const byName = (report: Report) => new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
  const status = async (name: string) =>
    (
      await client.request<{ data: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.flux-system.${name}`,
      )
    ).data['status.yaml'];
  const helmRelease = (name: string, namespace: string) =>
    client.request<{ spec: { values: { httpRoute: { hostnames: string[] } }; chart: { spec: { version: string } } } }>(
      'GET',
      `/apis/helm.toolkit.fluxcd.io/v2/namespaces/${namespace}/helmreleases/${name}`,
    );

  let infrastructureRevision = '';

  it('builds every Kustomization from its artifact with the CLI', async () => {
    const out = await runNode(
      'dist/cli.js',
      ['build', '--kustomizations', 'clusters/production/*.yaml', '--kustomize-path', KUSTOMIZE],
      { cwd: root },
    );
    expect(out.code, out.stderr).toBe(0);
    // Each Kustomization's path exists only in its artifact: ./controllers and ./configs in
    // `infrastructure`, ./production (with ../base) in `apps`.
    expect(out.stdout).toContain('# Kustomization flux-system/infra-controllers');
    expect(out.stdout).toContain('name: envoy-gateway');
    // The production overlay, and infra-configs' own patch applied to the ClusterIssuer.
    expect(out.stdout).toContain('- podinfo.production');
    expect(out.stdout).toContain('server: https://acme.example.com/directory');
    expect(out.stderr).toMatch(/built from ExternalArtifact flux-system\/apps at latest@sha256:[0-9a-f]{64}/);
    expect(out.stderr).toContain(
      'Making ExternalArtifact flux-system/infrastructure with ArtifactGenerator flux-system/flux-system (clusters/production/artifacts.yaml)',
    );
  }, 60_000);

  it('applies the three Kustomizations in dependsOn order, each from its artifact', async () => {
    const log: string[] = [];
    const report = await run('apply', log);
    expect(report.ok, `${report.error}\n${log.join('\n')}`).toBe(true);
    const reports = byName(report);
    expect([...reports.keys()]).toEqual([
      'flux-system/apps',
      'flux-system/infra-controllers',
      'flux-system/infra-configs',
    ]);
    for (const r of reports.values()) expect(r.ok, r.error).toBe(true);
    expect((await helmRelease('podinfo', 'podinfo')).spec.values.httpRoute.hostnames).toEqual(['podinfo.staging']);
    expect((await helmRelease('podinfo', 'podinfo')).spec.chart.spec.version).toBe('>=1.0.0-alpha');
    expect(
      await exists(client, '/apis/gateway.networking.k8s.io/v1/namespaces/envoy-gateway-system/gateways/envoy'),
    ).toBe(true);
    expect(await exists(client, '/apis/cert-manager.io/v1/clusterissuers/letsencrypt')).toBe(true);

    // The report and the inventory name the source, its revision and the origin revision.
    const apps = reports.get('flux-system/apps')!;
    expect(apps.source?.ref).toBe('ExternalArtifact flux-system/apps');
    expect(apps.source?.revision).toMatch(/^latest@sha256:[0-9a-f]{64}$/);
    expect(apps.source?.originRevision).toBe('main@sha1:1111111111111111111111111111111111111111');
    const infra = reports.get('flux-system/infra-configs')!;
    infrastructureRevision = infra.source!.revision!;
    expect(reports.get('flux-system/infra-controllers')!.source?.revision).toBe(infrastructureRevision);
    expect(infrastructureRevision).not.toBe(apps.source?.revision);
    const stored = await status('apps');
    expect(stored).toContain(`lastAppliedRevision: ${apps.source!.revision}`);
    expect(stored).toContain('lastAppliedOriginRevision: main@sha1:1111111111111111111111111111111111111111');
    expect(stored).toContain('sourceRef: ExternalArtifact flux-system/apps');
    // The job summary and the PR comment say it per Kustomization.
    expect(renderSummary(report)).toMatch(
      /`flux-system\/apps`<br><sub>built from ExternalArtifact flux-system\/apps at latest@sha256:[0-9a-f]{12} \(from main@sha1:1111111\)<\/sub>/,
    );
    expect(renderComment(report, { marker: '<!-- t -->' }).body).toContain(
      '<sub>built from ExternalArtifact flux-system/infrastructure at latest@sha256:',
    );
    // The artifact is made once per run however many Kustomizations read it.
    expect(log.filter((l) => l.includes('Making ExternalArtifact flux-system/infrastructure'))).toHaveLength(1);
  }, 120_000);

  it('previews a change to one overlay: only the apps artifact gets a new revision', async () => {
    const file = join(root, 'apps/staging/podinfo-values.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('- podinfo.staging', '- podinfo.staging.example.com'));
    const report = await run('preview', [], 'main@sha1:2222222222222222222222222222222222222222');
    expect(report.ok, report.error).toBe(true);
    const reports = byName(report);
    const apps = reports.get('flux-system/apps')!;
    expect(apps.changeset.filter((c) => c.action !== 'unchanged').map((c) => `${c.subject} ${c.action}`)).toEqual([
      'HelmRelease/podinfo/podinfo configured',
    ]);
    // The change as YAML, with its context, in the summary and the comment.
    const summary = renderSummary(report);
    expect(summary).toMatch(/^-\s+- podinfo\.staging$/m);
    expect(summary).toMatch(/^\+\s+- podinfo\.staging\.example\.com$/m);
    expect(summary).toMatch(/^ {2,}hostnames:$/m);
    expect(renderComment(report, { marker: '<!-- t -->' }).body).toMatch(/^\+\s+- podinfo\.staging\.example\.com$/m);
    // The comment and the summary as golden files, beside the other public layouts' (durations fixed).
    const fixed = {
      ...report,
      durationMs: 1000,
      kustomizations: report.kustomizations?.map((k) => ({ ...k, durationMs: 1000 })),
    };
    golden(
      'cli/flux-helm-example.comment.md',
      renderComment(fixed, { marker: commentMarker('clusters/staging/*.yaml') }).body,
    );
    golden('cli/flux-helm-example.summary.md', renderSummary(fixed));
    expect(reports.get('flux-system/infra-configs')!.source?.revision).toBe(infrastructureRevision);
    expect(reports.get('flux-system/infra-configs')!.changeset.every((c) => c.action === 'unchanged')).toBe(true);
    expect((await helmRelease('podinfo', 'podinfo')).spec.values.httpRoute.hostnames).toEqual(['podinfo.staging']);
  }, 120_000);

  it('prunes what left the artifact', async () => {
    await rm(join(root, 'infrastructure/configs/gateway.yaml'));
    await writeFile(
      join(root, 'infrastructure/configs/kustomization.yaml'),
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cluster-issuers.yaml\n',
    );
    const report = await run('apply', [], 'main@sha1:3333333333333333333333333333333333333333');
    expect(report.ok, report.error).toBe(true);
    const configs = byName(report).get('flux-system/infra-configs')!;
    expect(configs.source?.revision).not.toBe(infrastructureRevision);
    expect((configs.pruned ?? []).map((p) => `${p.subject} ${p.action}`).sort()).toEqual([
      'Gateway/envoy-gateway-system/envoy deleted',
      'GatewayClass/envoy deleted',
    ]);
    expect(await exists(client, '/apis/gateway.networking.k8s.io/v1/gatewayclasses/envoy')).toBe(false);
    expect((await helmRelease('podinfo', 'podinfo')).spec.values.httpRoute.hostnames).toEqual([
      'podinfo.staging.example.com',
    ]);
  }, 120_000);
});
