import { describe, expect, it } from 'vitest';
import { isRemoteRef, mergeKustomization, referencedPaths, takeOrigin } from '../../src/kustomize/merge.js';
import { applyCommonMetadata } from '../../src/kustomize/metadata.js';

describe('mergeKustomization (Flux spec fields into kustomization.yaml)', () => {
  it.each([
    {
      why: 'targetNamespace, namePrefix and nameSuffix override',
      existing: { namespace: 'a', namePrefix: 'x-', resources: ['r.yaml'] },
      fields: { targetNamespace: 'b', namePrefix: 'y-', nameSuffix: '-z' },
      want: { namespace: 'b', namePrefix: 'y-', nameSuffix: '-z', resources: ['r.yaml'] },
    },
    {
      why: 'patches are appended after the file’s own',
      existing: { patches: [{ path: 'p.yaml' }] },
      fields: { patches: [{ patch: 'op', target: { kind: 'Deployment' } }, { patch: 'smp' }] },
      want: { patches: [{ path: 'p.yaml' }, { patch: 'op', target: { kind: 'Deployment' } }, { patch: 'smp' }] },
    },
    {
      why: 'components are appended',
      existing: { components: ['../a'] },
      fields: { components: ['../b'] },
      want: { components: ['../a', '../b'] },
    },
    {
      why: 'an image with the same name merges: newName replaced, tag kept',
      existing: { images: [{ name: 'nginx', newName: 'old/nginx', newTag: '1' }] },
      fields: { images: [{ name: 'nginx', newName: 'new/nginx' }] },
      want: { images: [{ name: 'nginx', newName: 'new/nginx', newTag: '1' }] },
    },
    {
      why: 'newTag and digest are one unit: a new tag clears a stale digest',
      existing: { images: [{ name: 'nginx', digest: 'sha256:aa' }] },
      fields: { images: [{ name: 'nginx', newTag: '2' }] },
      want: { images: [{ name: 'nginx', newTag: '2' }] },
    },
    {
      why: 'an image with a new name is appended',
      existing: { images: [{ name: 'nginx', newTag: '1' }] },
      fields: { images: [{ name: 'redis', digest: 'sha256:bb' }] },
      want: {
        images: [
          { name: 'nginx', newTag: '1' },
          { name: 'redis', digest: 'sha256:bb' },
        ],
      },
    },
    {
      why: 'an image with only a name leaves a matching entry as it is (Flux sets only the fields given)',
      existing: { images: [{ name: 'nginx', newName: 'old/nginx', digest: 'sha256:aa' }] },
      fields: { images: [{ name: 'nginx' }] },
      want: { images: [{ name: 'nginx', newName: 'old/nginx', digest: 'sha256:aa' }] },
    },
    {
      why: 'an image with only a name that the kustomization does not list is appended as it is',
      existing: {},
      fields: { images: [{ name: 'redis' }] },
      want: { images: [{ name: 'redis' }] },
    },
    {
      why: 'buildMetadata replaces, and origin annotations stay as asked',
      existing: { buildMetadata: ['transformerAnnotations'] },
      fields: { buildMetadata: ['originAnnotations'] },
      want: { buildMetadata: ['originAnnotations'] },
    },
    {
      why: 'no fields: only origin annotations are switched on',
      existing: { resources: ['a.yaml'] },
      fields: {},
      want: { resources: ['a.yaml'], buildMetadata: ['originAnnotations'] },
    },
  ])('$why', ({ existing, fields, want }) => {
    const before = JSON.stringify(existing);
    const { kustomization } = mergeKustomization(existing, fields);
    expect(kustomization).toEqual(want.buildMetadata ? want : { ...want, buildMetadata: ['originAnnotations'] });
    expect(JSON.stringify(existing)).toBe(before);
  });

  it.each([
    [{ resources: ['a.yaml'] }, {}, true],
    [{ resources: ['a.yaml'], buildMetadata: ['originAnnotations'] }, {}, false],
    [{ resources: ['a.yaml'] }, { buildMetadata: ['originAnnotations', 'transformerAnnotations'] }, false],
    [
      { resources: ['a.yaml'], buildMetadata: ['originAnnotations'] },
      { buildMetadata: ['transformerAnnotations'] },
      true,
    ],
  ])('addedOrigin for %j + %j is %s', (existing, fields, want) => {
    expect(mergeKustomization(existing, fields).addedOrigin).toBe(want);
  });
});

