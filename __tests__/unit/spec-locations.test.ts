import { describe, expect, it } from 'vitest';
import { parseKustomizations, SpecError } from '../../src/flux/parse.js';
import { locateField } from '../../src/report/problems.js';

const TEXT = `# leading comment
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps
  prune: maybe
  sourceRef:
    kind: GitRepository
    name: repo
  patches:
    - patch: |
        - op: remove
      target:
        kind: 7
`;

describe('locateField', () => {
  it.each<[string, number, string | undefined, number | undefined]>([
    ['a scalar field', 2, 'spec.prune', 14],
    ['a nested field', 2, 'spec.sourceRef.name', 17],
    ['a list item field', 2, 'spec.patches[0].target.kind', 22],
    ['a list item', 2, 'spec.patches[0]', 19],
    ['a missing field: its nearest parent', 2, 'spec.timeout', 11],
    ['a missing list item: the list', 2, 'spec.patches[3].target', 18],
    ['the document itself', 2, undefined, 6],
    ['the first document', 1, 'metadata.name', 4],
    ['a document that is not there', 3, 'spec', undefined],
  ])('finds %s', (_, document, field, line) => {
    expect(locateField(TEXT, document, field)).toBe(line);
  });

  it('finds nothing in an empty text', () => {
    expect(locateField('', 1, 'a')).toBeUndefined();
  });
});

describe('SpecError locations', () => {
  it('names the file, document and field of each problem, so that an annotation can point at it', () => {
    let err: unknown;
    try {
      parseKustomizations(TEXT, 'clusters/apps.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpecError);
    const locations = (err as SpecError).locations;
    expect(locations.map((l) => [l.file, l.document, l.field])).toEqual(
      expect.arrayContaining([['clusters/apps.yaml', 2, 'spec.prune']]),
    );
    for (const l of locations) {
      expect((err as SpecError).problems).toContain(l.message);
      expect(locateField(TEXT, l.document, l.field)).toBeGreaterThan(5);
    }
  });

  it('points a wrong apiVersion at apiVersion', () => {
    const text = TEXT.replace('kustomize.toolkit.fluxcd.io/v1', 'kustomize.toolkit.fluxcd.io/v1beta2');
    expect(() => parseKustomizations(text, 'k.yaml')).toThrow(SpecError);
    try {
      parseKustomizations(text, 'k.yaml');
    } catch (e) {
      expect((e as SpecError).locations).toEqual([expect.objectContaining({ document: 2, field: 'apiVersion' })]);
    }
  });
});
