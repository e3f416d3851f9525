import { describe, expect, it } from 'vitest';
import { forkHint } from '../helpers/engine.js';
import { SopsError } from '../../src/sops/types.js';

describe('forkHint', () => {
  it.each<[string, boolean | undefined, Error, boolean]>([
    ['a SOPS failure in a fork pull request', true, new SopsError('x.yaml: SOPS decryption failed'), true],
    ['a SOPS failure elsewhere', false, new SopsError('x.yaml: SOPS decryption failed'), false],
    ['another failure in a fork pull request', true, new Error('ConfigMap/x apply failed'), false],
    ['no fork flag at all', undefined, new SopsError('x'), false],
  ])('%s', (_, fork, err, said) => {
    const hint = forkHint(fork === undefined ? {} : { fork }, err);
    expect(hint.includes('this pull request comes from a fork')).toBe(said);
    if (said) expect(hint.startsWith('\n')).toBe(true);
  });
});