describe('isRemoteRef', () => {
  it.each([
    ['https://github.com/org/repo//deploy?ref=v1', true],
    ['http://example.com/x.yaml', true],
    ['git::https://example.com/repo.git', true],
    ['ssh://git@github.com/org/repo', true],
    ['git@github.com:org/repo.git', true],
    ['github.com/org/repo/deploy?ref=main', true],
    ['gh:org/repo', true],
    ['../base', false],
    ['deployment.yaml', false],
    ['./github.com/local-dir', false],
  ])('%s → %s', (entry, want) => {
    expect(isRemoteRef(entry)).toBe(want);
  });
});

describe('referencedPaths', () => {
  it('lists resources, bases, components and crds entries', () => {
    expect(
      referencedPaths({ resources: ['a', 1], bases: ['b'], components: ['c'], crds: ['d'], patches: [{ path: 'p' }] }),
    ).toEqual([
      { field: 'resources', entry: 'a' },
      { field: 'bases', entry: 'b' },
      { field: 'components', entry: 'c' },
      { field: 'crds', entry: 'd' },
    ]);
  });
});

describe('takeOrigin', () => {
  const withOrigin = (origin: string, other: Record<string, string> = {}) => ({
    metadata: { annotations: { ...other, 'config.kubernetes.io/origin': origin } },
  });
  it.each([
    {
      why: 'a file',
      obj: withOrigin('path: ../base/cm.yaml\n'),
      strip: true,
      want: '../base/cm.yaml',
      left: undefined,
    },
    {
      why: 'a generator',
      obj: withOrigin('configuredIn: kustomization.yaml\nconfiguredBy:\n  kind: ConfigMapGenerator\n'),
      strip: true,
      want: 'kustomization.yaml',
      left: undefined,
    },
    {
      why: 'a remote base',
      obj: withOrigin('path: deploy/x.yaml\nrepo: https://github.com/o/r\nref: v1\n'),
      strip: true,
      want: undefined,
      left: undefined,
    },
    {
      why: 'other annotations stay',
      obj: withOrigin('path: a.yaml\n', { keep: 'me' }),
      strip: true,
      want: 'a.yaml',
      left: { keep: 'me' },
    },
    {
      why: 'kept when the user asked for it',
      obj: withOrigin('path: a.yaml\n'),
      strip: false,
      want: 'a.yaml',
      left: { 'config.kubernetes.io/origin': 'path: a.yaml\n' },
    },
  ])('$why', ({ obj, strip, want, left }) => {
    expect(takeOrigin(obj, strip)).toBe(want);
    expect(obj.metadata.annotations).toEqual(left);
  });
  it('no annotation, no origin', () => {
    expect(takeOrigin({ metadata: {} }, true)).toBeUndefined();
  });
});

describe('applyCommonMetadata', () => {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { app: 'x', team: 'old' } } };
  it.each([
    {
      why: 'labels overwrite same-named keys',
      common: { labels: { team: 'new' } },
      labels: { app: 'x', team: 'new' },
      annotations: undefined,
    },
    {
      why: 'annotations are added',
      common: { annotations: { owner: 'me' } },
      labels: { app: 'x', team: 'old' },
      annotations: { owner: 'me' },
    },
    { why: 'nothing to add', common: undefined, labels: { app: 'x', team: 'old' }, annotations: undefined },
  ])('$why', ({ common, labels, annotations }) => {
    const [out] = applyCommonMetadata([obj], common);
    expect(out!.metadata.labels).toEqual(labels);
    expect(out!.metadata.annotations).toEqual(annotations);
    expect(obj.metadata.labels).toEqual({ app: 'x', team: 'old' });
  });
});
