import { describe, expect, it } from 'vitest';
import { sourceVerdict, type CheckoutFacts, type SourceVerdict } from '../../src/flux/checkout.js';
import { sourcesIn } from '../../src/flux/source-files.js';
import { canonicalJson, definitionIdentity, planIdentity, refuseConflicts } from '../../src/flux/source-identity.js';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import type { KustomizationSpec } from '../../src/flux/types.js';

/** A Kustomization `name` in `file`, built from `kind` `ref` (namespace flux-system). */
const ks = (name: string, file: string, ref: string, kind?: KustomizationSpec['sourceRef']): KustomizationSpec => ({
  ...specFromInputs({ path: 'apps', name, source: 'acme/fleet' }),
  namespace: 'flux-system',
  origin: { kind: 'file', file, document: 1 },
  sourceRef: kind ?? { kind: 'GitRepository', name: ref },
});

const git = (name: string, url: string, extra = '') => `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: flux-system}
spec: {url: ${url}, ref: {branch: main}${extra}}
`;
const oci = (name: string, url: string) => `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: ${name}, namespace: flux-system}
spec: {url: ${url}, ref: {tag: v1}}
`;

/** The run's verdicts over a tree of files (path → YAML), after the conflict check. */
function verdicts(files: Record<string, string>, specs: KustomizationSpec[]): Map<string, SourceVerdict> {
  const facts: CheckoutFacts = {
    source: 'acme/fleet',
    branch: 'main',
    definitions: [],
    others: { oci: [], buckets: [], generators: [] },
  };
  for (const [file, text] of Object.entries(files)) {
    const found = sourcesIn(text, file);
    (facts.definitions as unknown[]).push(...found.git);
    facts.others!.oci.push(...found.others.oci);
    facts.others!.buckets.push(...found.others.buckets);
    facts.others!.generators.push(...found.others.generators);
  }
  const raw = new Map(specs.map((s) => [`${s.namespace}/${s.name}`, sourceVerdict(s, facts)]));
  return refuseConflicts(specs, raw, facts.definitions);
}

const EVIL = 'http://127.0.0.1:9/evil';
const APP = 'https://github.com/acme/app';

