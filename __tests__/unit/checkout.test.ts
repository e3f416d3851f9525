import { describe, expect, it } from 'vitest';
import { checkoutRef, checkoutSourceOf, nearest, sourceVerdict, type CheckoutFacts } from '../../src/flux/checkout.js';
import { gitRepositoriesIn, sourcesIn } from '../../src/flux/source-files.js';
import type { SourceDefs } from '../../src/flux/source-defs.js';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import type { KustomizationSpec } from '../../src/flux/types.js';

const spec = (ref?: { name: string; namespace?: string }): KustomizationSpec => ({
  ...specFromInputs({ path: 'apps', name: 'apps', source: 'acme/fleet' }),
  ...(ref ? { sourceRef: { kind: 'GitRepository' as const, ...ref } } : {}),
});

const def = (name: string, url: string, namespace = 'flux-system', ref?: Record<string, string>) => ({
  namespace,
  name,
  url,
  file: 'gotk-sync.yaml',
  ...(ref ? { ref } : {}),
});
const FLEET = 'https://github.com/acme/fleet';

describe('sourceVerdict', () => {
  it.each<[string, KustomizationSpec, CheckoutFacts, 'checkout' | 'fetch' | 'other', RegExp?]>([
    ['no sourceRef (the path input)', spec(), { source: 'acme/fleet', definitions: [] }, 'checkout'],
    [
      'the GitRepository of this repository, https',
      spec({ name: 'flux-system' }),
      { source: 'acme/fleet', definitions: [def('flux-system', 'https://github.com/acme/fleet')] },
      'checkout',
    ],
    [
      'the GitRepository of this repository, ssh with .git',
      spec({ name: 'flux-system' }),
      { source: 'acme/fleet', definitions: [def('flux-system', 'ssh://git@github.com/acme/fleet.git')] },
      'checkout',
    ],
    [
      'a tenant GitRepository of another repository',
      spec({ name: 'dev-team', namespace: 'apps' }),
      {
        source: 'acme/fleet',
        definitions: [
          def('flux-system', 'https://github.com/acme/fleet'),
          def('dev-team', 'https://github.com/acme/dev-team', 'apps'),
        ],
      },
      'fetch',
      /^https:\/\/github\.com\/acme\/dev-team$/,
    ],
    [
      'a tenant GitRepository over SSH',
      spec({ name: 'dev-team', namespace: 'apps' }),
      { source: 'acme/fleet', definitions: [def('dev-team', 'ssh://git@github.com/acme/dev-team', 'apps')] },
      'other',
      /^spec\.sourceRef GitRepository apps\/dev-team \(gotk-sync\.yaml\) points at ssh:\/\/git@github\.com\/acme\/dev-team, not at this repository \(acme\/fleet\), and only https:\/\/ \(and file:\/\/\) URLs are fetched: .* building this repository instead is never done$/,
    ],
    [
      'a GitRepository that follows a semver range',
      spec({ name: 'dev-team', namespace: 'apps' }),
      {
        source: 'acme/fleet',
        definitions: [def('dev-team', 'https://github.com/acme/dev-team', 'apps', { semver: '>=1.0.0' })],
      },
      'fetch',
      /^https:\/\/github\.com\/acme\/dev-team$/,
    ],
    [
      'the same name in another namespace does not count',
      spec({ name: 'flux-system', namespace: 'apps' }),
      { source: 'acme/fleet', definitions: [def('flux-system', 'https://github.com/acme/other')] },
      'checkout',
      /not defined in the repository: taken to be this checkout/,
    ],
    [
      'named by the source input',
      spec({ name: 'mirror' }),
      { source: 'acme/fleet', explicit: 'flux-system/mirror', definitions: [] },
      'checkout',
    ],
    [
      'not the one the source input names',
      spec({ name: 'flux-system' }),
      { source: 'acme/fleet', explicit: 'flux-system/mirror', definitions: [] },
      'other',
      /is not this checkout \(the source input, --source on the CLI, names flux-system\/mirror\) and is not defined in the repository, so it cannot be fetched/,
    ],
    [
      'not the one the source input names, defined in the repository',
      spec({ name: 'flux-system' }),
      { source: 'acme/fleet', explicit: 'flux-system/mirror', definitions: [def('flux-system', FLEET)] },
      'fetch',
      /^https:\/\/github\.com\/acme\/fleet$/,
    ],
    [
      'this repository at the branch checked out',
      spec({ name: 'flux-system' }),
      {
        source: 'acme/fleet',
        branch: 'main',
        definitions: [def('flux-system', FLEET, 'flux-system', { branch: 'main' })],
      },
      'checkout',
    ],
    [
      // flux2-multi-tenancy: a tenant's GitRepository is this repository's dev-team branch.
      'this repository at another branch',
      spec({ name: 'dev-team', namespace: 'apps' }),
      { source: 'acme/fleet', branch: 'main', definitions: [def('dev-team', FLEET, 'apps', { branch: 'dev-team' })] },
      'fetch',
      /^https:\/\/github\.com\/acme\/fleet$/,
    ],
    [
      'this repository at a tag',
      spec({ name: 'flux-system' }),
      {
        source: 'acme/fleet',
        branch: 'main',
        definitions: [def('flux-system', FLEET, 'flux-system', { tag: 'v1.2.0' })],
      },
      'fetch',
      /^https:\/\/github\.com\/acme\/fleet$/,
    ],
    [
      'this repository at a branch, the checkout branch unknown',
      spec({ name: 'flux-system' }),
      { source: 'acme/fleet', definitions: [def('flux-system', FLEET, 'flux-system', { branch: 'main' })] },
      'checkout',
      /\(branch main\) taken to be this checkout: the branch checked out is not known/,
    ],
    [
      "no remote to compare with, and not Flux's own GitRepository: another repository",
      spec({ name: 'dev-team', namespace: 'apps' }),
      { source: 'local:/work/fleet', definitions: [def('dev-team', 'https://github.com/acme/dev-team', 'apps')] },
      'fetch',
      /^https:\/\/github\.com\/acme\/dev-team$/,
    ],
    [
      'no remote to compare with',
      spec({ name: 'flux-system' }),
      { source: 'local:/work/fleet', definitions: [def('flux-system', 'https://github.com/acme/fleet')] },
      'checkout',
      /the checkout has no git remote to compare with/,
    ],
  ])('%s', (_, s, facts, kind, text) => {
    const verdict = sourceVerdict(s, facts);
    expect(verdict.kind).toBe(kind);
    // What it says: the problem, the note, or the URL it fetches.
    const said =
      verdict.kind === 'other'
        ? verdict.problem
        : verdict.kind === 'fetch'
          ? verdict.source.kind === 'GitRepository'
            ? verdict.source.def.url
            : verdict.source.kind
          : verdict.note;
    if (text) expect(said).toMatch(text);
    else expect(said).toBeUndefined();
  });
});

