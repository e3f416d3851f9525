// The one retry policy of the HTTP clients (src/util/retry.ts): which answers are worth another try.
import { describe, expect, it } from 'vitest';
import { retryable } from '../../src/util/retry.js';

describe('retryable', () => {
  it.each<[number, boolean]>([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [501, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [200, false],
  ])('status %i → %s', (status, want) => {
    expect(retryable(status)).toBe(want);
  });
});
