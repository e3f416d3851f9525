import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import { derivedName } from '../../src/objects/names.js';
import { loadClusters, loadKustomizations, splitPatterns } from '../../src/flux/load.js';
import {
  SpecError,
  effectiveTimeout,
  normalizeSourcePath,
  parseDuration,
  parseKustomizations,
} from '../../src/flux/parse.js';
import type { KustomizationSpec } from '../../src/flux/types.js';
import { defaultSpec } from '../helpers/spec.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const FIXTURES = fileURLToPath(new URL('../../__fixtures__/flux/', import.meta.url));
const FILE = 'clusters/prod.yaml';
const PREFIX = `${FILE}, document 1, Kustomization flux-system/apps: `;

type Fields = Record<string, unknown>;

/** A valid v1 Kustomization `flux-system/apps`, with `spec` fields replaced or added (undefined removes one). */
function kustomization(spec: Fields = {}, metadata: Fields = { name: 'apps', namespace: 'flux-system' }): Fields {
  const base: Fields = { interval: '10m', prune: true, sourceRef: { kind: 'GitRepository', name: 'flux-system' } };
  const merged = Object.fromEntries(Object.entries({ ...base, ...spec }).filter(([, v]) => v !== undefined));
  return { apiVersion: 'kustomize.toolkit.fluxcd.io/v1', kind: 'Kustomization', metadata, spec: merged };
}

function yamlOf(...docs: Fields[]): string {
  return docs.map((doc) => stringify(doc)).join('---\n');
}

function parseOne(spec: Fields = {}, metadata?: Fields): KustomizationSpec {
  const specs = parseKustomizations(yamlOf(kustomization(spec, metadata)), FILE);
  expect(specs).toHaveLength(1);
  return specs[0]!;
}

/** The problems a SpecError from `run` lists (fails the test when nothing, or something else, is thrown). */
function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SpecError);
    return (error as SpecError).problems;
  }
  throw new Error('expected a SpecError');
}

async function asyncProblemsOf(run: () => Promise<unknown>): Promise<string[]> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(SpecError);
    return (error as SpecError).problems;
  }
  throw new Error('expected a SpecError');
}

/** The defaults a minimal Kustomization gets: the same values Flux's API and controller use. */
const MINIMAL: KustomizationSpec = defaultSpec({ origin: { kind: 'file', file: FILE, document: 1 } });