describe('gitRepositoriesIn', () => {
  it.each([
    [
      'a Flux sync file',
      `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: ssh://git@github.com/acme/fleet}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x}\n`,
      [{ namespace: 'flux-system', name: 'flux-system', url: 'ssh://git@github.com/acme/fleet', file: 'f.yaml' }],
    ],
    [
      'no namespace: flux-system',
      `apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: GitRepository\nmetadata: {name: a}\nspec: {url: https://x/y}\n`,
      [{ namespace: 'flux-system', name: 'a', url: 'https://x/y', file: 'f.yaml' }],
    ],
    [
      'another group',
      `apiVersion: example.com/v1\nkind: GitRepository\nmetadata: {name: a}\nspec: {url: https://x/y}\n`,
      [],
    ],
    ['broken YAML', `kind: GitRepository\n: : :\n  - [`, []],
    ['no url', `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: a}\n`, []],
  ])('%s', (_, text, want) => {
    expect(gitRepositoriesIn(text, 'f.yaml')).toEqual(want);
  });
});

/** A Kustomization in flux-system whose sourceRef is `kind`/`name`. */
const refTo = (
  kind: 'OCIRepository' | 'Bucket' | 'ExternalArtifact' | 'GitRepository',
  name: string,
): KustomizationSpec => ({
  ...specFromInputs({ path: 'apps', name: 'apps', source: 'acme/fleet' }),
  sourceRef: { kind, name },
});

/** The source objects of a repository, parsed from YAML as the run finds them. */
const defsOf = (text: string): { definitions: CheckoutFacts['definitions']; others: SourceDefs } => {
  const found = sourcesIn(text, 'clusters/dev/sources.yaml');
  return { definitions: found.git, others: found.others };
};

