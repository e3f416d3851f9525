import { describe, expect, it } from 'vitest';
import { ownershipProblem, recordedBy } from '../../src/inventory/identity.js';
import {
  actionSource,
  derivedName,
  labelValue,
  legacyName,
  repositoryId,
  sameSource,
} from '../../src/objects/names.js';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import { unsupportedFields } from '../../src/flux/support.js';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

describe('derivedName', () => {
  // Pairs that the former name (the path alone, folded) gave one name: each must now give two.
  it.each([
    ['acme/app1', 'deploy', 'acme/app2', 'deploy'],
    ['acme/app', 'crds', 'acme/app', 'infra/crds'],
    ['acme/app', 'apps/web', 'acme/app', 'apps-web'],
    ['acme/app', 'team_a', 'acme/app', 'team-a'],
    ['acme/app', 'Team', 'acme/app', 'team'],
    ['local:/work/a', '.', 'local:/work/b', '.'],
    ['acme/app', `${'a'.repeat(80)}/x`, 'acme/app', `${'a'.repeat(80)}/y`],
  ])('%s %s and %s %s differ', (s1, p1, s2, p2) => {
    expect(derivedName(s1, p1)).not.toBe(derivedName(s2, p2));
  });

  it.each([
    ['acme/app1', 'deploy', /^app1-deploy-[0-9a-f]{10}$/],
    ['acme/app1', '.', /^app1-root-[0-9a-f]{10}$/],
    ['acme/fleet', 'clusters/production/infrastructure', /^fleet-clusters-production-infrastructure-[0-9a-f]{10}$/],
    ['local:/home/me/My Repo', 'apps', /^my-repo-apps-[0-9a-f]{10}$/],
    ['gitlab.com/acme/app1', 'deploy', /^app1-deploy-[0-9a-f]{10}$/],
    ['acme/app', '___', /^app-[0-9a-f]{10}$/],
    ['acme/___', '___', /^ks-[0-9a-f]{10}$/],
  ])('%s %s is readable: %s', (source, path, want) => {
    expect(derivedName(source, path)).toMatch(want);
  });

  it.each([
    ['acme/app', 'clusters/production/infrastructure'],
    ['acme/' + 'r'.repeat(100), 'p'.repeat(300)],
    ['acme/app', 'a/-/b/'.repeat(40)],
  ])('%s %s fits a label value and a DNS subdomain', (source, path) => {
    const name = derivedName(source, path);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(LABEL_VALUE);
    expect(name).toMatch(DNS_SUBDOMAIN);
    // The inventory and lock names stay far below 253.
    expect(`kustomize-reconcile.flux-system.${name}`.length).toBeLessThanOrEqual(253);
  });

  it.each([
    ['deploy', 'deploy'],
    ['apps/web', 'apps-web'],
    ['Team_A', 'team-a'],
    ['.', 'root'],
    ['___', 'root'],
  ])('the former name of %s was %s', (path, name) => {
    expect(legacyName(path)).toBe(name);
  });

  it('is stable: the same repository and path give the same name on every run', () => {
    expect(derivedName('acme/app1', 'deploy')).toBe(derivedName('acme/app1', 'deploy'));
  });
});

describe('labelValue', () => {
  it.each([
    ['app', 'app'],
    ['a'.repeat(63), 'a'.repeat(63)],
    ['kustomize-reconcile.flux-system.short', 'kustomize-reconcile.flux-system.short'],
  ])('%s stays %s', (value, want) => {
    expect(labelValue(value)).toBe(want);
  });

  it.each([
    'a'.repeat(64),
    `kustomize-reconcile.flux-system.${'x'.repeat(40)}`,
    '-leading',
    'white space',
    '.'.repeat(70),
  ])('%s becomes a valid, distinct label value', (value) => {
    const got = labelValue(value);
    expect(got.length).toBeLessThanOrEqual(63);
    expect(got).toMatch(LABEL_VALUE);
    expect(labelValue(value + 'z')).not.toBe(got);
  });
});

describe('repositoryId', () => {
  it.each([
    ['https://github.com/acme/app1', 'acme/app1'],
    ['https://github.com/acme/app1.git', 'acme/app1'],
    ['https://x-access-token:ghs_secret@github.com/acme/app1.git', 'acme/app1'],
    ['git@github.com:acme/app1.git', 'acme/app1'],
    ['ssh://git@github.com/acme/app1', 'acme/app1'],
    ['ssh://git@github.com:22/acme/app1.git/', 'acme/app1'],
    ['https://GitHub.com/acme/app1/', 'acme/app1'],
    ['https://gitlab.com/group/sub/app.git', 'gitlab.com/group/sub/app'],
    ['git@ghe.example.com:acme/app1.git', 'ghe.example.com/acme/app1'],
  ])('%s → %s', (url, want) => {
    expect(repositoryId(url)).toBe(want);
  });

  it.each([
    [undefined, 'acme/app1', 'acme/app1'],
    ['https://github.com', 'acme/app1', 'acme/app1'],
    ['https://ghe.example.com', 'acme/app1', 'ghe.example.com/acme/app1'],
  ])('the action on %s records %s as %s', (server, repo, want) => {
    expect(actionSource(server, repo)).toBe(want);
  });

  it.each([
    ['acme/App1', 'acme/app1', true],
    ['acme/app1', 'acme/app2', false],
    ['local:/work/A', 'local:/work/a', false],
    ['ghe.example.com/acme/app1', 'acme/app1', false],
  ])('sameSource(%s, %s) is %s', (a, b, want) => {
    expect(sameSource(a, b)).toBe(want);
  });
});