describe('refuseConflicts: one object per namespace/name in a run', () => {
  it.each<[string, Record<string, string>, KustomizationSpec[], Record<string, RegExp | 'fetch' | 'checkout'>]>([
    [
      'two definitions in two directories, each nearest to one Kustomization: both refused, both files named',
      { 'clusters/prod/src.yaml': git('app', APP), 'tenants/evil/src.yaml': git('app', EVIL) },
      [ks('prod', 'clusters/prod/apps.yaml', 'app'), ks('evil', 'tenants/evil/apps.yaml', 'app')],
      {
        'flux-system/prod':
          /GitRepository flux-system\/app is defined differently in clusters\/prod\/src.yaml .*and tenants\/evil\/src.yaml/,
        'flux-system/evil': /clusters\/prod\/src.yaml .* tenants\/evil\/src.yaml/,
      },
    ],
    [
      'the same definition in two files is one object',
      { 'clusters/prod/src.yaml': git('app', APP), 'tenants/x/src.yaml': git('app', APP) },
      [ks('prod', 'clusters/prod/apps.yaml', 'app'), ks('x', 'tenants/x/apps.yaml', 'app')],
      { 'flux-system/prod': 'fetch', 'flux-system/x': 'fetch' },
    ],
    [
      'one definition per cluster and a run of one cluster: not a conflict',
      { 'clusters/prod/src.yaml': git('app', APP), 'clusters/dev/src.yaml': git('app', EVIL) },
      [ks('prod', 'clusters/prod/apps.yaml', 'app')],
      { 'flux-system/prod': 'fetch' },
    ],
    [
      'a different definition of the name that is this checkout, used by another Kustomization',
      {
        'clusters/prod/gotk.yaml': git('flux-system', 'https://github.com/acme/fleet'),
        'apps/evil/gotk.yaml': git('flux-system', EVIL),
      },
      [ks('prod', 'clusters/prod/apps.yaml', 'flux-system'), ks('evil', 'apps/evil/ks.yaml', 'flux-system')],
      {
        'flux-system/prod': /flux-system\/flux-system is defined differently/,
        'flux-system/evil': /defined differently/,
      },
    ],
    [
      'an include naming the ambiguous name: the including Kustomization is refused too',
      {
        'clusters/prod/src.yaml': `${git('app', APP)}---\n${git('lib', 'https://github.com/acme/lib')}`,
        'tenants/evil/src.yaml': `${git('lib', EVIL)}---\n${git('wrap', 'https://github.com/acme/wrap', ', include: [{repository: {name: lib}}]')}`,
      },
      [ks('lib', 'clusters/prod/apps.yaml', 'lib'), ks('wrap', 'tenants/evil/apps.yaml', 'wrap')],
      {
        'flux-system/lib': /GitRepository flux-system\/lib is defined differently/,
        'flux-system/wrap': /flux-system\/lib is defined differently/,
      },
    ],
    [
      'an OCIRepository of one name with two URLs',
      {
        'clusters/prod/oci.yaml': oci('charts', 'oci://ghcr.io/acme/charts'),
        'tenants/evil/oci.yaml': oci('charts', 'oci://127.0.0.1:9/evil'),
      },
      [
        ks('a', 'clusters/prod/a.yaml', '', { kind: 'OCIRepository', name: 'charts' }),
        ks('b', 'tenants/evil/b.yaml', '', { kind: 'OCIRepository', name: 'charts' }),
      ],
      {
        'flux-system/a': /OCIRepository flux-system\/charts is defined differently/,
        'flux-system/b': /defined differently/,
      },
    ],
    [
      'a field other than the URL (the ref) differs: still two objects of one name',
      {
        'clusters/prod/src.yaml': git('app', APP),
        'tenants/evil/src.yaml': git('app', APP).replace('branch: main', 'branch: evil'),
      },
      [ks('prod', 'clusters/prod/apps.yaml', 'app'), ks('evil', 'tenants/evil/apps.yaml', 'app')],
      { 'flux-system/prod': /defined differently/, 'flux-system/evil': /defined differently/ },
    ],
  ])('%s', (_, files, specs, want) => {
    const got = verdicts(files, specs);
    for (const [key, expected] of Object.entries(want)) {
      const v = got.get(key)!;
      if (typeof expected === 'string') expect(v.kind, key).toBe(expected);
      else {
        expect(v.kind, key).toBe('other');
        expect(v.kind === 'other' ? v.problem : '', key).toMatch(expected);
      }
    }
  });
});

describe('identities', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['key order does not matter', { a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 }, true],
    ['an undefined field is no field', { a: 1, b: undefined }, { a: 1 }, true],
    ['a different value', { a: 1 }, { a: 2 }, false],
    ['a string is not a number', { a: '1' }, { a: 1 }, false],
  ])('canonicalJson: %s', (_, a, b, same) => {
    expect(canonicalJson(a) === canonicalJson(b)).toBe(same);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, boolean]>([
    ['the file is not part of it', { file: 'a.yaml' }, { file: 'b.yaml' }, true],
    ['the URL is', { url: APP }, { url: EVIL }, false],
    ['the secretRef is', { secretRef: 'a' }, { secretRef: 'b' }, false],
    ['the ignore rules are', { ignore: '/x' }, {}, false],
  ])('definitionIdentity: %s', (_, a, b, same) => {
    const base = { namespace: 'flux-system', name: 'app', file: 'x.yaml', url: APP };
    expect(
      definitionIdentity('GitRepository', { ...base, ...a }) === definitionIdentity('GitRepository', { ...base, ...b }),
    ).toBe(same);
  });

  it('the cache key of two plans of one name and two definitions differs', () => {
    const def = { namespace: 'flux-system', name: 'app', file: 'a.yaml', url: APP };
    const a = planIdentity({ kind: 'GitRepository', def });
    const b = planIdentity({ kind: 'GitRepository', def: { ...def, url: EVIL } });
    const c = planIdentity({ kind: 'GitRepository', def: { ...def, file: 'b.yaml' } });
    expect(a).not.toBe(b);
    expect(a).toBe(c);
    const withInclude = planIdentity({
      kind: 'GitRepository',
      def,
      include: [
        {
          name: 'lib',
          fromPath: '',
          toPath: 'lib',
          source: { kind: 'GitRepository', def: { ...def, name: 'lib', url: EVIL } },
        },
      ],
    });
    expect(withInclude).not.toBe(a);
  });
});
