import { describe, expect, it } from 'vitest';
import {
  diffBlockLines,
  diffObjects,
  elementChanges,
  normalizeForDiff,
  renderDiff,
  type FieldChange,
} from '../../src/ssa/diff.js';

const SECRET = 'hunter2-Zq9xSecretValue';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');

const cm = (extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'n', ...meta },
  data: { a: '1' },
  ...extra,
});

describe('normalizeForDiff', () => {
  const noisy = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'cm',
      labels: { x: '1' },
      managedFields: [{ manager: 'm' }],
      resourceVersion: '7',
      uid: 'u',
      generation: 3,
      creationTimestamp: '2024-01-01T00:00:00Z',
      selfLink: '/api/v1/x',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'y' },
    },
    data: { a: '1' },
    status: { phase: 'x' },
  };
  it.each([
    {
      why: 'removes the noise',
      obj: noisy,
      want: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm', labels: { x: '1' }, annotations: { keep: 'y' } },
        data: { a: '1' },
      },
    },
    {
      why: 'drops annotations emptied by the last-applied removal',
      obj: {
        ...noisy,
        metadata: { name: 'cm', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
      },
      want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } },
    },
    { why: 'no metadata', obj: { kind: 'X', status: {} }, want: { kind: 'X' } },
  ])('$why', ({ obj, want }) => {
    const before = JSON.stringify(obj);
    expect(normalizeForDiff(obj)).toEqual(want);
    expect(JSON.stringify(obj)).toBe(before);
  });
});

describe('diffObjects', () => {
  it.each<{
    why: string;
    live: Record<string, unknown> | undefined;
    dry: Record<string, unknown>;
    want: FieldChange[];
  }>([
    { why: 'identical', live: cm(), dry: cm(), want: [] },
    {
      why: 'noise only',
      live: cm({ status: { a: 1 } }, { resourceVersion: '1', uid: 'a', managedFields: [{}] }),
      dry: cm({}, { resourceVersion: '2', generation: 4 }),
      want: [],
    },
    {
      why: 'changed leaf',
      live: cm({ data: { a: '1' } }),
      dry: cm({ data: { a: '2' } }),
      want: [{ path: '/data/a', kind: 'changed', before: '1', after: '2' }],
    },
    {
      why: 'added and removed leaves, sorted',
      live: cm({ data: { b: 'x', a: '1' } }),
      dry: cm({ data: { c: 'y', a: '1' } }),
      want: [
        { path: '/data/b', kind: 'removed', before: 'x' },
        { path: '/data/c', kind: 'added', after: 'y' },
      ],
    },
    {
      why: 'added map reported leaf by leaf, key escaped',
      live: cm(),
      dry: cm({}, { labels: { team: 'web', 'example.com/x': 'y' } }),
      want: [
        { path: '/metadata/labels/example.com~1x', kind: 'added', after: 'y' },
        { path: '/metadata/labels/team', kind: 'added', after: 'web' },
      ],
    },
    {
      why: 'lists of the same length element-wise, numeric order',
      live: cm({ list: Array.from({ length: 11 }, (_, i) => ({ v: i })) }),
      dry: cm({ list: Array.from({ length: 11 }, (_, i) => ({ v: i === 2 || i === 10 ? -i : i })) }),
      want: [
        { path: '/list/2/v', kind: 'changed', before: 2, after: -2 },
        { path: '/list/10/v', kind: 'changed', before: 10, after: -10 },
      ],
    },
    {
      why: 'list length change is one change',
      live: cm({ list: ['a', 'b'] }),
      dry: cm({ list: ['a', 'b', 'c'] }),
      want: [{ path: '/list', kind: 'changed', before: ['a', 'b'], after: ['a', 'b', 'c'] }],
    },
    {
      why: 'type change',
      live: cm({ x: { a: 1 } }),
      dry: cm({ x: 'str' }),
      want: [{ path: '/x', kind: 'changed', before: { a: 1 }, after: 'str' }],
    },
    {
      why: 'added list is one value',
      live: cm(),
      dry: cm({ list: [1] }),
      want: [{ path: '/list', kind: 'added', after: [1] }],
    },
    {
      why: 'no live object: every leaf added',
      live: undefined,
      dry: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', resourceVersion: '1' }, data: {} },
      want: [
        { path: '/apiVersion', kind: 'added', after: 'v1' },
        { path: '/data', kind: 'added', after: {} },
        { path: '/kind', kind: 'added', after: 'ConfigMap' },
        { path: '/metadata/name', kind: 'added', after: 'cm' },
      ],
    },
  ])('$why', ({ live, dry, want }) => {
    expect(diffObjects(live, dry)).toEqual(want);
  });
});

