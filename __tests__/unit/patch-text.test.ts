import { describe, expect, it } from 'vitest';
import { patchTextProblem } from '../../src/kustomize/jsonpatch.js';

// A patch file is read by kustomize's PatchTransformer: strategic-merge documents (any number, as in
// Flux's kustomization_patch_delete_test.go) or one JSON 6902 list, the first document.
const DELETE = (name: string) => `$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

describe('patchTextProblem', () => {
  it.each([
    { why: 'one strategic-merge patch', text: DELETE('cm1') },
    { why: 'several $patch: delete documents', text: `${DELETE('cm1')}---\n${DELETE('cm2')}` },
    { why: 'several documents with a leading separator', text: `---\n${DELETE('cm1')}---\n${DELETE('cm2')}---\n` },
    { why: 'a JSON 6902 list', text: '- op: remove\n  path: /data/a\n' },
    { why: 'an empty file', text: '' },
  ])('accepts $why', ({ text }) => {
    expect(patchTextProblem(text, 'app/patch.yaml')).toBeUndefined();
  });

  it.each([
    { text: '- op: explode\n  path: /x\n', want: 'app/patch.yaml: operation 1: op "explode" is not one of' },
    {
      text: `---\n- op: add\n  path: data/x\n  value: 1\n---\n${DELETE('cm1')}`,
      want: 'app/patch.yaml: operation 1 (add): path "data/x" must start with "/"',
    },
    { text: 'a: [\n', want: 'app/patch.yaml' },
  ])('refuses $text', ({ text, want }) => {
    expect(patchTextProblem(text, 'app/patch.yaml')).toContain(want);
  });
});
