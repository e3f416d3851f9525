import { describe, expect, it } from 'vitest';
import { gitRepositoriesIn, sourceVerdict, type CheckoutFacts } from '../../src/flux/checkout.js';
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
      /is not this checkout \(input source names flux-system\/mirror\) and is not defined in the repository, so it cannot be fetched/,
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
      verdict.kind === 'other' ? verdict.problem : verdict.kind === 'fetch' ? verdict.repository.url : verdict.note;
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
