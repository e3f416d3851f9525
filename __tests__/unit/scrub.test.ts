import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/model.js';
import { scrubReport } from '../../src/report/scrub.js';

const report = (text: string): Report => ({
  mode: 'preview',
  kustomization: 'flux-system/app',
  path: 'app',
  server: 'https://k',
  ok: false,
  changeset: [
    {
      subject: 'ConfigMap/a/b',
      action: 'configured',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'b',
      diff: [{ path: '/data/x', kind: 'changed', before: 'old', after: text } as never],
    },
  ],
  counts: { created: 0, configured: 1, unchanged: 0, skipped: 0, deleted: 0 },
  durationMs: 1,
  notes: [],
  error: `failed near ${text}`,
});

describe('scrubReport', () => {
  it.each([
    ['a plain value', 's3cr3t-token', 's3cr3t-token'],
    ['a value with quotes and a newline', 'pa"ss\nword', 'pa"ss\nword'],
    ['the base64 form of a value', 'hunter2-long', Buffer.from('hunter2-long').toString('base64')],
  ])('removes %s everywhere', (_, secret, shown) => {
    const out = scrubReport(report(`x ${shown} y`), [secret]);
    const json = JSON.stringify(out);
    expect(json).not.toContain(JSON.stringify(shown).slice(1, -1));
    expect(out.error).toBe('failed near x *** y');
  });
  it('leaves short values and unrelated text alone', () => {
    const r = report('abc value');
    expect(scrubReport(r, ['abc', ''])).toEqual(r);
    expect(scrubReport(r, [])).toBe(r);
  });
  it('replaces a longer secret whole before a shorter one inside it', () => {
    expect(scrubReport(report('token-1234-extra'), ['token-1234', 'token-1234-extra']).error).toBe('failed near ***');
  });
});
