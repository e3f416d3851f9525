import { describe, expect, it } from 'vitest';
import { generateKustomization, isManifestFile, type Entry } from '../../src/kustomize/generate.js';
import { parseManifests, subjectOf } from '../../src/kustomize/parse.js';

describe('parseManifests', () => {
  it.each([
    {
      why: 'several documents',
      text: 'apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n',
      kinds: ['A', 'B'],
    },
    {
      why: 'empty documents are skipped',
      text: '---\n---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n',
      kinds: ['A'],
    },
    { why: 'empty stream', text: '', kinds: [] },
  ])('$why', ({ text, kinds }) => {
    expect(parseManifests(text, 'f.yaml').map((o) => o.kind)).toEqual(kinds);
  });

  it.each([
    {
      why: 'missing kind and name',
      text: 'apiVersion: v1\nmetadata: {}\n',
      error: 'f.yaml, document 1: missing kind, metadata.name',
    },
    {
      why: 'a list, not an object',
      text: '- a\n- b\n',
      error: 'f.yaml, document 1: expected a Kubernetes object (a YAML mapping), got a list',
    },
    { why: 'invalid YAML', text: 'a: [1, 2\n', error: 'f.yaml, document 1: invalid YAML' },
    {
      why: 'duplicate keys',
      text: 'apiVersion: v1\napiVersion: v2\n',
      error: 'f.yaml, document 1: key "apiVersion" appears twice in one mapping (line 2)',
    },
    {
      why: 'names the failing document',
      text: 'apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n',
      error: 'f.yaml, document 2 (kind B): missing apiVersion',
    },
    {
      why: 'refuses alias bombs',
      text: 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      error: 'alias',
    },
  ])('$why', ({ text, error }) => {
    expect(() => parseManifests(text, 'f.yaml')).toThrow(error);
  });
});

describe('subjectOf', () => {
  it.each([
    [{ kind: 'Deployment', metadata: { name: 'web', namespace: 'prod' } }, 'Deployment/prod/web'],
    [{ kind: 'Namespace', metadata: { name: 'prod' } }, 'Namespace/prod'],
  ])('%j → %s', (obj, want) => {
    expect(subjectOf(obj)).toBe(want);
  });
});

describe('generateKustomization', () => {
  const file = (path: string, text: string): Entry => ({ kind: 'file', path, text });
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n';
  it.each([
    {
      why: 'manifest files become sorted ./ resources',
      entries: [file('z.yaml', cm), file('a/b.yml', cm)],
      resources: ['./a/b.yml', './z.yaml'],
      skipped: [],
    },
    {
      why: 'non-Kubernetes YAML is skipped',
      entries: [file('values.yaml', 'replicas: 3\n'), file('cm.yaml', cm)],
      resources: ['./cm.yaml'],
      skipped: ['values.yaml'],
    },
    {
      why: 'a sub-directory with its own kustomization is one resource',
      entries: [{ kind: 'dir' as const, path: 'base', hasKustomization: true }, file('cm.yaml', cm)],
      resources: ['./base', './cm.yaml'],
      skipped: [],
    },
    {
      why: 'a file of only empty documents is skipped',
      entries: [file('empty.yaml', '---\n---\n')],
      resources: undefined,
      skipped: ['empty.yaml'],
    },
  ])('$why', ({ entries, resources, skipped }) => {
    const got = generateKustomization(entries);
    expect(got.kustomization.resources).toEqual(resources);
    expect(got.skipped).toEqual(skipped);
  });

  it('writes a placeholder namespace when nothing is found, as Flux does', () => {
    expect(generateKustomization([]).kustomization).toEqual({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: '_placeholder',
    });
  });

  it.each([
    ['a file mixing a manifest and other YAML is not a manifest file', `${cm}---\nfoo: bar\n`, false],
    ['a List counts as a manifest', 'apiVersion: v1\nkind: List\nitems: []\n', true],
  ])('%s', (_why, text, want) => {
    expect(isManifestFile(text, 'x.yaml')).toBe(want);
  });

  it('names the file whose YAML is broken', () => {
    expect(() => isManifestFile('a: [1\n', 'dir/broken.yaml')).toThrow('dir/broken.yaml, document 1: invalid YAML');
  });
});
