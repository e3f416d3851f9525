import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { SpecError, parseKustomizations } from '../../src/flux/parse.js';

// The cases of Test_IsLocalRelativePath in fluxcd/pkg/kustomize (v1.35.7): which spec.components entries Flux
// takes as local paths (true) and which it refuses ("component path '...' must be local and relative").
function componentsProblems(component: string): string[] {
  const doc = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: 'flux-system' },
    spec: {
      interval: '5m',
      prune: true,
      path: './apps',
      sourceRef: { kind: 'GitRepository', name: 'repo' },
      components: [component],
    },
  };
  try {
    parseKustomizations(stringify(doc), 'apps.yaml');
    return [];
  } catch (error) {
    if (error instanceof SpecError) return error.problems;
    throw error;
  }
}

describe('spec.components: local and relative, as Flux decides', () => {
  it.each([
    ['foobar.yaml', true],
    ['./foobar.yaml', true],
    ['file://foobar.yaml', true],
    ['file:///foobar.yaml', false],
    ['/foobar.yaml', false],
    ['https://github.com/owner/repo', false],
    ['git@github.com:owner/repo', false],
    ['ssh://git@github.com/owner/repo', false],
    ['github.com/owner/repo', false],
  ])('%s: local %s', (component, local) => {
    const problems = componentsProblems(component);
    if (local) expect(problems).toEqual([]);
    else expect(problems).toEqual([expect.stringContaining(`spec.components[0]: ${JSON.stringify(component)} is`)]);
  });
});
