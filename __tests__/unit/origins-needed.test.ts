// Origin annotations only when something needs them (src/kustomize/merge.ts trace, origins-needed.ts):
// an untraced merge adds none and strips none, Flux's own rule (a kustomization file without resources)
// still gets them and they stay; a tree asks for them up front only when it may build a Flux
// Kustomization (children are found by their file) or SOPS-encrypted objects (decrypted by their file).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeKustomization } from '../../src/kustomize/merge.js';
import { copyNeedsOrigins, textNeedsOrigins } from '../../src/kustomize/origins-needed.js';

describe('mergeKustomization without tracing', () => {
  it.each<[string, Record<string, unknown>, 'file' | 'generated', unknown, boolean]>([
    ['a file with resources: nothing added', { resources: ['a.yaml'] }, 'file', undefined, false],
    ['a generated one: nothing added', { resources: ['a.yaml'] }, 'generated', undefined, false],
    ["Flux's rule: a file without resources gets them, and keeps them", {}, 'file', ['originAnnotations'], false],
    [
      'the user asked for them: kept, not stripped',
      { resources: ['a.yaml'], buildMetadata: ['originAnnotations'] },
      'file',
      ['originAnnotations'],
      false,
    ],
    [
      'other metadata the user asked for: kept, origin not added',
      { resources: ['a.yaml'], buildMetadata: ['transformerAnnotations'] },
      'file',
      ['transformerAnnotations'],
      false,
    ],
  ])('%s', (_why, existing, source, buildMetadata, addedOrigin) => {
    const merged = mergeKustomization(existing, {}, source, false);
    expect(merged.kustomization['buildMetadata']).toEqual(buildMetadata);
    expect(merged.addedOrigin).toBe(addedOrigin);
  });

  it('traced (the default) adds them and says so', () => {
    const merged = mergeKustomization({ resources: ['a.yaml'] }, {}, 'file');
    expect([merged.kustomization['buildMetadata'], merged.addedOrigin]).toEqual([['originAnnotations'], true]);
  });
});

describe('textNeedsOrigins', () => {
  it.each<[string, string, boolean]>([
    ['a ConfigMap', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n', false],
    ['a kustomization file', 'resources:\n- a.yaml\nnamePrefix: p-\n', false],
    [
      'a Flux Kustomization',
      'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n',
      true,
    ],
    [
      'a SOPS-encrypted Secret',
      'kind: Secret\ndata:\n  k: ENC[AES256_GCM,data:abc=,type:str]\nsops:\n  mac: x\n',
      true,
    ],
    ['a SOPS dotenv file', 'KEY=ENC[AES256_GCM,data:abc=,type:str]\nsops_version=3.9.0\n', true],
    ['the word sops in a value', 'data:\n  tool: sops\n', false],
  ])('%s: %s', (_why, text, want) => {
    expect(textNeedsOrigins(text)).toBe(want);
  });
});

describe('copyNeedsOrigins', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kr-origins-needed-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each<[string, Record<string, string>, boolean]>([
    ['plain objects', { 'app/kustomization.yaml': 'resources: [a.yaml]\n', 'app/a.yaml': 'kind: ConfigMap\n' }, false],
    [
      'a Flux Kustomization deep below',
      {
        'app/kustomization.yaml': 'resources: [x]\n',
        'app/x/y/ks.yaml': 'apiVersion: kustomize.toolkit.fluxcd.io/v1\n',
      },
      true,
    ],
    ['an encrypted generator file', { 'app/secret.env': 'A=ENC[AES256_GCM,data:x,type:str]\n' }, true],
  ])('%s: %s', async (why, files, want) => {
    const root = join(dir, why.replace(/\W+/g, '-'));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }
    expect(await copyNeedsOrigins(root)).toBe(want);
  });
});
