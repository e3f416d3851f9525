import { describe, expect, it } from 'vitest';
import { mergeKustomization } from '../../src/kustomize/merge.js';
import type { Image } from '../../src/flux/types.js';

// The cases of Test_Images in fluxcd/pkg/kustomize (v1.35.7, the version kustomize-controller v1.9.6 uses):
// spec.images merged into the images a kustomization.yaml already has.
const APP = 'ghcr.io/example/app';
const REG = 'registry.example.com/app';
const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('mergeKustomization: spec.images as Flux merges them', () => {
  it.each<{ why: string; existing?: Image[]; flux: Image[]; want: Image[] }>([
    {
      why: 'existing newTag is preserved when only newName is set',
      existing: [{ name: APP, newTag: 'v1.2.3' }],
      flux: [{ name: APP, newName: REG }],
      want: [{ name: APP, newName: REG, newTag: 'v1.2.3' }],
    },
    {
      why: 'existing newName is preserved when only newTag is set',
      existing: [{ name: APP, newName: REG }],
      flux: [{ name: APP, newTag: 'v2.0.0' }],
      want: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
    },
    {
      why: 'existing digest is preserved when only newName is set',
      existing: [{ name: APP, digest: DIGEST }],
      flux: [{ name: APP, newName: REG }],
      want: [{ name: APP, newName: REG, digest: DIGEST }],
    },
    {
      why: 'existing digest is cleared when only newTag is set',
      existing: [{ name: APP, digest: DIGEST }],
      flux: [{ name: APP, newTag: 'v2.0.0' }],
      want: [{ name: APP, newTag: 'v2.0.0' }],
    },
    {
      why: 'existing newTag is cleared when only digest is set',
      existing: [{ name: APP, newTag: 'v1.2.3' }],
      flux: [{ name: APP, digest: DIGEST }],
      want: [{ name: APP, digest: DIGEST }],
    },
    {
      why: 'existing newName is preserved when newTag replaces digest',
      existing: [{ name: APP, newName: REG, digest: DIGEST }],
      flux: [{ name: APP, newTag: 'v2.0.0' }],
      want: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
    },
    {
      why: 'newTag and digest set together are both applied',
      existing: [{ name: APP, newTag: 'v1.2.3' }],
      flux: [{ name: APP, newTag: 'v2.0.0', digest: DIGEST }],
      want: [{ name: APP, newTag: 'v2.0.0', digest: DIGEST }],
    },
    {
      why: 'entry with only a name leaves the existing entry unchanged',
      existing: [{ name: APP, newName: REG, newTag: 'v1.2.3' }],
      flux: [{ name: APP }],
      want: [{ name: APP, newName: REG, newTag: 'v1.2.3' }],
    },
    {
      why: 'existing fields are overridden when set',
      existing: [{ name: APP, newName: 'old.example.com/app', newTag: 'v1.2.3' }],
      flux: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
      want: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
    },
    {
      why: 'image without existing entry is appended',
      flux: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
      want: [{ name: APP, newName: REG, newTag: 'v2.0.0' }],
    },
  ])('$why', ({ existing, flux, want }) => {
    const base = existing === undefined ? {} : { images: existing };
    expect(
      mergeKustomization({ resources: ['deployment.yaml'], ...base }, { images: flux }).kustomization['images'],
    ).toEqual(want);
  });
});

// The cases of Test_Components in fluxcd/pkg/kustomize: spec.components come after the kustomization's own.
describe('mergeKustomization: spec.components as Flux merges them', () => {
  it.each<{ why: string; existing: Record<string, unknown>; flux: string[]; want: unknown }>([
    {
      why: 'kustomization.yaml with components, Flux Kustomization without',
      existing: { components: ['componentA'] },
      flux: [],
      want: ['componentA'],
    },
    {
      why: 'kustomization.yaml without components, Flux Kustomization with',
      existing: {},
      flux: ['componentB', 'componentC'],
      want: ['componentB', 'componentC'],
    },
    {
      why: 'both with components',
      existing: { components: ['componentA'] },
      flux: ['componentB', 'componentC'],
      want: ['componentA', 'componentB', 'componentC'],
    },
  ])('$why', ({ existing, flux, want }) => {
    expect(mergeKustomization(existing, { components: flux }).kustomization['components']).toEqual(want);
  });
});

// TestGenerator_BuildMetadata* in fluxcd/pkg/kustomize: a kustomization.yaml of the repository without resources
// gets originAnnotations (so that kustomize does not call it empty), and those stay on the objects Flux applies;
// spec.buildMetadata, when it lists anything, replaces the list. `addedOrigin` true means we strip them again.
describe('mergeKustomization: buildMetadata as Flux sets it', () => {
  const GENERATOR = { configMapGenerator: [{ name: 'test-configmap', literals: ['foo=bar'] }] };
  it.each<{
    why: string;
    existing: Record<string, unknown>;
    source?: 'file' | 'generated';
    flux?: ('originAnnotations' | 'transformerAnnotations')[];
    want: { buildMetadata: string[]; addedOrigin: boolean };
  }>([
    {
      why: 'a file without resources, spec.buildMetadata both options',
      existing: GENERATOR,
      flux: ['originAnnotations', 'transformerAnnotations'],
      want: { buildMetadata: ['originAnnotations', 'transformerAnnotations'], addedOrigin: false },
    },
    {
      why: 'a file without resources, no spec.buildMetadata: origin annotations stay',
      existing: GENERATOR,
      want: { buildMetadata: ['originAnnotations'], addedOrigin: false },
    },
    {
      why: 'a file with an empty resources list and its own buildMetadata: replaced by originAnnotations',
      existing: { resources: [], buildMetadata: ['transformerAnnotations'], ...GENERATOR },
      want: { buildMetadata: ['originAnnotations'], addedOrigin: false },
    },
    {
      why: 'a file without resources, spec.buildMetadata transformerAnnotations replaces the fallback',
      existing: { resources: [] },
      flux: ['transformerAnnotations'],
      want: { buildMetadata: ['transformerAnnotations', 'originAnnotations'], addedOrigin: true },
    },
    {
      why: 'a file with resources: origin annotations only to learn files',
      existing: { resources: ['cm.yaml'] },
      want: { buildMetadata: ['originAnnotations'], addedOrigin: true },
    },
    {
      why: 'a generated kustomization is not a file of the repository: no fallback',
      existing: { resources: [] },
      source: 'generated',
      want: { buildMetadata: ['originAnnotations'], addedOrigin: true },
    },
    {
      why: 'an empty spec.buildMetadata leaves the file’s list',
      existing: { resources: ['cm.yaml'], buildMetadata: ['originAnnotations'] },
      flux: [],
      want: { buildMetadata: ['originAnnotations'], addedOrigin: false },
    },
  ])('$why', ({ existing, source, flux, want }) => {
    const fields = flux === undefined ? {} : { buildMetadata: flux };
    const { kustomization, addedOrigin } = mergeKustomization(existing, fields, source);
    expect({ buildMetadata: kustomization['buildMetadata'], addedOrigin }).toEqual(want);
  });
});
