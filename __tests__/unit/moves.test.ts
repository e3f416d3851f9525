// Moves, pure: where an applied object came from (its owner labels in the apply's diff), and which
// Kustomization of a run builds an object (claims).
import { describe, expect, it } from 'vitest';
import { Claims, sameTarget } from '../../src/reconcile/claims.js';
import { movedFrom, withMoves } from '../../src/ssa/moved.js';
import type { FieldChange } from '../../src/ssa/diff.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import type { KustomizationSpec } from '../../src/flux/types.js';
import type { KubeObject } from '../../src/objects/kube.js';

const NAME = '/metadata/labels/kustomize.toolkit.fluxcd.io~1name';
const NS = '/metadata/labels/kustomize.toolkit.fluxcd.io~1namespace';
const owner = { name: 'mv-b', namespace: 'flux-system' };

describe('movedFrom', () => {
  it.each<[string, FieldChange[], string | undefined]>([
    ['name changed', [{ path: NAME, kind: 'changed', before: 'mv-a', after: 'mv-b' }], 'flux-system/mv-a'],
    [
      'name and namespace changed',
      [
        { path: NAME, kind: 'changed', before: 'apps', after: 'mv-b' },
        { path: NS, kind: 'changed', before: 'team', after: 'flux-system' },
      ],
      'team/apps',
    ],
    ['namespace changed alone', [{ path: NS, kind: 'changed', before: 'team', after: 'flux-system' }], 'team/mv-b'],
    ['labels added: adopted, not moved', [{ path: NAME, kind: 'added', after: 'mv-b' }], undefined],
    [
      'one label added, one changed: not a former owner',
      [
        { path: NAME, kind: 'changed', before: 'x', after: 'mv-b' },
        { path: NS, kind: 'added', after: 'flux-system' },
      ],
      undefined,
    ],
    ['an empty former name', [{ path: NAME, kind: 'changed', before: '', after: 'mv-b' }], undefined],
    ['other fields only', [{ path: '/data/a', kind: 'changed', before: '1', after: '2' }], undefined],
    ['no diff', [], undefined],
  ])('%s', (_, diff, expected) => {
    expect(movedFrom({ diff }, owner)).toBe(expected);
  });

  it('is set on configured entries only', () => {
    const diff: FieldChange[] = [{ path: NAME, kind: 'changed', before: 'mv-a', after: 'mv-b' }];
    const entry = (action: ChangeSetEntry['action']): ChangeSetEntry => ({
      subject: 'ConfigMap/x/y',
      action,
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'x',
      name: 'y',
      diff,
    });
    expect(withMoves([entry('configured'), entry('unchanged')], owner).map((e) => e.movedFrom)).toEqual([
      'flux-system/mv-a',
      undefined,
    ]);
  });
});

const spec = (name: string, kubeConfig?: KustomizationSpec['kubeConfig']) =>
  ({ name, namespace: 'ns', ...(kubeConfig ? { kubeConfig } : {}) }) as KustomizationSpec;
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } });
const entry = (name: string) => ({ id: `ns_${name}__ConfigMap`, v: 'v1' });

describe('claims', () => {
  const builds: Record<string, KubeObject[] | Error> = {
    a: [cm('a1')],
    b: [cm('moved')],
    c: new Error('kustomize build failed\nsecond line'),
    remote: [cm('far')],
  };
  const all = [spec('a'), spec('b'), spec('c'), spec('remote', { secretRef: { name: 'kc' } })];
  const make = () => {
    const rendered: string[] = [];
    const claims = new Claims(all, (s) => {
      rendered.push(s.name);
      const b = builds[s.name]!;
      return b instanceof Error ? Promise.reject(b) : Promise.resolve(b);
    });
    return { claims, rendered };
  };

  it('names the Kustomization that builds an object now, on the same cluster only', async () => {
    const { claims } = make();
    const answer = await claims.claimants(spec('a'), [entry('moved'), entry('gone'), entry('far')]);
    expect([...answer.claimed]).toEqual([['ns_moved__ConfigMap', 'ns/b']]);
    expect(answer.unread).toEqual([{ kustomization: 'ns/c', error: 'kustomize build failed' }]);
  });

  it('uses the builds the run recorded, and stops once every object is claimed', async () => {
    const { claims, rendered } = make();
    claims.record(spec('b'), [cm('moved')]);
    const answer = await claims.claimants(spec('a'), [entry('moved')]);
    expect(answer.claimed.get('ns_moved__ConfigMap')).toBe('ns/b');
    expect(rendered).toEqual([]);
  });

  it('a Kustomization built from another source claims nothing and is not unread', async () => {
    const claims = new Claims([spec('a'), spec('other')], (s) =>
      Promise.resolve(s.name === 'other' ? undefined : [cm('x')]),
    );
    expect(await claims.claimants(spec('a'), [entry('x'), entry('y')])).toEqual({ claimed: new Map(), unread: [] });
  });

  it('renders each build once per run', async () => {
    const { claims, rendered } = make();
    await claims.claimants(spec('a'), [entry('x')]);
    await claims.claimants(spec('b'), [entry('y')]);
    expect(rendered.sort()).toEqual(['a', 'b', 'c']);
  });

  it.each([
    [undefined, undefined, true],
    [{ secretRef: { name: 'kc' } }, { secretRef: { name: 'kc' } }, true],
    [{ secretRef: { name: 'kc' } }, undefined, false],
    [{ secretRef: { name: 'kc' } }, { secretRef: { name: 'other' } }, false],
  ])('sameTarget(%j, %j) is %s', (a, b, same) => {
    expect(sameTarget({ kubeConfig: a }, { kubeConfig: b })).toBe(same);
  });
});