const GENERATOR = `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: flux-system, namespace: flux-system}
spec:
  sources:
    - {alias: monorepo, kind: GitRepository, name: flux-system}
    - {alias: charts, kind: OCIRepository, name: charts}
  artifacts:
    - name: apps
      originRevision: "@monorepo"
      copy:
        - {from: "@monorepo/apps/**", to: "@artifact/"}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: charts, namespace: flux-system}
spec: {url: oci://ghcr.io/acme/charts, ref: {tag: v1}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: configs, namespace: flux-system}
spec: {bucketName: configs, endpoint: minio.local:9000, prefix: dev/}
`;

describe('sourceVerdict, other kinds', () => {
  it.each<[string, KustomizationSpec, string, string, RegExp]>([
    [
      'an OCIRepository defined in the repository',
      refTo('OCIRepository', 'charts'),
      GENERATOR,
      'fetch',
      /^OCIRepository oci:\/\/ghcr.io\/acme\/charts$/,
    ],
    ['a Bucket defined in the repository', refTo('Bucket', 'configs'), GENERATOR, 'fetch', /^Bucket minio.local:9000$/],
    [
      'an OCIRepository defined nowhere',
      refTo('OCIRepository', 'nowhere'),
      GENERATOR,
      'other',
      /OCIRepository flux-system\/nowhere is not defined in the repository.*never done/,
    ],
    [
      'a Bucket defined nowhere',
      refTo('Bucket', 'nowhere'),
      '',
      'other',
      /Bucket flux-system\/nowhere is not defined in the repository/,
    ],
    [
      'an ExternalArtifact of a generator: its sources planned by alias',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR,
      'fetch',
      /^ExternalArtifact apps from ArtifactGenerator flux-system: monorepo=checkout, charts=OCIRepository$/,
    ],
    [
      'an ExternalArtifact no generator makes',
      refTo('ExternalArtifact', 'infra'),
      GENERATOR,
      'other',
      /ExternalArtifact flux-system\/infra is not made by any ArtifactGenerator defined in the repository/,
    ],
    [
      'a generator whose source cannot be had',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR.replace('name: charts}\n  artifacts', 'name: missing}\n  artifacts'),
      'other',
      /cannot be made: ArtifactGenerator flux-system\/flux-system \(clusters\/dev\/sources.yaml\) source @charts: OCIRepository flux-system\/missing is not defined/,
    ],
    [
      'a generator with a pathPattern',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR.replace('spec:\n  sources:', 'spec:\n  pathPattern: "@monorepo/apps/{app}"\n  sources:'),
      'other',
      /has a spec.pathPattern, which this action does not generate yet/,
    ],
    [
      'a generator naming an alias it does not define',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR.replace('"@monorepo/apps/**"', '"@mono/apps/**"'),
      'other',
      /names source alias @mono, which spec.sources does not define/,
    ],
    [
      'an artifact made from itself',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR.replace(
        '{alias: charts, kind: OCIRepository, name: charts}',
        '{alias: charts, kind: ExternalArtifact, name: apps}',
      ),
      'other',
      /is made from itself \(sources flux-system\/apps → flux-system\/apps\)/,
    ],
    [
      'a HelmChart source',
      refTo('ExternalArtifact', 'apps'),
      GENERATOR.replace(
        '{alias: charts, kind: OCIRepository, name: charts}',
        '{alias: charts, kind: HelmChart, name: podinfo}',
      ),
      'other',
      /HelmChart sources are not fetched by this action/,
    ],
  ])('%s', (_, s, yaml, kind, text) => {
    const verdict = sourceVerdict(s, { source: 'acme/fleet', ...defsOf(yaml) });
    expect(verdict.kind).toBe(kind);
    let said: string;
    if (verdict.kind === 'other') said = verdict.problem;
    else if (verdict.kind === 'fetch' && verdict.source.kind === 'OCIRepository')
      said = `OCIRepository ${verdict.source.def.url}`;
    else if (verdict.kind === 'fetch' && verdict.source.kind === 'Bucket')
      said = `Bucket ${verdict.source.def.endpoint}`;
    else if (verdict.kind === 'fetch' && verdict.source.kind === 'ExternalArtifact') {
      const inputs = Object.entries(verdict.source.inputs).map(([alias, p]) => `${alias}=${p.kind}`);
      said = `ExternalArtifact ${verdict.source.name} from ArtifactGenerator ${verdict.source.generator.name}: ${inputs.join(', ')}`;
    } else said = JSON.stringify(verdict);
    expect(said).toMatch(text);
  });

  it('an ExternalArtifact of a GitRepository that is not this checkout fetches it', () => {
    const yaml = `${GENERATOR}---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: https://github.com/acme/other, ref: {branch: main}}
`;
    const verdict = sourceVerdict(refTo('ExternalArtifact', 'apps'), { source: 'acme/fleet', ...defsOf(yaml) });
    expect(verdict.kind).toBe('fetch');
    const input =
      verdict.kind === 'fetch' && verdict.source.kind === 'ExternalArtifact'
        ? verdict.source.inputs['monorepo']
        : undefined;
    expect(input?.kind === 'GitRepository' ? input.def.url : input?.kind).toBe('https://github.com/acme/other');
  });
});