describe('parseDuration', () => {
  it.each([
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['1h30m', 5_400_000],
    ['0s', 0],
    ['1.1s', 1100],
    ['2h0m0s', 7_200_000],
    ['1.5ms', 1.5],
    ['10m', 600_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['5', '5 m', '-1s', '1d', '', 'm', '1.s', '.5s', '1us', '1ns', '1H', ' 1s', '1s ', '3000000h'])(
    'refuses %j',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

describe('effectiveTimeout (Flux GetTimeout)', () => {
  it.each([
    { interval: 600_000, timeout: undefined, want: 570_000 },
    { interval: 40_000, timeout: undefined, want: 30_000 },
    { interval: 600_000, timeout: 120_000, want: 120_000 },
    { interval: 600_000, timeout: 10_000, want: 30_000 },
    { interval: undefined, timeout: undefined, want: 300_000 },
    { interval: undefined, timeout: 60_000, want: 60_000 },
  ])('interval $interval, timeout $timeout → $want', ({ interval, timeout, want }) => {
    expect(effectiveTimeout(interval, timeout)).toBe(want);
  });
});

describe('normalizeSourcePath', () => {
  it.each([
    ['./clusters/prod', 'clusters/prod'],
    ['a/../b', 'b'],
    ['', '.'],
    ['.', '.'],
    ['./', '.'],
    ['apps/', 'apps'],
    ['a/./b//c', 'a/b/c'],
    ['a/b/../../c', 'c'],
    ['/abs', undefined],
    ['..', undefined],
    ['../x', undefined],
    ['a/../../x', undefined],
  ])('%j → %j', (text, want) => {
    expect(normalizeSourcePath(text)).toBe(want);
  });
});

describe('parseKustomizations: defaults', () => {
  it('fills in Flux defaults for a minimal Kustomization', () => {
    expect(parseOne()).toStrictEqual(MINIMAL);
  });

  it('defaults metadata.namespace to flux-system', () => {
    expect(parseOne({}, { name: 'apps' }).namespace).toBe('flux-system');
  });

  it('defaults sourceRef and dependsOn namespaces to the Kustomization namespace', () => {
    const spec = parseOne({ dependsOn: [{ name: 'infra' }] }, { name: 'apps', namespace: 'team-a' });
    expect(spec.sourceRef).toEqual({ kind: 'GitRepository', name: 'flux-system', namespace: 'team-a' });
    expect(spec.dependsOn).toEqual([{ name: 'infra', namespace: 'team-a' }]);
  });
});

describe('parseKustomizations: valid fields', () => {
  it.each<{ spec: Fields; want: Partial<KustomizationSpec> }>([
    { spec: { interval: '1m30s' }, want: { interval: 90_000, retryInterval: 90_000, timeout: 60_000 } },
    { spec: { interval: '40s' }, want: { interval: 40_000, retryInterval: 40_000, timeout: 30_000 } },
    { spec: { timeout: '2m' }, want: { timeout: 120_000 } },
    { spec: { timeout: '10s' }, want: { timeout: 30_000 } },
    { spec: { timeout: null }, want: { timeout: 570_000 } },
    { spec: { retryInterval: '2m' }, want: { interval: 600_000, retryInterval: 120_000 } },
    { spec: { path: './clusters/production' }, want: { path: 'clusters/production' } },
    { spec: { path: 'apps/base/../prod/' }, want: { path: 'apps/prod' } },
    { spec: { path: '' }, want: { path: '.' } },
    { spec: { path: './' }, want: { path: '.' } },
    { spec: { prune: false }, want: { prune: false } },
    { spec: { wait: true, force: true, suspend: true }, want: { wait: true, force: true, suspend: true } },
    { spec: { ignoreMissingComponents: true }, want: { ignoreMissingComponents: true } },
    { spec: { deletionPolicy: 'WaitForTermination' }, want: { deletionPolicy: 'WaitForTermination' } },
    { spec: { targetNamespace: 'apps' }, want: { targetNamespace: 'apps' } },
    { spec: { namePrefix: 'p-', nameSuffix: '-s' }, want: { namePrefix: 'p-', nameSuffix: '-s' } },
    {
      spec: {
        sourceRef: { kind: 'GitRepository', name: 'repo', namespace: 'src', apiVersion: 'source.toolkit.fluxcd.io/v1' },
      },
      want: {
        sourceRef: { kind: 'GitRepository', name: 'repo', namespace: 'src', apiVersion: 'source.toolkit.fluxcd.io/v1' },
      },
    },
    {
      spec: { commonMetadata: { labels: { 'app.kubernetes.io/part-of': 'shop' } } },
      want: { commonMetadata: { labels: { 'app.kubernetes.io/part-of': 'shop' } } },
    },
    {
      spec: { patches: [{ patch: 'kind: Deployment', target: { kind: 'Deployment', labelSelector: 'app=web' } }] },
      want: { patches: [{ patch: 'kind: Deployment', target: { kind: 'Deployment', labelSelector: 'app=web' } }] },
    },
    {
      spec: { patches: [{ patch: '[{"op": "remove", "path": "/spec/replicas"}]' }] },
      want: { patches: [{ patch: '[{"op": "remove", "path": "/spec/replicas"}]' }] },
    },
    {
      spec: {
        images: [
          { name: 'nginx', newTag: '1.27' },
          { name: 'app', newName: 'reg/app', digest: 'sha256:abc' },
        ],
      },
      want: {
        images: [
          { name: 'nginx', newTag: '1.27' },
          { name: 'app', newName: 'reg/app', digest: 'sha256:abc' },
        ],
      },
    },
    // Every combination Flux's CRD allows: only `name` is required (kustomize then changes nothing).
    ...(
      [
        [{ name: 'nginx' }, { name: 'nginx' }],
        [
          { name: 'nginx', newName: 'reg/nginx' },
          { name: 'nginx', newName: 'reg/nginx' },
        ],
        [
          { name: 'nginx', newTag: '1.27' },
          { name: 'nginx', newTag: '1.27' },
        ],
        [
          { name: 'nginx', digest: 'sha256:abc' },
          { name: 'nginx', digest: 'sha256:abc' },
        ],
        [
          { name: 'nginx', newTag: '1.27', digest: 'sha256:abc' },
          { name: 'nginx', newTag: '1.27', digest: 'sha256:abc' },
        ],
        [
          { name: 'nginx', newName: 'reg/nginx', newTag: '1.27', digest: 'sha256:abc' },
          { name: 'nginx', newName: 'reg/nginx', newTag: '1.27', digest: 'sha256:abc' },
        ],
        // Empty optional strings are "not set", as Go's omitempty makes them for Flux.
        [{ name: 'nginx', newName: '', newTag: '', digest: '' }, { name: 'nginx' }],
      ] as const
    ).map(([image, want]) => ({ spec: { images: [image] }, want: { images: [want] } })),
    // Flux joins spec.path to the source root (SecureJoin): a leading "/" means the root, not the file system's.
    { spec: { path: '/clusters/prod' }, want: { path: 'clusters/prod' } },
    { spec: { path: '/' }, want: { path: '.' } },
    {
      spec: { path: 'clusters/prod', components: ['../../components/ingress', 'file://local'] },
      want: { path: 'clusters/prod', components: ['../../components/ingress', 'file://local'] },
    },
    {
      spec: { buildMetadata: ['originAnnotations', 'transformerAnnotations'] },
      want: { buildMetadata: ['originAnnotations', 'transformerAnnotations'] },
    },
    {
      spec: {
        healthChecks: [
          { kind: 'Deployment', name: 'web', namespace: 'apps' },
          { apiVersion: 'v1', kind: 'Pod', name: 'p' },
        ],
      },
      want: {
        healthChecks: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'apps' },
          { apiVersion: 'v1', kind: 'Pod', name: 'p' },
        ],
      },
    },
    {
      spec: { healthChecks: [{ apiVersion: '', kind: 'StatefulSet', name: 'db' }] },
      want: { healthChecks: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' }] },
    },
    {
      spec: {
        healthCheckExprs: [
          { apiVersion: 'example.com/v1', kind: 'Foo', current: 'true', failed: 'false' },
          { apiVersion: 'example.com/v1', kind: 'Bar', current: 'true', inProgress: 'false' },
          { apiVersion: 'example.com/v1', current: 'true' },
        ],
      },
      want: {
        healthCheckExprs: [
          { apiVersion: 'example.com/v1', kind: 'Foo', current: 'true', failed: 'false' },
          { apiVersion: 'example.com/v1', kind: 'Bar', current: 'true', inProgress: 'false' },
          { apiVersion: 'example.com/v1', current: 'true' },
        ],
      },
    },
    {
      spec: { ignore: [{ paths: ['/spec/replicas', '/metadata/annotations/a~1b'], target: { kind: 'Deployment' } }] },
      want: { ignore: [{ paths: ['/spec/replicas', '/metadata/annotations/a~1b'], target: { kind: 'Deployment' } }] },
    },
    {
      spec: { postBuild: { substitute: { cluster_env: 'prod', _X1: '3' } } },
      want: {
        postBuild: {
          substitute: { cluster_env: 'prod', _X1: '3' },
          substituteFrom: [],
          substituteStrategy: 'WithVariables',
        },
      },
    },
    {
      spec: {
        postBuild: {
          substituteFrom: [
            { kind: 'ConfigMap', name: 'vars' },
            { kind: 'Secret', name: 's', optional: true },
          ],
          substituteStrategy: 'Always',
        },
      },
      want: {
        postBuild: {
          substitute: {},
          substituteFrom: [
            { kind: 'ConfigMap', name: 'vars', optional: false },
            { kind: 'Secret', name: 's', optional: true },
          ],
          substituteStrategy: 'Always',
        },
      },
    },
    { spec: { decryption: { provider: 'sops' } }, want: { decryption: { provider: 'sops' } } },
    {
      spec: { decryption: { provider: 'sops', secretRef: { name: 'sops-age' }, serviceAccountName: 'kms' } },
      want: { decryption: { provider: 'sops', secretRef: { name: 'sops-age' }, serviceAccountName: 'kms' } },
    },
    { spec: { serviceAccountName: 'deployer' }, want: { serviceAccountName: 'deployer' } },
    {
      spec: { kubeConfig: { secretRef: { name: 'prod-kubeconfig', key: 'value.yaml' } } },
      want: { kubeConfig: { secretRef: { name: 'prod-kubeconfig', key: 'value.yaml' } } },
    },
    {
      spec: { kubeConfig: { configMapRef: { name: 'cluster' } } },
      want: { kubeConfig: { configMapRef: { name: 'cluster' } } },
    },
    {
      spec: {
        dependsOn: [{ name: 'infra' }, { name: 'crds', namespace: 'platform', readyExpr: 'dep.status != null' }],
      },
      want: {
        dependsOn: [
          { name: 'infra', namespace: 'flux-system' },
          { name: 'crds', namespace: 'platform', readyExpr: 'dep.status != null' },
        ],
      },
    },
  ])('$spec', ({ spec, want }) => {
    expect(parseOne(spec)).toStrictEqual({ ...MINIMAL, ...want });
  });

  it('accepts status and other metadata', () => {
    const doc = kustomization();
    const text = yamlOf({ ...doc, metadata: { name: 'apps', labels: { a: 'b' } }, status: { observedGeneration: -1 } });
    expect(parseKustomizations(text, FILE)).toStrictEqual([MINIMAL]);
  });
});

describe('parseKustomizations: invalid fields', () => {
  const notASource = (kind: string): string =>
    `spec.sourceRef.kind: "${kind}" is not one of GitRepository, OCIRepository, Bucket, ExternalArtifact`;
  const bool = (field: string, got: string): string =>
    `${field}: must be a YAML boolean (true or false, without quotes), got ${got}`;

  it.each<[Fields, string]>([
    // required fields
    [{ interval: undefined }, 'spec.interval: is required'],
    [{ prune: undefined }, 'spec.prune: is required'],
    [{ sourceRef: undefined }, 'spec.sourceRef: is required'],
    [{ sourceRef: { name: 'x' } }, 'spec.sourceRef.kind: is required'],
    [{ sourceRef: { kind: 'GitRepository' } }, 'spec.sourceRef.name: is required'],
    [{ sourceRef: { kind: 'GitRepository', name: '' } }, 'spec.sourceRef.name: must not be empty'],
    // sources other than the checkout
    [{ sourceRef: { kind: 'HelmRepository', name: 'x' } }, notASource('HelmRepository')],
    [{ sourceRef: { kind: 'HelmChart', name: 'x' } }, notASource('HelmChart')],
    [
      { sourceRef: { kind: 'HelmRepository', name: 'x' } },
      'spec.sourceRef.kind: "HelmRepository" is not one of GitRepository, OCIRepository, Bucket, ExternalArtifact',
    ],
    // durations
    [{ interval: '5 minutes' }, 'spec.interval: "5 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)'],
    [{ timeout: '5 minutes' }, 'spec.timeout: "5 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)'],
    [{ timeout: 300 }, 'spec.timeout: 300 is not a duration (add a unit: use e.g. 30s, 5m, 1h30m)'],
    [{ retryInterval: '1d' }, 'spec.retryInterval: "1d" is not a duration (use e.g. 30s, 5m, 1h30m)'],
    [{ interval: ['1m'] }, 'spec.interval: must be a duration (use e.g. 30s, 5m, 1h30m), got a list'],
    // path
    [{ path: '../other-repo' }, 'spec.path: "../other-repo" must stay inside the source root'],
    [{ path: 'apps/../../x' }, 'spec.path: "apps/../../x" must stay inside the source root'],
    [{ path: 3 }, 'spec.path: must be a string, got number 3'],
    // booleans
    [{ prune: 'true' }, bool('spec.prune', 'the string "true"')],
    [{ wait: 'yes' }, bool('spec.wait', 'the string "yes"')],
    [{ force: 1 }, bool('spec.force', 'number 1')],
    [{ suspend: 'false' }, bool('spec.suspend', 'the string "false"')],
    [{ ignoreMissingComponents: 'true' }, bool('spec.ignoreMissingComponents', 'the string "true"')],
    // enums and names
    [
      { deletionPolicy: 'Keep' },
      'spec.deletionPolicy: "Keep" is not one of MirrorPrune, Delete, WaitForTermination, Orphan',
    ],
    [{ targetNamespace: 'Apps' }, 'spec.targetNamespace: "Apps" is not a DNS-1123 label'],
    [{ targetNamespace: 'a'.repeat(64) }, 'spec.targetNamespace: is 64 characters long, more than the 63 allowed'],
    [{ targetNamespace: '' }, 'spec.targetNamespace: must not be empty'],
    [{ namePrefix: '' }, 'spec.namePrefix: must not be empty'],
    [{ nameSuffix: 'x'.repeat(201) }, 'spec.nameSuffix: is 201 characters long, more than the 200 allowed'],
    [{ serviceAccountName: 7 }, 'spec.serviceAccountName: must be a string, got number 7 (quote it: "7")'],
    [{ serviceAccountName: 'Team_A' }, 'spec.serviceAccountName: "Team_A" is not a DNS-1123 subdomain'],
    [
      { serviceAccountName: 'a\nImpersonate-Group: system:masters' },
      'spec.serviceAccountName: must not contain a line break',
    ],
    [{ path: './leak\n::stop-commands::k7f3' }, 'spec.path: must not contain a line break (U+000A, at character 7)'],
    [
      { sourceRef: { kind: 'GitRepository', name: 'a\r::warning::x' } },
      'spec.sourceRef.name: must not contain a carriage return',
    ],
    [{ targetNamespace: 'a\u2028b' }, 'spec.targetNamespace: must not contain a control character (U+2028'],
    [{ serviceAccountName: '' }, 'spec.serviceAccountName: must not be empty'],
    [
      { decryption: { provider: 'sops', serviceAccountName: 'kms/../admin' } },
      'spec.decryption.serviceAccountName: "kms/../admin" is not a DNS-1123 subdomain',
    ],
    [
      { decryption: { provider: 'sops', secretRef: { name: '../flux-system/secrets/keys' } } },
      'spec.decryption.secretRef.name: "../flux-system/secrets/keys" is not a DNS-1123 subdomain',
    ],
    [
      { postBuild: { substituteFrom: [{ kind: 'Secret', name: 'vars?watch=true' }] } },
      'spec.postBuild.substituteFrom[0].name: "vars?watch=true" is not a DNS-1123 subdomain',
    ],
    [
      { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'x'.repeat(254) }] } },
      'spec.postBuild.substituteFrom[0].name: "xxxxxxxx',
    ],
    [
      { kubeConfig: { secretRef: { name: 'Prod Cluster' } } },
      'spec.kubeConfig.secretRef.name: "Prod Cluster" is not a DNS-1123 subdomain',
    ],
    // commonMetadata
    [
      { commonMetadata: { labels: { team: 3 } } },
      'spec.commonMetadata.labels.team: must be a string, got number 3; quote it ("3") so YAML keeps it a string',
    ],
    [
      { commonMetadata: { annotations: { 'example.com/enabled': true } } },
      'spec.commonMetadata.annotations["example.com/enabled"]: must be a string, got boolean true',
    ],
    [{ commonMetadata: { label: {} } }, 'unknown field spec.commonMetadata.label (did you mean labels?)'],
    // patches
    [{ patches: [{ target: { kind: 'Deployment' } }] }, 'spec.patches[0].patch: is required'],
    [{ patches: [{ patch: '' }] }, 'spec.patches[0].patch: must not be empty'],
    [{ patches: [{ patch: 'a: [' }] }, 'spec.patches[0].patch: is not valid YAML or JSON'],
    [
      { patches: [{ patch: '[{"op": "explode", "path": "/x"}]' }] },
      'spec.patches[0].patch: operation 1: op "explode" is not one of add, remove, replace, move, copy, test',
    ],
    [
      { patches: [{ patch: 'a: 1', target: { kinds: 'X' } }] },
      'unknown field spec.patches[0].target.kinds (did you mean kind?)',
    ],
    [
      { patches: [{ patch: 'a: 1', target: { kind: 3 } }] },
      'spec.patches[0].target.kind: must be a string, got number 3',
    ],
    [{ patches: { patch: 'a: 1' } }, 'spec.patches: must be a list, got a mapping'],
    // images
    [{ images: [{ newTag: 'v1' }] }, 'spec.images[0].name: is required'],
    [{ images: [{ name: '', newTag: 'v1' }] }, 'spec.images[0].name: must not be empty'],
    [{ images: [{ name: 'nginx', tag: 'v1' }] }, 'unknown field spec.images[0].tag'],
    [
      { images: [{ name: 'nginx', newTag: 1.27 }] },
      'spec.images[0].newTag: must be a string, got number 1.27 (quote it: "1.27")',
    ],
    // components
    [{ components: ['/abs/component'] }, 'spec.components[0]: "/abs/component" is an absolute path'],
    [{ components: ['file:///abs'] }, 'spec.components[0]: "file:///abs" is an absolute path'],
    [{ components: ['ok', '../x'] }, 'spec.components[1]: "../x" climbs out of the source root from spec.path "."'],
    [{ components: [''] }, 'spec.components[0]: must not be empty'],
    // buildMetadata
    [
      { buildMetadata: ['managedByLabel'] },
      'spec.buildMetadata[0]: "managedByLabel" is not one of originAnnotations, transformerAnnotations',
    ],
    // healthChecks
    [{ healthChecks: [{ name: 'web' }] }, 'spec.healthChecks[0].kind: is required'],
    [{ healthChecks: [{ kind: 'Deployment' }] }, 'spec.healthChecks[0].name: is required'],
    [
      { healthChecks: [{ apiVersion: 'a/b/c', kind: 'X', name: 'x' }] },
      'spec.healthChecks[0].apiVersion: "a/b/c" is not an apiVersion',
    ],
    // healthCheckExprs
    [{ healthCheckExprs: [{ kind: 'Foo', current: 'true' }] }, 'spec.healthCheckExprs[0].apiVersion: is required'],
    [
      { healthCheckExprs: [{ apiVersion: 'example.com/v1', kind: 'Foo' }] },
      'spec.healthCheckExprs[0].current: is required',
    ],
    [
      { healthCheckExprs: [{ apiVersion: 'example.com/v1', current: '' }] },
      'spec.healthCheckExprs[0].current: must not be empty',
    ],
    [
      {
        healthCheckExprs: [
          { apiVersion: 'example.com/v1', kind: 'Foo', current: 'a' },
          { apiVersion: 'example.com/v2', kind: 'Foo', current: 'b' },
        ],
      },
      'spec.healthCheckExprs[1]: duplicate entry for group "example.com" kind Foo (already in spec.healthCheckExprs[0])',
    ],
    [
      {
        healthCheckExprs: [
          { apiVersion: 'example.com/v1', current: 'a' },
          { apiVersion: 'example.com/v1beta1', current: 'b' },
        ],
      },
      'spec.healthCheckExprs[1]: duplicate entry for the whole group "example.com" (already in spec.healthCheckExprs[0])',
    ],
    [
      { healthCheckExprs: [{ apiVersion: 'example.com/v1', current: "status.phase == 'Ready" }] },
      'spec.healthCheckExprs[0].current: invalid CEL expression "status.phase == \'Ready": Unterminated string',
    ],
    [
      { healthCheckExprs: [{ apiVersion: 'example.com/v1', current: 'true', failed: 'status.x &&' }] },
      'spec.healthCheckExprs[0].failed: invalid CEL expression "status.x &&": Unexpected token: EOF',
    ],
    [
      { dependsOn: [{ name: 'infra', readyExpr: 'dep.status.(' }] },
      'spec.dependsOn[0].readyExpr: invalid CEL expression "dep.status.(": Expected IDENTIFIER, got LPAREN',
    ],
    // ignore
    [{ ignore: [{ target: { kind: 'Secret' } }] }, 'spec.ignore[0].paths: is required: list at least one JSON pointer'],
    [{ ignore: [{ paths: [] }] }, 'spec.ignore[0].paths: is required: list at least one JSON pointer'],
    [
      { ignore: [{ paths: ['spec/replicas'] }] },
      'spec.ignore[0].paths[0]: "spec/replicas" is not a JSON pointer (it must start with "/", e.g. /spec/replicas)',
    ],
    [{ ignore: [{ paths: ['/a~2'] }] }, 'spec.ignore[0].paths[0]: "/a~2" has a "~" not followed by 0 or 1'],
    [{ ignore: [{ paths: ['/x'], target: { labels: 'a' } }] }, 'unknown field spec.ignore[0].target.labels'],
    // postBuild
    [
      { postBuild: { substitute: { replicas: 3 } } },
      'spec.postBuild.substitute.replicas: must be a string, got number 3; quote it ("3") so YAML keeps it a string',
    ],
    [
      { postBuild: { substitute: { enabled: false } } },
      'spec.postBuild.substitute.enabled: must be a string, got boolean false; quote it ("false")',
    ],
    [
      { postBuild: { substitute: { 'cluster-env': 'prod' } } },
      'spec.postBuild.substitute.cluster-env: "cluster-env" is not a valid variable name',
    ],
    [
      { postBuild: { substitute: { '1st': 'x' } } },
      'spec.postBuild.substitute["1st"]: "1st" is not a valid variable name',
    ],
    [
      { postBuild: { substituteFrom: [{ kind: 'Vault', name: 'v' }] } },
      'spec.postBuild.substituteFrom[0].kind: "Vault" is not one of ConfigMap, Secret',
    ],
    [{ postBuild: { substituteFrom: [{ kind: 'Secret' }] } }, 'spec.postBuild.substituteFrom[0].name: is required'],
    [
      { postBuild: { substituteFrom: [{ kind: 'Secret', name: 's', optional: 'true' }] } },
      bool('spec.postBuild.substituteFrom[0].optional', 'the string "true"'),
    ],
    [
      { postBuild: { substituteStrategy: 'Never' } },
      'spec.postBuild.substituteStrategy: "Never" is not one of WithVariables, Always',
    ],
    // decryption
    [{ decryption: { secretRef: { name: 'k' } } }, 'spec.decryption.provider: is required'],
    [{ decryption: { provider: 'vault' } }, 'spec.decryption.provider: "vault" is not one of sops'],
    [{ decryption: { provider: 'sops', secretRef: {} } }, 'spec.decryption.secretRef.name: is required'],
    // kubeConfig
    [
      { kubeConfig: {} },
      'spec.kubeConfig: exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified',
    ],
    [
      { kubeConfig: { secretRef: { name: 'a' }, configMapRef: { name: 'b' } } },
      'spec.kubeConfig: exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified',
    ],
    [{ kubeConfig: { secretRef: { key: 'value' } } }, 'spec.kubeConfig.secretRef.name: is required'],
    // dependsOn
    [
      { dependsOn: ['flux-system/infra@dep.ready'] },
      'spec.dependsOn[0]: must be a mapping {name, namespace?, readyExpr?}, got the string "flux-system/infra@dep.ready"; ' +
        'write {name: infra, namespace: flux-system, readyExpr: ...}',
    ],
    [{ dependsOn: [{ namespace: 'x' }] }, 'spec.dependsOn[0].name: is required'],
    [{ dependsOn: [{ name: 'x', kind: 'Kustomization' }] }, 'unknown field spec.dependsOn[0].kind'],
    // unknown and removed fields
    [{ foo: 1 }, 'unknown field spec.foo'],
    [{ targetnamespace: 'apps' }, 'unknown field spec.targetnamespace (did you mean targetNamespace?)'],
    [{ intervall: '1m' }, 'unknown field spec.intervall (did you mean interval?)'],
    // The closest field, not the first one near enough: path is two edits away, patches one.
    [{ patchs: [] }, 'unknown field spec.patchs (did you mean patches?)'],
    [
      { patchesStrategicMerge: [] },
      'spec.patchesStrategicMerge: was removed in kustomize.toolkit.fluxcd.io/v1; put each patch in spec.patches',
    ],
    [{ patchesJson6902: [] }, 'spec.patchesJson6902: was removed in kustomize.toolkit.fluxcd.io/v1'],
    [{ validation: 'client' }, 'spec.validation: was removed in kustomize.toolkit.fluxcd.io/v1'],
  ])('%j', (spec, fragment) => {
    const problems = problemsOf(() => parseKustomizations(yamlOf(kustomization(spec)), FILE));
    expect(problems).toContainEqual(expect.stringContaining(PREFIX + fragment));
  });

  it.each([
    'git::https://example.com/repo',
    'gh:org/repo',
    'ssh://git@host/repo',
    'https://example.com/c',
    'http://example.com/c',
    'git@github.com:org/repo',
    'github.com:org/repo',
    'github.com/org/repo',
    'GitHub.com/org/repo',
  ])('refuses the remote component %s', (component) => {
    const problems = problemsOf(() => parseKustomizations(yamlOf(kustomization({ components: [component] })), FILE));
    expect(problems).toEqual([
      expect.stringContaining(`${PREFIX}spec.components[0]: ${JSON.stringify(component)} is a remote component`),
    ]);
  });

  it.each<[Fields | null, Fields, string]>([
    [null, {}, 'metadata.name: is required'],
    [{ namespace: 'x' }, {}, 'metadata.name: is required'],
    [{ name: 'Apps_1' }, {}, 'metadata.name: "Apps_1" is not a DNS-1123 subdomain'],
    [{ name: 'apps', namespace: 'Flux' }, {}, 'metadata.namespace: "Flux" is not a DNS-1123 label'],
  ])('metadata %j is refused', (metadata, spec, fragment) => {
    const doc = kustomization(spec);
    const text = stringify({ ...doc, metadata });
    const problems = problemsOf(() => parseKustomizations(text, FILE));
    expect(problems.join('\n')).toContain(fragment);
  });

  it('names the document by whatever name it has, even an invalid one', () => {
    const text = yamlOf(kustomization({ wait: 'yes' }, { name: 'Bad_Name', namespace: 'team-a' }));
    expect(problemsOf(() => parseKustomizations(text, FILE))).toEqual([
      `${FILE}, document 1, Kustomization team-a/Bad_Name: metadata.name: "Bad_Name" is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)`,
      `${FILE}, document 1, Kustomization team-a/Bad_Name: spec.wait: must be a YAML boolean (true or false, without quotes), got the string "yes"`,
    ]);
  });

  it('names a document whose name has a line break as one quoted name, on one line', () => {
    const text = yamlOf(kustomization({}, { name: 'x\n::stop-commands::k7f3', namespace: 'team-a' }));
    expect(problemsOf(() => parseKustomizations(text, FILE))).toEqual([
      `${FILE}, document 1, Kustomization team-a/"x\\n::stop-commands::k7f3": metadata.name: must not contain a line break (U+000A, at character 2)`,
    ]);
  });

  it('refuses a missing spec and unknown top-level fields', () => {
    const text = stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'apps' },
      specs: {},
    });
    expect(problemsOf(() => parseKustomizations(text, FILE))).toEqual([
      `${PREFIX}unknown field specs (did you mean spec?)`,
      `${PREFIX}spec: is required`,
    ]);
  });

  it('collects every problem of a document into one SpecError message', () => {
    const text = yamlOf(kustomization({ interval: '5 minutes', prune: 'true', foo: 1 }));
    let caught: unknown;
    try {
      parseKustomizations(text, FILE);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SpecError);
    const error = caught as SpecError;
    expect(error.problems).toHaveLength(3);
    expect(error.message).toBe(
      [
        '3 problems:',
        `- ${PREFIX}unknown field spec.foo`,
        `- ${PREFIX}spec.interval: "5 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)`,
        `- ${PREFIX}spec.prune: must be a YAML boolean (true or false, without quotes), got the string "true"`,
      ].join('\n'),
    );
  });

  it('uses the problem itself as the message when there is only one', () => {
    const text = yamlOf(kustomization({ timeout: '5 minutes' }, { name: 'apps', namespace: 'flux-system' }));
    const problem = `${PREFIX}spec.timeout: "5 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)`;
    expect(() => parseKustomizations(text, FILE)).toThrow(
      new SpecError([problem], [{ message: problem, file: FILE, document: 1, field: 'spec.timeout' }]),
    );
    expect(() => parseKustomizations(text, FILE)).toThrow(
      `clusters/prod.yaml, document 1, Kustomization flux-system/apps: spec.timeout: "5 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)`,
    );
  });
});

