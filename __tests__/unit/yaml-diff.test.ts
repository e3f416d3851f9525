import { describe, expect, it } from 'vitest';
import { maskPair, unifiedDiff, yamlDiff } from '../../src/ssa/yaml-diff.js';

describe('unifiedDiff', () => {
  it.each<[string, string[], string[], string[] | undefined]>([
    ['equal', ['a', 'b'], ['a', 'b'], undefined],
    [
      'one line changed, context around it',
      ['a', 'b', 'c', 'd', 'e'],
      ['a', 'b', 'X', 'd', 'e'],
      ['@@ -1,5 +1,5 @@', ' a', ' b', '-c', '+X', ' d', ' e'],
    ],
    [
      'far apart changes make two hunks, context cut to three lines',
      ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'],
      ['X', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', 'Y'],
      ['@@ -1,4 +1,4 @@', '-1', '+X', ' 2', ' 3', ' 4', '@@ -9,4 +9,4 @@', ' 9', ' 10', ' 11', '-12', '+Y'],
    ],
    ['a line added at the end', ['a'], ['a', 'b'], ['@@ -1,1 +1,2 @@', ' a', '+b']],
    ['a line removed at the start', ['a', 'b'], ['b'], ['@@ -1,2 +1,1 @@', '-a', ' b']],
  ])('%s', (_, a, b, want) => {
    expect(unifiedDiff(a, b)).toEqual(want);
  });

  it('gives up on objects too long to compare line by line (the field list stands in)', () => {
    const long = Array.from({ length: 3001 }, (_, i) => `line ${i}`);
    expect(unifiedDiff(long, [...long.slice(1), 'x'])).toBeUndefined();
  });
});

describe('yamlDiff', () => {
  it('shows a Deployment change as YAML with its context', () => {
    const live = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'web:1.4.0' }] } } },
    };
    const dryRun = structuredClone(live);
    dryRun.spec.template.spec.containers[0]!.image = 'web:1.5.0';
    expect(yamlDiff(live, dryRun)).toEqual([
      '@@ -8,4 +8,4 @@',
      '     spec:',
      '       containers:',
      '         - name: web',
      '-          image: web:1.4.0',
      '+          image: web:1.5.0',
    ]);
  });

  it("never shows a Secret's values: changed ones differ by marker only, equal ones are alike", () => {
    const live = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db' },
      data: { password: 'aHVudGVyMg==', user: 'YWRtaW4=' },
    };
    const dryRun = { ...live, data: { password: 'c2VjcmV0', user: 'YWRtaW4=', token: 'dG9r' } };
    const lines = yamlDiff(live, dryRun)!;
    expect(lines).toEqual([
      '@@ -3,5 +3,6 @@',
      ' metadata:',
      '   name: db',
      ' data:',
      '-  password: "*** (before)"',
      '+  password: "*** (after)"',
      '   user: "***"',
      '+  token: "***"',
    ]);
    for (const v of ['aHVudGVyMg==', 'YWRtaW4=', 'c2VjcmV0', 'dG9r']) expect(lines.join('\n')).not.toContain(v);
  });

  it('masks the fields written from a secret source in any object', () => {
    const live = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { url: 'postgres://u:old@db', mode: 'a' },
    };
    const dryRun = { ...live, data: { url: 'postgres://u:new@db', mode: 'b' } };
    const [before, after] = maskPair(live, dryRun, ['/data/url']);
    expect(before['data']).toEqual({ url: '*** (before)', mode: 'a' });
    expect(after['data']).toEqual({ url: '*** (after)', mode: 'b' });
    expect(yamlDiff(live, dryRun, ['/data/url'])!.join('\n')).not.toMatch(/old|new@/);
    // The inputs are left as they were.
    expect(live.data.url).toBe('postgres://u:old@db');
  });
});