describe('the source input: the checkout as any source kind', () => {
  it.each<[string, string, { kind: string; key: string }]>([
    ['flux-system', 'flux-system/flux-system', { kind: 'GitRepository', key: 'flux-system/flux-system' }],
    ['apps/tenant', 'apps/tenant', { kind: 'GitRepository', key: 'apps/tenant' }],
    ['GitRepository/apps/tenant', 'apps/tenant', { kind: 'GitRepository', key: 'apps/tenant' }],
    [
      'OCIRepository/flux-system/flux-system',
      'OCIRepository/flux-system/flux-system',
      { kind: 'OCIRepository', key: 'flux-system/flux-system' },
    ],
    ['OCIRepository/fleet', 'OCIRepository/flux-system/fleet', { kind: 'OCIRepository', key: 'flux-system/fleet' }],
    ['Bucket/infra/configs', 'Bucket/infra/configs', { kind: 'Bucket', key: 'infra/configs' }],
    [
      'ExternalArtifact/flux-system/apps',
      'ExternalArtifact/flux-system/apps',
      { kind: 'ExternalArtifact', key: 'flux-system/apps' },
    ],
  ])('%s', (input, settings, ref) => {
    expect(checkoutSourceOf(input)).toBe(settings);
    expect(checkoutRef(settings)).toEqual(ref);
  });

  it.each(['HelmRepository/flux-system/x', 'ocirepository/flux-system/x/y', 'OCIRepository/', 'a/b/c', 'Flux/System'])(
    '%s is refused',
    (input) => {
      expect(() => checkoutSourceOf(input)).toThrow(
        /source must be the source that is this checkout as \[KIND\/\]NAMESPACE\/NAME/,
      );
    },
  );

  const SYNC = `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: oci://ghcr.io/acme/fleet, ref: {tag: latest}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: configs, namespace: flux-system}
spec: {bucketName: configs, endpoint: minio.local:9000}
`;
  const verdictOf = (s: KustomizationSpec, explicit?: string, yaml = SYNC) =>
    sourceVerdict(s, { source: 'acme/fleet', ...(explicit ? { explicit } : {}), ...defsOf(yaml) });

  it('an OCIRepository the source input names is this checkout, defined in the repository or not', () => {
    expect(verdictOf(refTo('OCIRepository', 'flux-system'), 'OCIRepository/flux-system/flux-system')).toEqual({
      kind: 'checkout',
    });
    expect(verdictOf(refTo('OCIRepository', 'flux-system'), 'OCIRepository/flux-system/flux-system', '')).toEqual({
      kind: 'checkout',
    });
    expect(verdictOf(refTo('Bucket', 'configs'), 'Bucket/flux-system/configs')).toEqual({ kind: 'checkout' });
  });

  it('an ExternalArtifact the source input names is this checkout, with no ArtifactGenerator making it', () => {
    expect(verdictOf(refTo('ExternalArtifact', 'apps'), 'ExternalArtifact/flux-system/apps')).toEqual({
      kind: 'checkout',
    });
    const other = verdictOf(refTo('ExternalArtifact', 'apps'), 'ExternalArtifact/flux-system/other');
    expect(other.kind).toBe('other');
  });

  it('without it, or when it names another source, the OCIRepository is pulled, never this checkout', () => {
    expect(verdictOf(refTo('OCIRepository', 'flux-system')).kind).toBe('fetch');
    expect(verdictOf(refTo('OCIRepository', 'flux-system'), 'flux-system/flux-system').kind).toBe('fetch');
    expect(verdictOf(refTo('OCIRepository', 'flux-system'), 'Bucket/flux-system/flux-system').kind).toBe('fetch');
    const missing = verdictOf(refTo('OCIRepository', 'flux-system'), undefined, '');
    expect(missing.kind === 'other' ? missing.problem : '').toMatch(
      /is not defined in the repository.*unless the source input \(--source on the CLI\) says it is this checkout: OCIRepository\/flux-system\/flux-system$/,
    );
  });

  it('a GitRepository is not this checkout when the source input names an OCIRepository', () => {
    const v = verdictOf(refTo('GitRepository', 'flux-system'), 'OCIRepository/flux-system/flux-system');
    expect(v.kind === 'other' ? v.problem : '').toMatch(
      /is not this checkout \(the source input, --source on the CLI, names OCIRepository\/flux-system\/flux-system\)/,
    );
  });

  it('an ExternalArtifact made from the OCIRepository that is this checkout takes it from the checkout', () => {
    const yaml = `${GENERATOR.replace('name: charts}', 'name: flux-system}')}---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: https://github.com/acme/monorepo, ref: {branch: main}}
`;
    const v = verdictOf(refTo('ExternalArtifact', 'apps'), 'OCIRepository/flux-system/flux-system', yaml);
    expect(v.kind === 'fetch' && v.source.kind === 'ExternalArtifact' ? v.source.inputs['charts'] : v).toEqual({
      kind: 'checkout',
    });
  });
});