describe('parseKustomizations: documents', () => {
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
  const kustomizeFile = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['a.yaml'] };

  it('skips other kinds, kustomize kustomization files and empty documents, numbering every document', () => {
    const text = `${yamlOf(configMap, kustomizeFile)}---\n---\n# only a comment\n---\n${yamlOf(kustomization())}`;
    expect(parseKustomizations(text, FILE)).toStrictEqual([
      { ...MINIMAL, origin: { kind: 'file', file: FILE, document: 5 } },
    ]);
  });

  it('skips a Kustomization without apiVersion (a kustomization.yaml) and non-mapping documents', () => {
    const text = `kind: Kustomization\nresources: [a.yaml]\n---\n- a\n- b\n---\njust text\n`;
    expect(parseKustomizations(text, FILE)).toEqual([]);
  });

  it('returns nothing for an empty file', () => {
    expect(parseKustomizations('', FILE)).toEqual([]);
    expect(parseKustomizations('# nothing here\n', FILE)).toEqual([]);
  });

  it('names the document of a problem in a later document', () => {
    const text = yamlOf(kustomization(), kustomization({ wait: 'true' }, { name: 'apps-extra' }));
    expect(problemsOf(() => parseKustomizations(text, FILE))).toEqual([
      `${FILE}, document 2, Kustomization flux-system/apps-extra: spec.wait: must be a YAML boolean (true or false, without quotes), got the string "true"`,
    ]);
  });

  it.each(['kustomize.toolkit.fluxcd.io/v1beta1', 'kustomize.toolkit.fluxcd.io/v1beta2'])(
    'refuses %s and says what changed',
    (apiVersion) => {
      const text = stringify({ ...kustomization({ validation: 'client', patchesStrategicMerge: [] }), apiVersion });
      const problems = problemsOf(() => parseKustomizations(text, FILE));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(
        `${PREFIX}apiVersion ${apiVersion} is not supported; only kustomize.toolkit.fluxcd.io/v1 is.`,
      );
      expect(problems[0]).toContain(
        'move spec.patchesStrategicMerge and spec.patchesJson6902 into spec.patches, drop spec.validation',
      );
      expect(problems[0]).toContain('This document uses spec.patchesStrategicMerge, spec.validation.');
    },
  );

  it('reports invalid YAML with file and document', () => {
    const text = `${yamlOf(kustomization())}---\nspec: [\n`;
    expect(problemsOf(() => parseKustomizations(text, FILE))[0]).toMatch(
      /^clusters\/prod\.yaml, document 2: invalid YAML: /,
    );
  });

  it('reports duplicate keys', () => {
    const text = 'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nkind: Kustomization\n';
    expect(problemsOf(() => parseKustomizations(text, FILE))[0]).toMatch(
      /^clusters\/prod\.yaml, document 1: key "[a-z]+" appears twice in one mapping/,
    );
  });

  it('refuses too many YAML aliases', () => {
    const aliases = Array.from({ length: 200 }, () => '*a').join(', ');
    const text = `${yamlOf(kustomization())}---\nx: &a [1]\ny: [${aliases}]\n`;
    expect(problemsOf(() => parseKustomizations(text, FILE))[0]).toMatch(/^clusters\/prod\.yaml, document 2: .*alias/i);
  });
});

