import { describe, expect, it } from 'vitest';
import { loadedEntries, localName, mapLoadedEntries, restoreOriginPath } from '../../src/kustomize/references.js';

describe('loadedEntries', () => {
  it('lists every entry kustomize loads, in field order, marking those that may be directories', () => {
    const k = {
      resources: ['a.yaml', 'base', 3],
      bases: ['old'],
      components: ['comp'],
      crds: ['crd.yaml'],
      generators: ['gen.yaml'],
      transformers: ['t.yaml'],
      validators: ['v'],
      patchesStrategicMerge: ['psm.yaml'],
      configurations: ['conf.yaml'],
      patches: [{ path: 'p.yaml' }, { patch: 'inline' }],
      patchesJson6902: [{ path: 'j.yaml' }],
      replacements: [{ path: 'r.yaml' }],
      configMapGenerator: [{ name: 'x', files: ['k=f.txt', 'g.txt'], envs: ['e.env'], env: 'old.env' }],
      secretGenerator: [{ name: 's', files: ['s.txt'] }],
      openapi: { path: 'schema.json' },
    };
    expect(loadedEntries(k).map((e) => `${e.field}:${e.entry}${e.dir ? '/' : ''}`)).toEqual([
      'resources:a.yaml/',
      'resources:base/',
      'bases:old/',
      'components:comp/',
      'crds:crd.yaml',
      'generators:gen.yaml/',
      'transformers:t.yaml/',
      'validators:v/',
      'patchesStrategicMerge:psm.yaml',
      'configurations:conf.yaml',
      'patches[].path:p.yaml',
      'patchesJson6902[].path:j.yaml',
      'replacements[].path:r.yaml',
      'configMapGenerator[].files:f.txt',
      'configMapGenerator[].files:g.txt',
      'configMapGenerator[].envs:e.env',
      'configMapGenerator[].env:old.env',
      'secretGenerator[].files:s.txt',
      'openapi.path:schema.json',
    ]);
  });
});

describe('mapLoadedEntries', () => {
  it.each([
    {
      why: 'a resource file',
      k: { resources: ['../x.yaml', 'keep.yaml'] },
      want: { resources: ['L/x.yaml', 'keep.yaml'] },
    },
    {
      why: 'a patch path',
      k: { patches: [{ path: '../p.yaml', target: { kind: 'A' } }] },
      want: { patches: [{ path: 'L/p.yaml', target: { kind: 'A' } }] },
    },
    {
      why: 'a generator file keeps its key',
      k: { configMapGenerator: [{ name: 'c', files: ['k=../f.txt', '../g.txt'] }] },
      want: { configMapGenerator: [{ name: 'c', files: ['k=L/f.txt', 'L/g.txt'] }] },
    },
    {
      why: 'env and envs',
      k: { secretGenerator: [{ name: 's', envs: ['../a.env'], env: '../b.env' }] },
      want: { secretGenerator: [{ name: 's', envs: ['L/a.env'], env: 'L/b.env' }] },
    },
    { why: 'openapi', k: { openapi: { path: '../s.json' } }, want: { openapi: { path: 'L/s.json' } } },
    {
      why: 'an inline strategic merge patch is left alone',
      k: { patchesStrategicMerge: ['../p.yaml', 'apiVersion: v1\nkind: A\n'] },
      want: { patchesStrategicMerge: ['L/p.yaml', 'apiVersion: v1\nkind: A\n'] },
    },
  ])('rewrites $why, leaving the rest as it is', ({ k, want }) => {
    const out = mapLoadedEntries(k, ({ entry }) => (entry.startsWith('../') ? `L/${entry.slice(3)}` : undefined));
    expect(out.kustomization).toEqual(want);
    expect(out.changed).toBe(true);
    // The input is not modified.
    expect(JSON.stringify(k)).not.toContain('L/');
  });

  it('says when nothing changed', () => {
    expect(mapLoadedEntries({ resources: ['a.yaml'] }, () => undefined).changed).toBe(false);
  });
});

describe('localName', () => {
  it.each([
    [0, '../../shared/cm.yaml', '0/cm.yaml'],
    [3, 'k.env', '3/k.env'],
  ])('%i %s → %s', (n, entry, want) => {
    expect(localName(n, entry)).toBe(want);
  });
});

describe('restoreOriginPath', () => {
  const renamed = new Map([['.kr-refs-x/0/cm.yaml', '../../shared/cm.yaml']]);
  it.each([
    ['path: .kr-refs-x/0/cm.yaml\n', 'path: ../../shared/cm.yaml\n'],
    ['path: ../base/.kr-refs-x/0/cm.yaml\n', 'path: ../../shared/cm.yaml\n'],
    ['path: service.yaml\n', 'path: service.yaml\n'],
    ['configuredIn: kustomization.yaml\nconfiguredBy: {}\n', 'configuredIn: kustomization.yaml\nconfiguredBy: {}\n'],
  ])('%j → %j', (raw, want) => {
    expect(restoreOriginPath(raw, renamed)).toBe(want);
  });
});