describe('Secret masking', () => {
  const secret = (data: Record<string, unknown> | undefined, stringData?: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'n' },
    type: 'Opaque',
    ...(data ? { data } : {}),
    ...(stringData ? { stringData } : {}),
  });
  it.each<{
    why: string;
    live: Record<string, unknown> | undefined;
    dry: Record<string, unknown>;
    want: FieldChange[];
  }>([
    {
      why: 'changed value',
      live: secret({ k: SECRET_B64 }),
      dry: secret({ k: 'b3RoZXI=' }),
      want: [{ path: '/data/k', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
    {
      why: 'unchanged key gives nothing, added and removed keys ***',
      live: secret({ same: SECRET_B64, old: SECRET_B64 }),
      dry: secret({ same: SECRET_B64, new: SECRET_B64 }),
      want: [
        { path: '/data/new', kind: 'added', after: '***' },
        { path: '/data/old', kind: 'removed', before: '***' },
      ],
    },
    {
      why: 'stringData',
      live: secret({ a: 'YQ==' }, { k: SECRET }),
      dry: secret({ a: 'YQ==' }, { k: SECRET + '!' }),
      want: [{ path: '/stringData/k', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
    {
      why: 'whole data map added',
      live: secret(undefined),
      dry: secret({ k: SECRET_B64 }, { s: SECRET }),
      want: [
        { path: '/data/k', kind: 'added', after: '***' },
        { path: '/stringData/s', kind: 'added', after: '***' },
      ],
    },
    {
      why: 'data replaced by a non-map',
      live: secret({ k: SECRET_B64 }),
      dry: { ...secret(undefined), data: SECRET },
      want: [{ path: '/data', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
    {
      why: 'new Secret',
      live: undefined,
      dry: secret({ k: SECRET_B64 }),
      want: [
        { path: '/apiVersion', kind: 'added', after: 'v1' },
        { path: '/data/k', kind: 'added', after: '***' },
        { path: '/kind', kind: 'added', after: 'Secret' },
        { path: '/metadata/name', kind: 'added', after: 's' },
        { path: '/metadata/namespace', kind: 'added', after: 'n' },
        { path: '/type', kind: 'added', after: 'Opaque' },
      ],
    },
  ])('$why', ({ live, dry, want }) => {
    const changes = diffObjects(live, dry);
    expect(changes).toEqual(want);
    const text = JSON.stringify(changes) + renderDiff(changes);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET_B64);
  });

  it('does not mask other kinds or non-v1 Secrets', () => {
    const other = { ...secret({ k: 'a' }), apiVersion: 'example.com/v1' };
    expect(diffObjects(other, { ...other, data: { k: 'b' } })).toEqual([
      { path: '/data/k', kind: 'changed', before: 'a', after: 'b' },
    ]);
  });

  it('renders masked values bare', () => {
    const changes = diffObjects(secret({ k: SECRET_B64, old: 'eA==' }), secret({ k: 'eQ==' }));
    expect(renderDiff(changes)).toBe('~ /data/k: *** (before) → *** (after)\n- /data/old: ***');
  });
});

describe('renderDiff', () => {
  const long = 'x'.repeat(200);
  it.each<{ why: string; changes: FieldChange[]; max?: number; want: string }>([
    { why: 'empty', changes: [], want: '' },
    {
      why: 'one line per kind',
      changes: [
        { path: '/spec/replicas', kind: 'changed', before: 1, after: 3 },
        { path: '/metadata/labels/team', kind: 'added', after: 'web' },
        { path: '/data/old', kind: 'removed', before: '***' },
        { path: '/spec/x', kind: 'changed', before: { a: [1] }, after: null },
      ],
      want: [
        '~ /spec/replicas: 1 → 3',
        '+ /metadata/labels/team: "web"',
        '- /data/old: ***',
        '~ /spec/x: {"a":[1]} → null',
      ].join('\n'),
    },
    {
      why: 'long values shortened to 80 characters',
      changes: [{ path: '/a', kind: 'added', after: long }],
      want: `+ /a: "${'x'.repeat(78)}…`,
    },
    {
      why: 'truncated past maxLines',
      changes: Array.from({ length: 5 }, (_, i) => ({ path: `/k${i}`, kind: 'added' as const, after: i })),
      max: 2,
      want: '+ /k0: 0\n+ /k1: 1\n… and 3 more changes',
    },
    {
      why: 'singular summary',
      changes: Array.from({ length: 3 }, (_, i) => ({ path: `/k${i}`, kind: 'added' as const, after: i })),
      max: 2,
      want: '+ /k0: 0\n+ /k1: 1\n… and 1 more change',
    },
    {
      why: 'exactly maxLines: no summary',
      changes: Array.from({ length: 2 }, (_, i) => ({ path: `/k${i}`, kind: 'added' as const, after: i })),
      max: 2,
      want: '+ /k0: 0\n+ /k1: 1',
    },
  ])('$why', ({ changes, max, want }) => {
    expect(renderDiff(changes, max)).toBe(want);
  });

  it('defaults to 50 lines', () => {
    const changes = Array.from({ length: 60 }, (_, i) => ({ path: `/k${i}`, kind: 'added' as const, after: i }));
    const lines = renderDiff(changes).split('\n');
    expect(lines).toHaveLength(51);
    expect(lines[50]).toBe('… and 10 more changes');
  });
});

// Long values: where two values differ is shown, a long list whose length changed as its elements.
describe('long values in renderDiff and diffBlockLines', () => {
  const args = Array.from({ length: 10 }, (_, i) => `--option-${i}=value`);
  const image = 'registry.example.com/platform/team-a/some-service-with-a-long-name';
  const env = (extra: object[] = []) => [
    { name: 'LOG_LEVEL', value: 'info' },
    { name: 'ENDPOINT', value: 'https://api.example.com/v1' },
    ...extra,
  ];
  it.each<{ why: string; change: FieldChange; text: string[]; block: string[] }>([
    {
      why: 'an entry added to a long list: that entry',
      change: { path: '/spec/args', kind: 'changed', before: args, after: [...args, '--new'] },
      text: ['+ /spec/args/10: "--new"'],
      block: ['+ /spec/args/10: "--new"'],
    },
    {
      why: 'an entry removed from a long list',
      change: { path: '/spec/args', kind: 'changed', before: args, after: args.filter((_, i) => i !== 4) },
      text: ['- /spec/args/4: "--option-4=value"'],
      block: ['- /spec/args/4: "--option-4=value"'],
    },
    {
      why: 'an element replaced and one added: field by field',
      change: {
        path: '/spec/env',
        kind: 'changed',
        before: env(),
        after: [env()[0], { name: 'ENDPOINT', value: 'https://api.example.com/v2' }, { name: 'NEW', value: 'x' }],
      },
      text: [
        '~ /spec/env/1/value: "https://api.example.com/v1" → "https://api.example.com/v2"',
        '+ /spec/env/2: {"name":"NEW","value":"x"}',
      ],
      block: [
        '- /spec/env/1/value: "https://api.example.com/v1"',
        '+ /spec/env/1/value: "https://api.example.com/v2"',
        '+ /spec/env/2: {"name":"NEW","value":"x"}',
      ],
    },
    {
      why: 'a long string changed past character 79: cut around the difference',
      change: { path: '/spec/image', kind: 'changed', before: `${image}:v1.2.3`, after: `${image}:v1.2.4` },
      text: ['~ /spec/image: …th-a-long-name:v1.2.3" → …th-a-long-name:v1.2.4"'],
      block: ['- /spec/image: …th-a-long-name:v1.2.3"', '+ /spec/image: …th-a-long-name:v1.2.4"'],
    },
    {
      why: 'a short list whose length changed: one line, as before',
      change: { path: '/list', kind: 'changed', before: ['a', 'b'], after: ['a', 'b', 'c'] },
      text: ['~ /list: ["a","b"] → ["a","b","c"]'],
      block: ['- /list: ["a","b"]', '+ /list: ["a","b","c"]'],
    },
    {
      why: 'a long list replaced wholesale: one line, cut where it starts to differ',
      change: {
        path: '/l',
        kind: 'changed',
        before: Array.from({ length: 30 }, (_, i) => i),
        after: Array.from({ length: 31 }, (_, i) => 100 + i),
      },
      text: [
        `~ /l: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,2… → [100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,11…`,
      ],
      block: [
        '- /l: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,2…',
        '+ /l: [100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,11…',
      ],
    },
    {
      why: 'a masked list change stays bare',
      change: { path: '/spec/env', kind: 'changed', before: '*** (before)', after: '*** (after)' },
      text: ['~ /spec/env: *** (before) → *** (after)'],
      block: ['- /spec/env: *** (before)', '+ /spec/env: *** (after)'],
    },
    {
      why: 'added and removed values cut as before',
      change: { path: '/a', kind: 'added', after: 'x'.repeat(200) },
      text: [`+ /a: "${'x'.repeat(78)}…`],
      block: [`+ /a: "${'x'.repeat(78)}…`],
    },
  ])('$why', ({ change, text, block }) => {
    expect(renderDiff([change])).toBe(text.join('\n'));
    expect(diffBlockLines(change)).toEqual(block);
  });

  it('counts a list shown element by element as one change for maxLines', () => {
    const change: FieldChange = { path: '/spec/args', kind: 'changed', before: args, after: ['--a', ...args, '--b'] };
    const other: FieldChange = { path: '/z', kind: 'added', after: 1 };
    expect(renderDiff([change, other], 1)).toBe('+ /spec/args/0: "--a"\n+ /spec/args/11: "--b"\n… and 1 more change');
  });

  it('a list change above a secret path never shows an element', () => {
    const secret = 'hunter2-Zq9xSecretValue-' + 'p'.repeat(40);
    const live = { ...cm(), spec: { env: [...env(), { name: 'TOKEN', value: secret }] } };
    const dry = { ...cm(), spec: { env: [...env(), { name: 'TOKEN', value: secret }, { name: 'B', value: 'y' }] } };
    const changes = diffObjects(live, dry, ['/spec/env/2/value']);
    const text = renderDiff(changes) + changes.flatMap(diffBlockLines).join('\n');
    expect(text).toBe('~ /spec/env: *** (before) → *** (after)- /spec/env: *** (before)\n+ /spec/env: *** (after)');
    expect(text).not.toContain('hunter2');
  });
});

describe('elementChanges', () => {
  const long = Array.from({ length: 10 }, (_, i) => `element-number-${i}`);
  it.each<{ why: string; change: FieldChange; want: FieldChange[] }>([
    {
      why: 'not a list: as it is',
      change: { path: '/a', kind: 'changed', before: 'x'.repeat(100), after: 'y' },
      want: [{ path: '/a', kind: 'changed', before: 'x'.repeat(100), after: 'y' }],
    },
    {
      why: 'a list that fits: as it is',
      change: { path: '/a', kind: 'changed', before: [1], after: [1, 2] },
      want: [{ path: '/a', kind: 'changed', before: [1], after: [1, 2] }],
    },
    {
      why: 'a nested long list expanded too',
      change: {
        path: '/a',
        kind: 'changed',
        before: [{ args: long }],
        after: [{ args: [...long, 'z'] }, 2],
      },
      want: [
        { path: '/a/0/args/10', kind: 'added', after: 'z' },
        { path: '/a/1', kind: 'added', after: 2 },
      ],
    },
    {
      why: 'an element moved: removed at its old index, added at its new one',
      change: {
        path: '/a',
        kind: 'changed',
        before: long,
        after: [...long.slice(1, 5), long[0], ...long.slice(5), 'x'],
      },
      want: [
        { path: '/a/0', kind: 'removed', before: 'element-number-0' },
        { path: '/a/4', kind: 'added', after: 'element-number-0' },
        { path: '/a/10', kind: 'added', after: 'x' },
      ],
    },
  ])('$why', ({ change, want }) => {
    expect(elementChanges(change)).toEqual(want);
  });
});

describe('renderDiff limits', () => {
  it('defaults to 50 lines', () => {
    const changes = Array.from({ length: 60 }, (_, i) => ({ path: `/k${i}`, kind: 'added' as const, after: i }));
    const lines = renderDiff(changes).split('\n');
    expect(lines).toHaveLength(51);
    expect(lines[50]).toBe('… and 10 more changes');
  });
});