describe('fixtures', () => {
  const fixture = async (name: string): Promise<string> => readFile(join(FIXTURES, name), 'utf8');

  it('infrastructure.yaml', async () => {
    const file = '__fixtures__/flux/infrastructure.yaml';
    expect(parseKustomizations(await fixture('infrastructure.yaml'), file)).toStrictEqual([
      {
        ...MINIMAL,
        name: 'infra-controllers',
        origin: { kind: 'file', file, document: 1 },
        path: '__fixtures__/trees/infra',
        interval: 3_600_000,
        retryInterval: 60_000,
        timeout: 300_000,
        wait: true,
        healthChecks: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'ingress-nginx-controller', namespace: 'ingress-nginx' },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'cert-manager', namespace: 'cert-manager' },
        ],
      },
    ]);
  });

  it('apps.yaml', async () => {
    const file = '__fixtures__/flux/apps.yaml';
    const [apps, extra, ...rest] = parseKustomizations(await fixture('apps.yaml'), file);
    expect(rest).toEqual([]);
    expect(apps).toStrictEqual({
      ...MINIMAL,
      origin: { kind: 'file', file, document: 1 },
      path: '__fixtures__/trees/apps',
      targetNamespace: 'apps',
      dependsOn: [{ name: 'infra-controllers', namespace: 'flux-system' }],
      commonMetadata: {
        labels: { 'app.kubernetes.io/part-of': 'shop' },
        annotations: { 'example.com/owner': 'team-shop' },
      },
      postBuild: {
        substitute: { cluster_env: 'production', replicas: '3' },
        substituteFrom: [
          { kind: 'ConfigMap', name: 'cluster-vars', optional: false },
          { kind: 'Secret', name: 'cluster-secret-vars', optional: true },
        ],
        substituteStrategy: 'WithVariables',
      },
      decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
      patches: [
        {
          patch: '- op: replace\n  path: /spec/replicas\n  value: 2\n',
          target: { kind: 'Deployment', labelSelector: 'app.kubernetes.io/name=frontend' },
        },
      ],
      images: [
        { name: 'ghcr.io/example/frontend', newTag: 'v1.4.2' },
        {
          name: 'ghcr.io/example/backend',
          newName: 'registry.example.com/backend',
          digest: 'sha256:4f0d4b8e0c6a7b1f3c2d5e6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708',
        },
      ],
    });
    expect(extra).toStrictEqual({
      ...MINIMAL,
      name: 'apps-extra',
      origin: { kind: 'file', file, document: 2 },
      path: '__fixtures__/trees/apps/extra',
      prune: false,
      dependsOn: [
        {
          name: 'apps',
          namespace: 'flux-system',
          readyExpr:
            "dep.status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True') && " +
            'dep.metadata.generation == dep.status.observedGeneration',
        },
      ],
    });
  });

  it('invalid.yaml reports every mistake at once', async () => {
    const file = '__fixtures__/flux/invalid.yaml';
    const prefix = `${file}, document 1, Kustomization flux-system/broken: `;
    const text = await fixture('invalid.yaml');
    const problems = problemsOf(() => parseKustomizations(text, file));
    expect(problems).toEqual(
      [
        'spec.patchesStrategicMerge: was removed in kustomize.toolkit.fluxcd.io/v1; put each patch in spec.patches as {patch: <the patch as a string>}',
        'spec.interval: "10 minutes" is not a duration (use e.g. 30s, 5m, 1h30m)',
        'spec.timeout: 5 is not a duration (add a unit: use e.g. 30s, 5m, 1h30m)',
        'spec.path: "../outside" must stay inside the source root (a relative path that does not climb out with "..")',
        'spec.sourceRef.kind: "HelmRepository" is not one of GitRepository, OCIRepository, Bucket, ExternalArtifact',
        'spec.prune: must be a YAML boolean (true or false, without quotes), got the string "true"',
        'spec.targetNamespace: "Apps" is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)',
        'spec.components[0]: "https://github.com/example/components//ingress" is a remote component (https://); components must be local paths relative to spec.path',
        'spec.postBuild.substitute.replicas: must be a string, got number 3; quote it ("3") so YAML keeps it a string',
        'spec.postBuild.substitute.cluster-env: "cluster-env" is not a valid variable name (letters, digits and "_", not starting with a digit)',
        'spec.dependsOn[0]: must be a mapping {name, namespace?, readyExpr?}, got the string "flux-system/infra-controllers"; write {name: infra-controllers, namespace: flux-system}',
      ].map((problem) => prefix + problem),
    );
  });
});

