// Kustomizations whose source is a Bucket (moto's S3 on loopback) or an OCIRepository (the CNCF
// distribution registry on loopback), reconciled end to end: each built from its source's content
// (proven by what lands in the cluster), with Flux's revision in the report and the inventory, and
// a source that cannot be had failing its Kustomization, never built from this checkout instead.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, exists, fluxSystemSecret, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { pushFluxArtifact, startRegistry, type TestRegistry } from '../helpers/registry.js';
import { startS3, type S3Emulator } from '../helpers/s3.js';

const cm = (ns: string, name: string, from: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {from: ${from}}\n`;

/** A Kustomization of `kind`/`source` in flux-system, building `path`. */
const ks = (name: string, kind: string, source: string, path: string, extra = '') =>
  kustomizationYaml({ name, path, prune: true, source, spec: extra }).replace(
    `sourceRef: {kind: GitRepository, name: ${source}}`,
    `sourceRef: {kind: ${kind}, name: ${source}}`,
  );

const contentDirs: string[] = [];
afterAll(async () => {
  for (const d of contentDirs) await rm(d, { recursive: true, force: true });
});

/** A directory holding `files` (removed after the tests). */
async function dirOf(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-oci-content-'));
  contentDirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('Kustomizations built from Buckets and OCIRepositories', () => {
  let client: ClusterClient;
  let s3: S3Emulator;
  let registry: TestRegistry;
  beforeAll(async () => {
    client = await adminClient();
    [s3, registry] = await Promise.all([startS3(), startRegistry()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([s3.stop(), registry.stop()]);
    client.close();
  });

  const run = (root: string, ns: string) =>
    reconcileTree(root, {
      kustomizations: ['clusters/dev/*.yaml'],
      inventoryNamespace: ns,
      run: { holder: 'sources test', source: 'acme/fleet', branch: 'main' },
    });
  const byName = (report: Report) => new Map((report.kustomizations ?? []).map((r) => [r.kustomization, r]));
  const from = async (ns: string, name: string) =>
    (await client.request<{ data?: { from?: string } }>('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).data
      ?.from;
  const statusOf = async (ns: string, name: string) =>
    (
      await client.request<{ data: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.flux-system.${name}`,
      )
    ).data['status.yaml'];

  it('builds from a Bucket: its prefix, its root .sourceignore, and nothing else left out', async () => {
    const ns = await freshNamespace(client);
    const bucket = `kr-${ns}`;
    const masked: string[] = [];
    await s3.createBucket(bucket);
    await s3.put(bucket, '.sourceignore', 'dev/app/draft.yaml\n');
    await s3.put(bucket, 'dev/app/cm.yaml', cm(ns, 'from-bucket', 'the bucket'));
    await s3.put(bucket, 'dev/app/draft.yaml', cm(ns, 'draft', 'a draft'));
    // Flux reads only the bucket's root .sourceignore: this one does not leave anything out.
    await s3.put(bucket, 'dev/app/.sourceignore', 'kept.yaml\n');
    await s3.put(bucket, 'dev/app/kept.yaml', cm(ns, 'kept', 'the bucket'));
    await s3.put(bucket, 'prod/app/cm.yaml', cm(ns, 'prod', 'prod'));
    // The objects are private: the Bucket's spec.secretRef, read from the cluster, signs the requests.
    const secret = `bucket-${ns}`;
    const removeSecret = await fluxSystemSecret(client, secret, {
      accesskey: 'AKIAEXAMPLEKEY',
      secretkey: 'the-secret-key-of-the-bucket',
    });
    onTestFinished(removeSecret);
    const root = await writeTree({
      'clusters/dev/bucket.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: manifests, namespace: flux-system}
spec:
  {interval: 5m, provider: generic, bucketName: ${bucket}, endpoint: "${s3.endpoint}", insecure: true, prefix: dev/, secretRef: {name: ${secret}}}
`,
      'clusters/dev/app.yaml': ks('app', 'Bucket', 'manifests', './dev/app'),
      'dev/app/cm.yaml': cm(ns, 'from-bucket', 'this checkout'),
    });
    const log: string[] = [];
    const report = await reconcileTree(
      root,
      {
        kustomizations: ['clusters/dev/*.yaml'],
        inventoryNamespace: ns,
        run: { holder: 'sources test', source: 'acme/fleet', branch: 'main' },
      },
      log,
      (value) => masked.push(value),
    );
    expect(report.ok, report.error).toBe(true);
    expect(masked).toContain('the-secret-key-of-the-bucket');
    expect(await from(ns, 'from-bucket')).toBe('the bucket');
    expect(await from(ns, 'kept')).toBe('the bucket');
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/draft`)).toBe(false);
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/prod`)).toBe(false);
    const app = report.kustomizations?.[0] ?? report;
    expect(app.source?.ref).toBe('Bucket flux-system/manifests');
    expect(app.source?.revision).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await statusOf(ns, 'app')).toContain(`lastAppliedRevision: ${app.source!.revision}`);
  }, 60_000);

  it('builds from an OCIRepository by semver, and from a generator that mixes it with this checkout', async () => {
    const ns = await freshNamespace(client);
    const repo = `charts/${ns}`;
    for (const [tag, version] of [
      ['1.0.0', 'one'],
      ['1.2.0', 'one-two'],
      ['2.0.0', 'two'],
    ] as const) {
      await pushFluxArtifact(
        registry.host,
        repo,
        tag,
        await dirOf({
          'deploy/cm.yaml': cm(ns, 'from-oci', version),
          'deploy/kustomization.yaml': 'resources: [cm.yaml]\n',
        }),
      );
    }
    const url = `oci://${registry.host}/${repo}`;
    const root = await writeTree({
      'clusters/dev/oci.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: charts, namespace: flux-system}
spec: {interval: 5m, url: "${url}", insecure: true, ref: {semver: "1.x"}}
`,
      'clusters/dev/app.yaml': ks('app', 'OCIRepository', 'charts', './deploy'),
      'clusters/dev/artifacts.yaml': `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: mixed, namespace: flux-system}
spec:
  sources:
    - {alias: oci, kind: OCIRepository, name: charts}
    - {alias: repo, kind: GitRepository, name: flux-system}
  artifacts:
    - name: mixed
      revision: "@oci"
      copy:
        - {from: "@oci/deploy/**", to: "@artifact/app/"}
        - {from: "@repo/overrides/cm.yaml", to: "@artifact/app/cm.yaml"}
`,
      'clusters/dev/mixed.yaml': ks('mixed', 'ExternalArtifact', 'mixed', './app', `targetNamespace: ${ns}`),
      'overrides/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-generator}\ndata: {from: this checkout}\n`,
      'deploy/cm.yaml': cm(ns, 'from-oci', 'this checkout'),
    });
    const report = await run(root, ns);
    expect(report.ok, report.error).toBe(true);
    const reports = byName(report);
    // 1.x: the highest 1.* tag, 1.2.0.
    expect(await from(ns, 'from-oci')).toBe('one-two');
    const app = reports.get('flux-system/app')!;
    expect(app.source?.ref).toBe('OCIRepository flux-system/charts');
    expect(app.source?.revision).toMatch(/^1\.2\.0@sha256:[0-9a-f]{64}$/);
    // The generator's artifact: the OCI content with this checkout's file over it, at the OCI revision.
    expect(await from(ns, 'from-generator')).toBe('this checkout');
    const mixed = reports.get('flux-system/mixed')!;
    expect(mixed.source?.revision).toBe(app.source?.revision);
  }, 60_000);

  it('fails a Kustomization whose source cannot be had, skips its dependents, applies the others', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'clusters/dev/sources.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: gone, namespace: flux-system}
spec: {interval: 5m, url: "oci://${registry.host}/nothing/here", insecure: true, ref: {tag: v1}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: gone, namespace: flux-system}
spec: {interval: 5m, bucketName: no-such-bucket-${ns}, endpoint: "${s3.endpoint}", insecure: true}
`,
      'clusters/dev/oci.yaml': ks('oci', 'OCIRepository', 'gone', './app'),
      'clusters/dev/bucket.yaml': ks('bucket', 'Bucket', 'gone', './app'),
      'clusters/dev/after.yaml': ks('after', 'GitRepository', 'flux-system', './after', 'dependsOn: [{name: oci}]'),
      'clusters/dev/other.yaml': ks('other', 'GitRepository', 'flux-system', './other'),
      'app/cm.yaml': cm(ns, 'app', 'this checkout'),
      'after/cm.yaml': cm(ns, 'after', 'this checkout'),
      'other/cm.yaml': cm(ns, 'other', 'this checkout'),
    });
    const report = await run(root, ns);
    expect(report.ok).toBe(false);
    const reports = byName(report);
    expect(reports.get('flux-system/oci')?.error).toMatch(
      new RegExp(`OCIRepository flux-system/gone \\(clusters/dev/sources.yaml\\).*oci://${registry.host}/nothing/here`),
    );
    expect(reports.get('flux-system/bucket')?.error).toMatch(
      /Bucket flux-system\/gone \(clusters\/dev\/sources.yaml\).*NoSuchBucket/,
    );
    expect(reports.get('flux-system/after')?.error).toMatch(/dependency 'flux-system\/oci' is not ready/);
    expect(reports.get('flux-system/other')?.ok).toBe(true);
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/app`)).toBe(false);
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/after`)).toBe(false);
    expect(await from(ns, 'other')).toBe('this checkout');
  }, 60_000);
});
