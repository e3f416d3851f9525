import { describe, expect, it } from 'vitest';
import { generateKustomization, type Entry } from '../../src/kustomize/generate.js';
import { parseManifests, subjectOf } from '../../src/objects/kube.js';

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
  // Facts from Flux's generator (fluxcd/pkg/kustomize v1.35.7, scanManifests): every .yaml/.yml file
  // that kustomize's resource factory decodes without an error is a resource, in the order of a
  // depth-first walk with each directory's entries sorted by name.
  it.each([
    {
      why: 'manifest files become ./ resources in the walk order given (not re-sorted: ./a/x.yaml first)',
      entries: [file('a/x.yaml', cm), file('a-b.yaml', cm), file('a.yaml', cm)],
      resources: ['./a/x.yaml', './a-b.yaml', './a.yaml'],
    },
    {
      why: 'a sub-directory with its own kustomization is one resource',
      entries: [{ kind: 'dir' as const, path: 'base', hasKustomization: true }, file('cm.yaml', cm)],
      resources: ['./base', './cm.yaml'],
    },
    { why: 'an empty file is a resource (it adds nothing)', entries: [file('e.yaml', '')], resources: ['./e.yaml'] },
    {
      why: 'a comment-only file is a resource',
      entries: [file('c.yaml', '# nothing here\n')],
      resources: ['./c.yaml'],
    },
    { why: 'empty documents are a resource', entries: [file('e.yaml', '---\n---\n')], resources: ['./e.yaml'] },
    {
      why: 'empty mappings are skipped documents',
      entries: [file('e.yaml', '{}\n---\n[]\n')],
      resources: ['./e.yaml'],
    },
    {
      why: 'a kind: List',
      entries: [file('l.yaml', `apiVersion: v1\nkind: List\nitems:\n- ${cm.replaceAll('\n', '\n  ')}`)],
      resources: ['./l.yaml'],
    },
    {
      why: 'a List needs no name, nor items',
      entries: [file('l.yaml', 'apiVersion: v1\nkind: ConfigMapList\n')],
      resources: ['./l.yaml'],
    },
    {
      why: 'an object without apiVersion (kustomize decodes it; the build refuses it later)',
      entries: [file('n.yaml', 'kind: ConfigMap\nmetadata: {name: b}\n')],
      resources: ['./n.yaml'],
    },
  ])('$why', ({ entries, resources }) => {
    expect(generateKustomization(entries).resources).toEqual(resources);
  });

  it('writes a placeholder namespace when nothing is found, as Flux does', () => {
    expect(generateKustomization([])).toEqual({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: '_placeholder',
    });
  });

  it.each([
    {
      why: 'a Helm values file',
      text: 'replicaCount: 1\nimage: {repository: nginx}\n',
      error: 'app/values.yaml, document 1 (line 1): not a Kubernetes object (no apiVersion, kind or metadata)',
    },
    {
      why: 'a document without kind',
      text: 'apiVersion: v1\nmetadata: {name: b}\n',
      error: 'app/values.yaml, document 1 (line 1): no kind',
    },
    {
      why: 'an object without metadata.name',
      text: `${cm}---\napiVersion: v1\nkind: Secret\n`,
      error: 'app/values.yaml, document 2 (line 5): kind Secret has no metadata.name',
    },
    {
      why: 'broken YAML, naming the line',
      text: `${cm}---\na: [\n`,
      error: 'app/values.yaml, document 2: invalid YAML',
    },
    {
      why: 'a list',
      text: '- a\n- b\n',
      error: 'app/values.yaml, document 1 (line 1): a list, not a Kubernetes object',
    },
    {
      why: 'a scalar',
      text: 'hello\n',
      error: 'app/values.yaml, document 1 (line 1): a string, not a Kubernetes object',
    },
    {
      why: 'a List whose items is not a list',
      text: 'apiVersion: v1\nkind: List\nitems: {a: 1}\n',
      error: 'items must be a list',
    },
    {
      why: 'an empty list item, which kustomize refuses',
      text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: [a, null]\n',
      error: 'app/values.yaml, document 1 (line 1): empty list item at x[1]',
    },
  ])('fails on $why, naming the file as Flux does', ({ text, error }) => {
    expect(() => generateKustomization([file('values.yaml', cm), file('values.yaml', text)], 'app')).toThrow(error);
  });

  it('says what to do about a file that is not a manifest', () => {
    expect(() => generateKustomization([file('values.yaml', 'a: 1\n')])).toThrow(
      /add a kustomization\.yaml .*or exclude the file in a \.sourceignore/,
    );
  });
});