describe('specFromInputs', () => {
  // A file's defaults without what only a file has (sourceRef, interval), a 5m timeout and no prune.
  const { sourceRef: _sourceRef, interval: _interval, retryInterval: _retryInterval, ...common } = defaultSpec();
  const DEFAULTS: KustomizationSpec = {
    ...common,
    name: 'root',
    origin: { kind: 'inputs' },
    timeout: 300_000,
    prune: false,
  };

  const SOURCE = 'acme/app1';
  const named = (path: string) => ({ name: derivedName(SOURCE, path), path });
  it.each<{ inputs: Omit<Parameters<typeof specFromInputs>[0], 'source'>; want: Partial<KustomizationSpec> }>([
    { inputs: { path: '.' }, want: named('.') },
    { inputs: { path: '' }, want: named('.') },
    { inputs: { path: './clusters/production' }, want: named('clusters/production') },
    { inputs: { path: 'Apps/My_App/', name: '' }, want: named('Apps/My_App') },
    {
      inputs: { path: 'apps', name: 'web', namespace: 'team-a' },
      want: { name: 'web', namespace: 'team-a', path: 'apps' },
    },
    {
      inputs: { path: 'apps', prune: true, wait: true, force: true },
      want: { ...named('apps'), prune: true, wait: true, force: true },
    },
    // The timeout as the settings read it (input "timeout", refused there when it is no duration).
    { inputs: { path: 'apps', timeout: 90_000 }, want: { ...named('apps'), timeout: 90_000 } },
    { inputs: { path: 'apps', timeout: 10_000 }, want: { ...named('apps'), timeout: 30_000 } },
    { inputs: { path: 'apps', timeout: undefined }, want: named('apps') },
    {
      inputs: { path: 'apps', targetNamespace: 'shop' },
      want: { ...named('apps'), targetNamespace: 'shop' },
    },
    { inputs: { path: 'apps', targetNamespace: '' }, want: named('apps') },
  ])('$inputs', ({ inputs, want }) => {
    expect(specFromInputs({ ...inputs, source: SOURCE })).toStrictEqual({ ...DEFAULTS, ...want });
  });

  it.each<[Omit<Parameters<typeof specFromInputs>[0], 'source'>, string[]]>([
    [
      { path: '../other' },
      ['input "path": "../other" must stay inside the source root (a relative path that does not climb out with "..")'],
    ],
    [
      { path: '/abs' },
      ['input "path": "/abs" must stay inside the source root (a relative path that does not climb out with "..")'],
    ],
    [
      { path: '.', targetNamespace: 'Shop' },
      [
        'input "target-namespace": "Shop" is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)',
      ],
    ],
    [
      { path: '.', name: 'My App' },
      [
        'input "name": "My App" is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)',
      ],
    ],
    [{ path: '.', namespace: 'x'.repeat(64) }, ['input "namespace": is 64 characters long, more than the 63 allowed']],
    [
      { path: '.', name: 'a'.repeat(64) },
      ['input "name": must be at most 63 characters (it is the value of Flux\'s owner label); got 64'],
    ],
    [
      { path: '..', targetNamespace: 'Shop' },
      [
        'input "path": ".." must stay inside the source root (a relative path that does not climb out with "..")',
        'input "target-namespace": "Shop" is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)',
      ],
    ],
  ])('%j is refused', (inputs, problems) => {
    expect(problemsOf(() => specFromInputs({ ...inputs, source: 'acme/app1' }))).toEqual(problems);
  });
});

