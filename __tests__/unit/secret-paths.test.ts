// Provenance masking: fields that came from a secret source (SOPS, a substituteFrom Secret, secret-vars)
// are masked in diffs on both sides, whatever the kind, and the helpers that find and carry those paths.
import { describe, expect, it } from 'vitest';
import { diffObjects, renderDiff, type FieldChange } from '../../src/ssa/diff.js';
import { secretForms } from '../../src/objects/secret.js';
import { covered, encryptedLeftovers, maskPaths, pathsHolding, valuesAt } from '../../src/ssa/mask.js';
import {
  decodeInventory,
  encodeInventory,
  type InventoryRecord,
  type InventoryStatus,
} from '../../src/inventory/codec.js';
import { collectSecretPaths, mergeSecretPaths, recordSecretPaths } from '../../src/substitute/provenance.js';
import { Scrubber, scrubText } from '../../src/report/scrub.js';
import { cipherPaths, refuseCiphertext } from '../../src/sops/resources.js';

const CANARY = 'canary-Value-7Q';
const cm = (data: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...(labels ? { labels } : {}) },
  data,
});

describe('diffObjects with secret paths', () => {
  it.each<{
    why: string;
    live: Record<string, unknown> | undefined;
    dry: Record<string, unknown>;
    paths: string[];
    want: FieldChange[];
  }>([
    {
      why: 'a changed ConfigMap value from SOPS: both sides masked',
      live: cm({ password: CANARY, plain: 'a' }),
      dry: cm({ password: 'new-' + CANARY, plain: 'b' }),
      paths: ['/data/password'],
      want: [
        { path: '/data/password', kind: 'changed', before: '*** (before)', after: '*** (after)' },
        { path: '/data/plain', kind: 'changed', before: 'a', after: 'b' },
      ],
    },
    {
      why: 'a removed secret field',
      live: cm({ password: CANARY }),
      dry: cm({}),
      paths: ['/data/password'],
      want: [{ path: '/data/password', kind: 'removed', before: '***' }],
    },
    {
      why: 'an added secret field',
      live: cm({}),
      dry: cm({ password: CANARY }),
      paths: ['/data/password'],
      want: [{ path: '/data/password', kind: 'added', after: '***' }],
    },
    {
      why: 'a change above a secret path (a list whose length changed)',
      live: { ...cm({}), spec: { env: [{ name: 'a', value: CANARY }] } },
      dry: {
        ...cm({}),
        spec: {
          env: [
            { name: 'a', value: CANARY },
            { name: 'b', value: 'x' },
          ],
        },
      },
      paths: ['/spec/env/0/value'],
      want: [{ path: '/spec/env', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
    {
      why: 'a change below a secret path',
      live: { ...cm({}), spec: { blob: { a: CANARY } } },
      dry: { ...cm({}), spec: { blob: { a: 'y' } } },
      paths: ['/spec/blob'],
      want: [{ path: '/spec/blob/a', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
    {
      why: 'a sibling whose name starts like the secret path is not masked',
      live: cm({ password: 'a', passwordHint: 'x' }),
      dry: cm({ password: 'a', passwordHint: 'y' }),
      paths: ['/data/password'],
      want: [{ path: '/data/passwordHint', kind: 'changed', before: 'x', after: 'y' }],
    },
    {
      why: 'a decrypted label',
      live: cm({}, { team: CANARY }),
      dry: cm({}, { team: 'other' }),
      paths: ['/metadata/labels/team'],
      want: [{ path: '/metadata/labels/team', kind: 'changed', before: '*** (before)', after: '*** (after)' }],
    },
  ])('$why', ({ live, dry, paths, want }) => {
    const changes = diffObjects(live, dry, paths);
    expect(changes).toEqual(want);
    expect(JSON.stringify(changes) + renderDiff(changes)).not.toContain(CANARY);
  });
});

describe('covered', () => {
  it.each<[string, string[], boolean]>([
    ['/data/a', ['/data/a'], true],
    ['/data', ['/data/a'], true],
    ['/data/a/b', ['/data/a'], true],
    ['/data/ab', ['/data/a'], false],
    ['/data/a', [], false],
    ['/data/a~1b', ['/data/a~1b'], true],
  ])('%s under %j: %s', (path, paths, want) => {
    expect(covered(path, paths)).toBe(want);
  });
});

describe('valuesAt and maskPaths', () => {
  const obj = {
    metadata: { name: 'n', labels: { 'a/b': 'lbl-value' } },
    data: { p: 'pw-value', n: 3 },
    list: ['x1y2'],
  };
  it.each<{ paths: string[]; values: string[] }>([
    { paths: ['/data/p'], values: ['pw-value'] },
    { paths: ['/metadata/labels/a~1b', '/list/0'], values: ['lbl-value', 'x1y2'] },
    { paths: ['/data'], values: ['pw-value', '3'] },
    { paths: ['/missing/x'], values: [] },
  ])('$paths', ({ paths, values }) => {
    expect(valuesAt(obj, paths)).toEqual(values);
    const masked = JSON.stringify(maskPaths(obj, paths));
    for (const v of values) expect(masked).not.toContain(`"${v}"`);
    expect(JSON.stringify(obj)).toContain('pw-value');
  });
});

describe('pathsHolding', () => {
  it.each<{ why: string; obj: unknown; values: string[]; want: string[] }>([
    { why: 'exact leaf', obj: { data: { a: CANARY, b: 'other' } }, values: [CANARY], want: ['/data/a'] },
    { why: 'inside a longer text', obj: { data: { a: `url=${CANARY};` } }, values: [CANARY], want: ['/data/a'] },
    { why: 'in a list', obj: { spec: { args: ['--x', CANARY] } }, values: [CANARY], want: ['/spec/args/1'] },
    { why: 'short values are not looked for', obj: { data: { a: 'abc' } }, values: ['abc'], want: [] },
    { why: 'nothing', obj: { data: { a: 'x' } }, values: [], want: [] },
  ])('$why', ({ obj, values, want }) => {
    expect(pathsHolding(obj, values)).toEqual(want);
  });
});

describe('secretForms', () => {
  it.each<{ why: string; value: string; has: string[] }>([
    { why: 'the value itself', value: CANARY, has: [CANARY] },
    {
      why: 'multi-line: joined as Flux strips newlines, and each line',
      value: 'line-one\nline-two\n',
      has: ['line-oneline-two', 'line-one', 'line-two', 'line-one\nline-two\n'],
    },
    { why: 'JSON-escaped', value: 'a"quoted"\\value', has: ['a\\"quoted\\"\\\\value'] },
    { why: 'base64', value: CANARY, has: [Buffer.from(CANARY).toString('base64')] },
    { why: 'YAML single-quoted', value: "it's-secret", has: ["it''s-secret"] },
  ])('$why', ({ value, has }) => {
    const forms = secretForms(value);
    for (const h of has) expect(forms).toContain(h);
    expect(forms.every((f) => f.length >= 4)).toBe(true);
  });
});

describe('encryptedLeftovers', () => {
  const enc = 'ENC[AES256_GCM,data:abcd,iv:efgh,tag:ijkl,type:str]';
  it.each<{ why: string; obj: Record<string, unknown>; want: string[] }>([
    { why: 'a ConfigMap value', obj: cm({ a: enc }), want: ['/data/a'] },
    {
      why: 'a Secret data value, base64',
      obj: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        data: { K: Buffer.from(enc).toString('base64') },
      },
      want: ['/data/K'],
    },
    {
      why: 'a Secret data file holding ENC lines',
      obj: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        data: { 'f.yaml': Buffer.from(`a: ${enc}\n`).toString('base64') },
      },
      want: ['/data/f.yaml'],
    },
    { why: 'plain values', obj: cm({ a: 'ENC is a word', b: 'ENC[not sops]' }), want: [] },
  ])('$why', ({ obj, want }) => {
    expect(encryptedLeftovers(obj)).toEqual(want);
  });
});

describe('inventory secret-paths.yaml', () => {
  const status: InventoryStatus = {
    kustomization: 'flux-system/app',
    result: 'Succeeded',
    startedAt: '2026-01-01T00:00:00.000Z',
    prune: true,
    deletionPolicy: 'MirrorPrune',
    timeoutMs: 1000,
  };
  const base: InventoryRecord = { entries: [{ id: 'n_c__ConfigMap', v: 'v1' }], pending: [], status };
  it.each<{ why: string; secretPaths?: Record<string, string[]>; stored: boolean }>([
    { why: 'paths round-trip', secretPaths: { n_c__ConfigMap: ['/data/a', '/metadata/labels/x~1y'] }, stored: true },
    { why: 'no paths: no key', stored: false },
    { why: 'empty lists: no key', secretPaths: { n_c__ConfigMap: [] }, stored: false },
  ])('$why', ({ secretPaths, stored }) => {
    const encoded = encodeInventory({ ...base, ...(secretPaths ? { secretPaths } : {}) });
    expect(Object.hasOwn(encoded.data, 'secret-paths.yaml')).toBe(stored);
    const decoded = decodeInventory(encoded.data, encoded.binaryData);
    expect(decoded.secretPaths).toEqual(stored ? secretPaths : undefined);
  });

  it.each(['- a', 'x: 3', 'x: [data]'])('refuses %j', (text) => {
    expect(() => decodeInventory({ 'status.yaml': 'result: Succeeded\n', 'secret-paths.yaml': text }, {})).toThrow(
      /secret-paths\.yaml/,
    );
  });
});

describe('collectSecretPaths / mergeSecretPaths', () => {
  const obj = (name: string, data: Record<string, string>) => ({ ...cm(data), metadata: { name, namespace: 'n' } });
  const id = (o: { metadata: { name: string } }) => o.metadata.name;
  it.each<{ why: string; byIndex: string[][]; values: string[]; want: [string, string[]][] }>([
    { why: 'by index', byIndex: [[], ['/data/b']], values: [], want: [['two', ['/data/b']]] },
    { why: 'by value', byIndex: [], values: [CANARY], want: [['one', ['/data/a']]] },
    { why: 'both, deduplicated', byIndex: [['/data/a']], values: [CANARY], want: [['one', ['/data/a']]] },
  ])('$why', ({ byIndex, values, want }) => {
    const objects = [obj('one', { a: CANARY }), obj('two', { b: 'x' })];
    expect([...collectSecretPaths(objects, byIndex, values, id)]).toEqual(want);
  });

  it('merges per id', () => {
    const merged = mergeSecretPaths(
      new Map([['a', ['/x', '/y']]]),
      undefined,
      new Map([
        ['a', ['/x', '/z']],
        ['b', ['/w']],
      ]),
    );
    expect([...merged]).toEqual([
      ['a', ['/x', '/y', '/z']],
      ['b', ['/w']],
    ]);
  });
});

describe('Scrubber / scrubText', () => {
  it.each<{ why: string; secrets: string[]; line: string; want: string }>([
    { why: 'the value', secrets: [CANARY], line: `x ${CANARY} y`, want: 'x *** y' },
    { why: 'newline-stripped', secrets: ['line-one\nline-two'], line: 'v=line-oneline-two', want: 'v=***' },
    { why: 'one line of it', secrets: ['line-one\nline-two'], line: 'v=line-two', want: 'v=***' },
    { why: 'JSON-escaped', secrets: ['a"quoted"'], line: '{"v":"a\\"quoted\\""}', want: '{"v":"***"}' },
    { why: 'base64', secrets: [CANARY], line: Buffer.from(CANARY).toString('base64'), want: '***' },
    { why: 'short values stay', secrets: ['abc'], line: 'abc', want: 'abc' },
  ])('$why', ({ secrets, line, want }) => {
    const s = new Scrubber();
    secrets.forEach((v) => s.add(v));
    expect(s.text(line)).toBe(want);
    expect(scrubText(line, secrets)).toBe(want);
  });

  it('add returns only the forms not seen before', () => {
    const s = new Scrubber();
    expect(s.add(CANARY)).toContain(CANARY);
    expect(s.add(CANARY)).toEqual([]);
  });

  it('a short value is neither masked by the runner (not even its base64) nor scrubbed from text', () => {
    const s = new Scrubber();
    expect(s.add('abc')).toEqual([]);
    expect(s.add('1')).toEqual([]);
    expect(s.add('')).toEqual([]);
    expect(s.text('abc def 1 YWJj')).toBe('abc def 1 YWJj');
  });
});

describe('refuseCiphertext', () => {
  const enc = 'ENC[AES256_GCM,data:abcd,iv:efgh,tag:ijkl,type:str]';
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'n' },
    data: { DB_PASSWORD: Buffer.from(enc).toString('base64') },
  };
  it('names the object, its file and the field', () => {
    expect(() => {
      refuseCiphertext([secret], () => 'deploy/kustomization.yaml');
    }).toThrow(
      'Secret/n/db (deploy/kustomization.yaml): /data/DB_PASSWORD still holds SOPS ciphertext (ENC[AES256_GCM,…]) after decryption',
    );
  });
  it('leaves objects that still carry SOPS metadata to stillEncrypted, and plain objects alone', () => {
    expect(() => {
      refuseCiphertext([{ ...secret, sops: { mac: 'ENC[x]' } }, cm({ a: 'b' })], () => undefined);
    }).not.toThrow();
  });
});

describe('cipherPaths', () => {
  const enc = 'ENC[AES256_GCM,data:abcd,iv:efgh,tag:ijkl,type:str]';
  it.each<{ why: string; doc: unknown; want: string[] }>([
    {
      why: 'data values only (encrypted_regex)',
      doc: { kind: 'ConfigMap', data: { a: enc, b: 'plain' } },
      want: ['/data/a'],
    },
    { why: 'a label', doc: { metadata: { labels: { 'x/y': enc } } }, want: ['/metadata/labels/x~1y'] },
    { why: 'list items', doc: { spec: { args: ['--a', enc] } }, want: ['/spec/args/1'] },
    { why: 'the sops metadata is not a field', doc: { sops: { mac: enc }, data: { a: enc } }, want: ['/data/a'] },
    { why: 'nothing encrypted', doc: { data: { a: 'x' } }, want: [] },
  ])('$why', ({ doc, want }) => {
    expect(cipherPaths(doc)).toEqual(want);
  });
});

describe('recordSecretPaths', () => {
  it.each<{
    why: string;
    recorded?: Record<string, string[]>;
    fresh: [string, string[]][];
    kept: string[];
    want: object;
  }>([
    { why: 'nothing', fresh: [], kept: ['a'], want: {} },
    { why: 'this run only', fresh: [['a', ['/x']]], kept: ['a'], want: { secretPaths: { a: ['/x'] } } },
    {
      why: 'earlier runs kept with this run (a rotated value stays secret)',
      recorded: { a: ['/old'] },
      fresh: [['a', ['/x']]],
      kept: ['a'],
      want: { secretPaths: { a: ['/old', '/x'] } },
    },
    { why: 'objects gone from the inventory dropped', recorded: { gone: ['/x'] }, fresh: [], kept: ['a'], want: {} },
  ])('$why', ({ recorded, fresh, kept, want }) => {
    expect(
      recordSecretPaths(
        recorded,
        new Map(fresh),
        kept.map((id) => ({ id })),
      ),
    ).toEqual(want);
  });
});