describe('sourcesIn', () => {
  it('reads OCIRepository, Bucket and ArtifactGenerator fields that decide what is fetched', () => {
    const { others } = defsOf(GENERATOR);
    expect(others.oci).toEqual([
      {
        kind: 'OCIRepository',
        namespace: 'flux-system',
        name: 'charts',
        file: 'clusters/dev/sources.yaml',
        url: 'oci://ghcr.io/acme/charts',
        ref: { tag: 'v1' },
      },
    ]);
    expect(others.buckets).toEqual([
      {
        kind: 'Bucket',
        namespace: 'flux-system',
        name: 'configs',
        file: 'clusters/dev/sources.yaml',
        provider: 'generic',
        bucketName: 'configs',
        endpoint: 'minio.local:9000',
        prefix: 'dev/',
      },
    ]);
    expect(others.generators[0]).toMatchObject({
      name: 'flux-system',
      sources: [
        { alias: 'monorepo', kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' },
        { alias: 'charts', kind: 'OCIRepository', name: 'charts', namespace: 'flux-system' },
      ],
      artifacts: [
        {
          name: 'apps',
          originRevision: '@monorepo',
          copy: [{ from: '@monorepo/apps/**', to: '@artifact/', exclude: [], strategy: 'Overwrite' }],
        },
      ],
    });
    expect(others.generators[0]?.problem).toBeUndefined();
  });

  it.each([
    ['a bad strategy', 'strategy: Move', /copy\[0\].strategy must be one of Overwrite, Merge, Extract/],
    ['a destination outside @artifact', 'to: "/tmp/x"', /copy\[0\].to must start with @artifact\//],
  ])('names what is wrong with a generator: %s', (_, field, problem) => {
    const yaml = GENERATOR.replace(
      'to: "@artifact/"}',
      field.startsWith('to:') ? `${field}}` : `to: "@artifact/", ${field}}`,
    );
    expect(defsOf(yaml).others.generators[0]?.problem).toMatch(problem);
  });

  it('reads layerSelector, verify and insecure of an OCIRepository', () => {
    const yaml = `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: a, namespace: apps}
spec:
  url: oci://registry.local:5000/a
  insecure: true
  ref: {semver: ">=1.0.0", semverFilter: ".*-rc.*"}
  layerSelector: {mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip, operation: copy}
  verify: {provider: cosign}
  secretRef: {name: regcred}
`;
    expect(defsOf(yaml).others.oci[0]).toMatchObject({
      namespace: 'apps',
      insecure: true,
      ref: { semver: '>=1.0.0', semverFilter: '.*-rc.*' },
      layerSelector: { mediaType: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip', operation: 'copy' },
      verify: true,
      secretRef: 'regcred',
    });
  });
});

describe('nearest: the definition beside the referring file', () => {
  const at = (file: string, url = 'https://github.com/acme/fleet') => ({
    namespace: 'flux-system',
    name: 'flux-system',
    file,
    url,
  });
  it.each<[string, ReturnType<typeof at>[], string, string[]]>([
    [
      'one definition',
      [at('clusters/prod/gotk-sync.yaml')],
      'clusters/dev/apps.yaml',
      ['clusters/prod/gotk-sync.yaml'],
    ],
    [
      'one per cluster: the one of the same cluster',
      [
        at('clusters/prod/flux-system/gotk-sync.yaml', 'https://a'),
        at('clusters/dev/flux-system/gotk-sync.yaml', 'https://b'),
      ],
      'clusters/dev/apps.yaml',
      ['clusters/dev/flux-system/gotk-sync.yaml'],
    ],
    [
      'equally near and different: all of them (ambiguous)',
      [at('clusters/prod/a.yaml', 'https://a'), at('clusters/dev/a.yaml', 'https://b')],
      'infra/apps.yaml',
      ['clusters/prod/a.yaml', 'clusters/dev/a.yaml'],
    ],
    [
      'equally near and identical: one',
      [at('clusters/prod/a.yaml'), at('clusters/dev/a.yaml')],
      'infra/apps.yaml',
      ['clusters/prod/a.yaml'],
    ],
  ])('%s', (_, defs, from, want) => {
    expect(nearest(defs, from).map((d) => d.file)).toEqual(want);
  });
});

describe('sourceVerdict, spec.include', () => {
  const FLEET_SYNC = (include: string) => `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  url: https://github.com/acme/fleet
  ref: {branch: main}
  include:
${include}
`;
  const SHARED = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: shared, namespace: flux-system}
spec: {url: https://github.com/acme/shared, ref: {tag: v1.0.0}}
`;
  const verdictOf = (yaml: string) =>
    sourceVerdict(refTo('GitRepository', 'flux-system'), { source: 'acme/fleet', branch: 'main', ...defsOf(yaml) });

  it('reads include entries, with their defaults left to the plan', () => {
    const defs = defsOf(
      FLEET_SYNC('    - repository: {name: shared}\n      fromPath: deploy\n    - repository: {name: other}'),
    ).definitions;
    expect(defs[0]?.include).toEqual([{ name: 'shared', fromPath: 'deploy' }, { name: 'other' }]);
  });

  it('this checkout with an include is copied and gets the included repository at toPath', () => {
    const v = verdictOf(`${FLEET_SYNC('    - repository: {name: shared}\n      toPath: vendor/shared')}---\n${SHARED}`);
    expect(v.kind).toBe('fetch');
    const source = v.kind === 'fetch' ? v.source : undefined;
    expect(source?.kind === 'GitRepository' && source.checkout).toBe(true);
    const include = source?.kind === 'GitRepository' ? source.include : undefined;
    expect(
      include?.map((i) => ({ ...i, source: i.source.kind === 'GitRepository' ? i.source.def.url : i.source.kind })),
    ).toEqual([{ name: 'shared', fromPath: '', toPath: 'vendor/shared', source: 'https://github.com/acme/shared' }]);
  });

  it.each<[string, string, RegExp]>([
    [
      'an include not defined in the repository',
      FLEET_SYNC('    - repository: {name: missing}'),
      /cannot be had: GitRepository flux-system\/flux-system \(clusters\/dev\/sources.yaml\) spec.include GitRepository flux-system\/missing is not defined in the repository/,
    ],
    [
      'an include of itself, through another',
      `${FLEET_SYNC('    - repository: {name: shared}')}---\n${SHARED.replace('ref: {tag: v1.0.0}}', 'ref: {tag: v1.0.0}, include: [{repository: {name: flux-system}}]}')}`,
      /includes itself \(spec.include flux-system\/flux-system → flux-system\/shared → flux-system\/flux-system\)/,
    ],
  ])('fails %s', (_, yaml, problem) => {
    const v = verdictOf(yaml);
    expect(v.kind).toBe('other');
    expect(v.kind === 'other' ? v.problem : '').toMatch(problem);
  });
});

describe('spec.timeout of a source', () => {
  it.each<[string, number | undefined]>([
    ['90s', 90_000],
    ['2m30s', 150_000],
    ['soon', undefined],
  ])('%s', (timeout, want) => {
    const yaml = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: a}
spec: {url: https://x/y, timeout: ${timeout}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: a}
spec: {url: oci://x/y, timeout: ${timeout}}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: a}
spec: {bucketName: b, endpoint: e, timeout: ${timeout}}
`;
    const found = sourcesIn(yaml, 'f.yaml');
    expect([found.git[0]?.timeoutMs, found.others.oci[0]?.timeoutMs, found.others.buckets[0]?.timeoutMs]).toEqual([
      want,
      want,
      want,
    ]);
  });
});