describe('splitPatterns', () => {
  it.each([
    ['', []],
    ['clusters/prod.yaml', ['clusters/prod.yaml']],
    ['a.yaml, b.yaml,,c.yaml', ['a.yaml', 'b.yaml', 'c.yaml']],
    ['a.yaml\n  b/*.yaml  \n\n', ['a.yaml', 'b/*.yaml']],
    ['# infrastructure first\ninfra.yaml\napps.yaml # then apps, after a comma, too\n', ['infra.yaml', 'apps.yaml']],
    ['a.yaml\r\nb.yaml', ['a.yaml', 'b.yaml']],
    ['clusters/{prod,staging}/*.yaml, infra.yaml', ['clusters/{prod,staging}/*.yaml', 'infra.yaml']],
    ['  # only a comment', []],
  ])('%j → %j', (input, want) => {
    expect(splitPatterns(input)).toEqual(want);
  });
});

describe('loadKustomizations', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'spec-load-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function put(path: string, text: string): Promise<void> {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }

  const named = (name: string, namespace = 'flux-system'): string => yamlOf(kustomization({}, { name, namespace }));
  const names = (specs: KustomizationSpec[]): string[] => specs.map((s) => `${s.namespace}/${s.name}`);

  it('loads files and globs in pattern order, sorted within a glob, each file once', async () => {
    await put('clusters/prod/z.yaml', named('z'));
    await put('clusters/prod/a.yaml', named('a'));
    await put('clusters/prod/m.yml', named('m'));
    await put('infra.yaml', named('infra'));
    const specs = await loadKustomizations(
      ['infra.yaml', 'clusters/prod/*.{yaml,yml}', './clusters/prod/a.yaml'],
      root,
    );
    expect(names(specs)).toEqual(['flux-system/infra', 'flux-system/a', 'flux-system/m', 'flux-system/z']);
    expect(specs[1]?.origin).toEqual({ kind: 'file', file: 'clusters/prod/a.yaml', document: 1 });
  });

  it('accepts an absolute pattern inside the root', async () => {
    await put('k.yaml', named('k'));
    expect(names(await loadKustomizations([join(root, 'k.yaml')], root))).toEqual(['flux-system/k']);
  });

  it('loads the fixtures', async () => {
    for (const name of ['infrastructure.yaml', 'apps.yaml']) {
      await put(`flux/${name}`, await readFile(join(FIXTURES, name), 'utf8'));
    }
    const specs = await loadKustomizations(['flux/*.yaml'], root);
    expect(names(specs)).toEqual(['flux-system/apps', 'flux-system/apps-extra', 'flux-system/infra-controllers']);
  });

  it('skips files without a Kustomization when a glob matches them', async () => {
    await put('clusters/a.yaml', named('a'));
    await put('clusters/cm.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }));
    await put('clusters/kustomization.yaml', 'resources: [a.yaml]\n');
    expect(names(await loadKustomizations(['clusters/**/*.yaml'], root))).toEqual(['flux-system/a']);
  });

  const RESOURCE_SET = `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: apps, namespace: flux-system}
spec:
  inputs: [{tenant: a}]
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata: {name: << inputs.tenant >>-apps}
      spec: {interval: 1m, prune: true, path: ./apps, sourceRef: {kind: OCIRepository, name: flux-system}}
    - {apiVersion: v1, kind: Namespace, metadata: {name: << inputs.tenant >>}}
`;
  const FLUX_INSTANCE = `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: flux-system}
spec:
  distribution: {version: 2.x, registry: ghcr.io/fluxcd}
  sync: {kind: OCIRepository, url: oci://ghcr.io/acme/fleet, ref: latest, path: clusters/prod}
`;
  const GENERATES = 'generates Kustomizations that this run does not see';

  it('notes each matched file without a Kustomization, named or globbed, and what it holds', async () => {
    await put('clusters/prod/infra.yaml', named('infra'));
    await put('clusters/prod/apps.yaml', RESOURCE_SET);
    await put('clusters/prod/flux-instance.yaml', FLUX_INSTANCE);
    await put('clusters/prod/empty.yaml', '');
    await put(
      'clusters/prod/kustomization.yaml',
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: k}\nresources: [infra.yaml]\n',
    );
    await put(
      'extra/release.yaml',
      stringify({
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'podinfo', namespace: 'apps' },
      }),
    );
    const notes: string[] = [];
    const specs = await loadKustomizations(['clusters/*/*.yaml', 'extra/release.yaml'], root, {
      note: (l) => notes.push(l),
    });
    expect(names(specs)).toEqual(['flux-system/infra']);
    expect(notes).toEqual([
      'clusters/prod/apps.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization (ResourceSet flux-system/apps): skipped',
      'clusters/prod/empty.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization: skipped',
      'clusters/prod/flux-instance.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization (FluxInstance flux-system/flux): skipped',
      'clusters/prod/kustomization.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization (kustomize.config.k8s.io/v1beta1 Kustomization k): skipped',
      'extra/release.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization (HelmRelease apps/podinfo): skipped',
      `ResourceSet flux-system/apps in clusters/prod/apps.yaml ${GENERATES}: flux-system/<< inputs.tenant >>-apps (once per input); this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
      `FluxInstance flux-system/flux in clusters/prod/flux-instance.yaml ${GENERATES}: flux-system/flux-system (spec.sync: OCIRepository, path clusters/prod); this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
    ]);
  });

  it('names no generated Kustomization the files define, and no generator of other kinds', async () => {
    await put('c/flux-system.yaml', named('flux-system'));
    await put('c/flux-instance.yaml', FLUX_INSTANCE);
    await put('c/rs.yaml', RESOURCE_SET.replace(/ {4}- apiVersion: kustomize[\s\S]*?sourceRef.*\n/, ''));
    const notes: string[] = [];
    await loadKustomizations(['c/*.yaml'], root, { note: (l) => notes.push(l) });
    expect(notes.filter((n) => n.includes(GENERATES))).toEqual([]);
    expect(notes).toHaveLength(2);
  });

  it('names a ResourceSet whose resourcesTemplate makes Kustomizations', async () => {
    await put('c/k.yaml', named('k'));
    await put(
      'c/rs.yaml',
      stringify({
        apiVersion: 'fluxcd.controlplane.io/v1',
        kind: 'ResourceSet',
        metadata: { name: 't', namespace: 'x' },
        spec: { resourcesTemplate: 'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n' },
      }),
    );
    const notes: string[] = [];
    await loadKustomizations(['c/*.yaml'], root, { note: (l) => notes.push(l) });
    expect(notes).toContain(
      `ResourceSet x/t in c/rs.yaml ${GENERATES}: the ones of its spec.resourcesTemplate; this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
    );
  });

  it('names at most 20 skipped files, then counts the rest', async () => {
    await put('m/k.yaml', named('k'));
    for (let i = 0; i < 23; i++) await put(`m/cm-${String(i).padStart(2, '0')}.yaml`, '');
    const notes: string[] = [];
    await loadKustomizations(['m/*.yaml'], root, { note: (l) => notes.push(l) });
    expect(notes).toHaveLength(21);
    expect(notes[20]).toBe('3 more matched files hold no kustomize.toolkit.fluxcd.io/v1 Kustomization: skipped');
  });

  it('refuses files that hold no Kustomization at all, naming each pattern and the generators', async () => {
    await put('clusters/prod/apps.yaml', RESOURCE_SET);
    await put('only.yaml', FLUX_INSTANCE);
    expect(await asyncProblemsOf(() => loadKustomizations(['clusters/*/*.yaml', 'only.yaml'], root))).toEqual([
      'no kustomize.toolkit.fluxcd.io/v1 Kustomization in the files that kustomizations pattern "clusters/*/*.yaml" matches: clusters/prod/apps.yaml',
      'no kustomize.toolkit.fluxcd.io/v1 Kustomization in only.yaml',
      `ResourceSet flux-system/apps in clusters/prod/apps.yaml ${GENERATES}: flux-system/<< inputs.tenant >>-apps (once per input); this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
      `FluxInstance flux-system/flux in only.yaml ${GENERATES}: flux-system/flux-system (spec.sync: OCIRepository, path clusters/prod); this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
    ]);
  });

  it('leaves a cluster whose files hold no Kustomization out, with a note; refuses when no cluster has any', async () => {
    await put('clusters/prod/infra.yaml', named('infra'));
    await put('clusters/prod/apps.yaml', named('apps'));
    await put('clusters/staging/apps.yaml', RESOURCE_SET);
    await put('clusters/staging/infra.yaml', named('infra'));
    await put('clusters/dev/flux.yaml', FLUX_INSTANCE);
    const notes: string[] = [];
    const byCluster = await loadClusters(['clusters/*/*.yaml'], root, ['dev', 'prod', 'staging'], {
      note: (l) => notes.push(l),
    });
    expect([...byCluster].map(([c, specs]) => [c, names(specs)])).toEqual([
      ['prod', ['flux-system/apps', 'flux-system/infra']],
      ['staging', ['flux-system/infra']],
    ]);
    expect(notes[0]).toBe(
      'cluster dev: no kustomize.toolkit.fluxcd.io/v1 Kustomization in its files that kustomizations matches (clusters/dev/flux.yaml): left out of the plan',
    );
    expect(notes[1]).toMatch(/^FluxInstance flux-system\/flux in clusters\/dev\/flux.yaml generates/);
    expect(notes[2]).toBe(
      'clusters/staging/apps.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization (ResourceSet flux-system/apps): skipped',
    );
    expect(notes).toHaveLength(4);

    expect(await asyncProblemsOf(() => loadClusters(['clusters/dev/*.yaml'], root, ['dev']))).toEqual([
      'no kustomize.toolkit.fluxcd.io/v1 Kustomization in the files that kustomizations pattern "clusters/dev/*.yaml" matches: clusters/dev/flux.yaml',
      `FluxInstance flux-system/flux in clusters/dev/flux.yaml ${GENERATES}: flux-system/flux-system (spec.sync: OCIRepository, path clusters/prod); this action does not expand it (add their Kustomization files to the kustomizations input to reconcile them here)`,
    ]);
  });

  it.each<[string[], (root: string) => string[]]>([
    [['missing.yaml'], (r) => [`kustomizations pattern "missing.yaml" matches no file under ${r}`]],
    [['nothing/*.yaml'], (r) => [`kustomizations pattern "nothing/*.yaml" matches no file under ${r}`]],
    [['dir'], (r) => [`kustomizations pattern "dir" matches no file under ${r}`]],
    [['../escape.yaml'], (r) => [`kustomizations pattern "../escape.yaml" must stay inside the root ${r}`]],
    [['/etc/*.conf'], (r) => [`kustomizations pattern "/etc/*.conf" must stay inside the root ${r}`]],
    [['.'], (r) => [`kustomizations pattern "." must stay inside the root ${r}`]],
    [['cm.yaml'], () => ['no kustomize.toolkit.fluxcd.io/v1 Kustomization in cm.yaml']],
    [
      ['only-cm/*.yaml'],
      () => [
        'no kustomize.toolkit.fluxcd.io/v1 Kustomization in the files that kustomizations pattern "only-cm/*.yaml" matches: only-cm/a.yaml, only-cm/b.yaml',
      ],
    ],
  ])('%j is refused', async (patterns, want) => {
    await put('dir/k.yaml', named('k'));
    await put('cm.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }));
    await put('only-cm/a.yaml', stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }));
    await put('only-cm/b.yaml', '');
    expect(await asyncProblemsOf(() => loadKustomizations(patterns, root))).toEqual(want(root));
  });

  it('refuses the same namespace/name twice, naming both files', async () => {
    await put('a.yaml', named('apps'));
    await put('b.yaml', `${named('other')}---\n${named('apps')}`);
    await put('c.yaml', named('apps', 'team-a'));
    expect(await asyncProblemsOf(() => loadKustomizations(['*.yaml'], root))).toEqual([
      'Kustomization flux-system/apps is defined twice: in a.yaml, document 1 and in b.yaml, document 2',
    ]);
  });

  it('reports the problems of every file together', async () => {
    await put('a.yaml', yamlOf(kustomization({ wait: 'yes' })));
    await put('b.yaml', yamlOf(kustomization({ timeout: '1d' }, { name: 'b' })));
    expect(await asyncProblemsOf(() => loadKustomizations(['a.yaml', 'b.yaml', 'none.yaml'], root))).toEqual([
      'a.yaml, document 1, Kustomization flux-system/apps: spec.wait: must be a YAML boolean (true or false, without quotes), got the string "yes"',
      'b.yaml, document 1, Kustomization flux-system/b: spec.timeout: "1d" is not a duration (use e.g. 30s, 5m, 1h30m)',
      `kustomizations pattern "none.yaml" matches no file under ${root}`,
    ]);
  });

  it('refuses a file that links outside the root', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'spec-outside-'));
    try {
      await writeFile(join(outside, 'k.yaml'), named('k'));
      await symlink(join(outside, 'k.yaml'), join(root, 'link.yaml'));
      expect(await asyncProblemsOf(() => loadKustomizations(['*.yaml'], root))).toEqual([
        `kustomizations pattern "*.yaml": link.yaml links outside the root: it leaves the source root through a symlink: "link.yaml" -> ${JSON.stringify(join(outside, 'k.yaml'))}`,
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('returns nothing for no patterns', async () => {
    expect(await loadKustomizations([], root)).toEqual([]);
  });
});