describe('recordedBy', () => {
  it.each([
    ['the same repository', { source: 'acme/app1', origin: 'path: deploy' }, 'acme/app1', true],
    ['a GHES repository, recorded before hosts were', { source: 'acme/app1' }, 'ghe.example.com/acme/app1', true],
    [
      'a GHES repository, recorded with its host',
      { source: 'ghe.example.com/acme/app1', origin: 'x' },
      'ghe.example.com/acme/app1',
      true,
    ],
    [
      'the same name on GHES, recorded by this version',
      { source: 'acme/app1', origin: 'path: deploy' },
      'ghe.example.com/acme/app1',
      false,
    ],
    ['another repository of the old form', { source: 'acme/app2' }, 'ghe.example.com/acme/app1', false],
    ['a local directory never matches the old form', { source: 'acme/app1' }, 'local:/x/acme/app1', false],
  ])('%s: %s', (_, recorded, source, want) => {
    expect(recordedBy(recorded, source)).toBe(want);
  });
});

describe('ownershipProblem', () => {
  const claim = { kustomization: 'flux-system/apps', source: 'acme/app2', origin: 'clusters/prod/apps.yaml' };
  it.each([
    ['no inventory yet', undefined, false],
    [
      'an inventory that records no repository (forged, or older than recorded sources)',
      { kustomization: 'flux-system/apps' },
      true,
    ],
    ['an inventory that records an empty repository', { kustomization: 'flux-system/apps', source: '' }, true],
    ['the same repository', { kustomization: 'flux-system/apps', source: 'acme/app2' }, false],
    ['the same repository, other case', { kustomization: 'flux-system/apps', source: 'Acme/App2' }, false],
    ['another repository', { kustomization: 'flux-system/apps', source: 'acme/app1', origin: 'path: deploy' }, true],
    [
      'a run from a directory without a git remote',
      { kustomization: 'flux-system/apps', source: 'local:/tmp/x' },
      true,
    ],
  ])('%s: refused %s', (_, recorded, refused) => {
    const problem = ownershipProblem(recorded, 'flux-system/kustomize-reconcile.flux-system.apps', claim);
    // Between two directories without a remote, there is no repository to tell apart.
    const local = { ...claim, source: 'local:/tmp/y' };
    const source = (recorded as { source?: string } | undefined)?.source;
    if (source?.startsWith('local:')) expect(ownershipProblem(recorded, 'inv', local)).toBeUndefined();
    expect(problem !== undefined).toBe(refused);
    if (problem && !(recorded as { source?: string }).source) {
      // The way out: which inventory, which command, and that its objects stay.
      expect(problem).toContain('records no repository');
      expect(problem).toContain('kubectl -n flux-system delete configmap kustomize-reconcile.flux-system.apps');
      expect(problem).toContain('Nothing was applied or pruned');
    } else if (problem) {
      expect(problem).toContain('flux-system/kustomize-reconcile.flux-system.apps');
      expect(problem).toContain((recorded as { source: string }).source);
      expect(problem).toContain('acme/app2 (clusters/prod/apps.yaml)');
      expect(problem).toContain('nothing was applied or pruned');
    }
  });
});

describe('a Kustomization file whose name cannot be an owner label', () => {
  const spec = (name: string) => ({
    ...specFromInputs({ path: 'apps', name: 'apps', source: 'acme/fleet' }),
    name,
    origin: { kind: 'file' as const, file: 'clusters/prod/apps.yaml', document: 1 },
  });
  it.each([
    ['a'.repeat(63), []],
    [
      'a'.repeat(64),
      [
        'metadata.name is 64 characters: it becomes the value of the owner label kustomize.toolkit.fluxcd.io/name on every object, which allows at most 63; choose a shorter name',
      ],
    ],
  ])('%s: %j', (name, problems) => {
    expect(unsupportedFields(spec(name), 'apply')).toEqual(problems);
    // build applies nothing: it is not refused there.
    expect(unsupportedFields(spec(name), 'build')).toEqual([]);
  });
});
