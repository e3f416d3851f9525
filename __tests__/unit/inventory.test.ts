import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  DEFAULT_LIMITS,
  decodeInventory,
  encodeInventory,
  partCount,
  readOwnEntries,
  type CodecLimits,
  type InventoryRecord,
  type InventoryStatus,
} from '../../src/inventory/codec.js';
import { minus, sortEntries, staleEntries, union } from '../../src/inventory/entries.js';
import { entryOf, refOf, subjectOfEntry, type Entry, type ObjectRef } from '../../src/objects/id.js';
import { leaseFree } from '../../src/inventory/lock.js';
import { entriesAfter, mergeConcurrent, pruneRefusal, SMALL_PRUNE, type RunOutcome } from '../../src/inventory/plan.js';
import { pruneExclusion } from '../../src/ssa/delete.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../../src/objects/flux.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const e = (id: string, v = 'v1'): Entry => ({ id, v });

/** `n` namespaced ConfigMap entries `<prefix>-<i>` in `default`. */
const configMaps = (n: number, prefix = 'cm'): Entry[] =>
  Array.from({ length: n }, (_, i) => e(`default_${prefix}-${String(i)}__ConfigMap`));

// Entries used throughout.
const NS = e('_team-a__Namespace');
const CRD = e('_foos.example.com_apiextensions.k8s.io_CustomResourceDefinition');
const CLUSTER_ROLE = e('_viewer_rbac.authorization.k8s.io_ClusterRole');
const INGRESS_CLASS = e('_nginx_networking.k8s.io_IngressClass');
const CONFIG_MAP = e('team-a_settings__ConfigMap');
const SERVICE = e('team-a_web__Service');
const DEPLOYMENT = e('team-a_web_apps_Deployment');
const CUSTOM = e('team-a_my-foo_example.com_Foo', 'v1alpha1');
const MUTATING = e('_inject_admissionregistration.k8s.io_MutatingWebhookConfiguration');
const VALIDATING = e('_check_admissionregistration.k8s.io_ValidatingWebhookConfiguration');

describe('entryOf / refOf', () => {
  it.each<[string, ObjectRef, Entry]>([
    [
      'core group namespaced',
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'default' },
      { id: 'default_settings__ConfigMap', v: 'v1' },
    ],
    [
      'core group cluster-scoped',
      { apiVersion: 'v1', kind: 'Namespace', name: 'team-a' },
      { id: '_team-a__Namespace', v: 'v1' },
    ],
    [
      'grouped namespaced',
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'team-a' },
      { id: 'team-a_web_apps_Deployment', v: 'v1' },
    ],
    [
      'grouped cluster-scoped',
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'viewer' },
      { id: '_viewer_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
    ],
    [
      'dotted name, grouped, beta version',
      { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'CustomResourceDefinition', name: 'foos.example.com' },
      { id: '_foos.example.com_apiextensions.k8s.io_CustomResourceDefinition', v: 'v1beta1' },
    ],
    [
      'custom resource',
      { apiVersion: 'helm.toolkit.fluxcd.io/v2beta2', kind: 'HelmRelease', name: 'podinfo', namespace: 'flux-system' },
      { id: 'flux-system_podinfo_helm.toolkit.fluxcd.io_HelmRelease', v: 'v2beta2' },
    ],
  ])('%s', (_name, ref, entry) => {
    expect(entryOf(ref)).toStrictEqual(entry);
    expect(refOf(entry)).toStrictEqual(ref);
    expect(refOf(entryOf(ref))).toStrictEqual(ref);
  });

  it.each<[string, Entry]>([
    ['three parts', e('default_settings_ConfigMap')],
    ['five parts', e('default_settings__ConfigMap_extra')],
    ['one part', e('ConfigMap')],
    ['empty id', e('')],
    ['empty name', e('default___ConfigMap')],
    ['empty kind', e('team-a_web_apps_')],
    ['empty version', e('default_settings__ConfigMap', '')],
  ])('refOf rejects an entry with %s', (_name, entry) => {
    expect(() => refOf(entry)).toThrow(
      `inventory entry ${JSON.stringify(entry)} is not <namespace>_<name>_<group>_<kind> with a version`,
    );
  });
});

describe('subjectOfEntry', () => {
  it.each<[Entry, string]>([
    [DEPLOYMENT, 'Deployment/team-a/web'],
    [CONFIG_MAP, 'ConfigMap/team-a/settings'],
    [NS, 'Namespace/team-a'],
    [CRD, 'CustomResourceDefinition/foos.example.com'],
  ])('%j → %s', (entry, subject) => {
    expect(subjectOfEntry(entry)).toBe(subject);
  });

  it('throws on a malformed entry', () => {
    expect(() => subjectOfEntry(e('a_b_c'))).toThrow('is not <namespace>_<name>_<group>_<kind>');
  });
});

describe('union', () => {
  it.each<[string, Entry[], Entry[], Entry[]]>([
    ['both empty', [], [], []],
    ['empty a', [], [NS, SERVICE], [NS, SERVICE]],
    ['empty b', [SERVICE, NS], [], [SERVICE, NS]],
    ['a then new entries of b, unsorted', [SERVICE, NS], [DEPLOYMENT, CRD], [SERVICE, NS, DEPLOYMENT, CRD]],
    [
      'a order kept, shared entries of b dropped',
      [DEPLOYMENT, NS],
      [NS, SERVICE, DEPLOYMENT],
      [DEPLOYMENT, NS, SERVICE],
    ],
    [
      "a's version wins",
      [e('team-a_web_apps_Deployment', 'v1beta2')],
      [e('team-a_web_apps_Deployment', 'v1')],
      [e('team-a_web_apps_Deployment', 'v1beta2')],
    ],
    ['duplicates inside b collapse to the first', [NS], [SERVICE, e(SERVICE.id, 'v2'), NS, SERVICE], [NS, SERVICE]],
  ])('%s', (_name, a, b, want) => {
    const aCopy = structuredClone(a);
    const bCopy = structuredClone(b);
    expect(union(a, b)).toStrictEqual(want);
    expect(a).toStrictEqual(aCopy);
    expect(b).toStrictEqual(bCopy);
  });

  it('returns a new array', () => {
    const a = [NS];
    expect(union(a, [])).not.toBe(a);
  });
});

describe('minus', () => {
  it.each<[string, Entry[], Entry[], Entry[]]>([
    ['nothing removed', [NS, SERVICE], [], [NS, SERVICE]],
    ['empty a', [], [NS], []],
    ['removes shared ids, keeps order', [SERVICE, NS, DEPLOYMENT, CRD], [NS, CRD], [SERVICE, DEPLOYMENT]],
    ['by id, not by version', [e(DEPLOYMENT.id, 'v1beta2')], [e(DEPLOYMENT.id, 'v1')], []],
    ['ids only in b are ignored', [NS], [SERVICE, DEPLOYMENT], [NS]],
    ['everything removed', [NS, SERVICE], [SERVICE, NS], []],
  ])('%s', (_name, a, b, want) => {
    expect(minus(a, b)).toStrictEqual(want);
  });
});

describe('sortEntries', () => {
  it.each<[string, Entry[], string[]]>([
    ['empty', [], []],
    [
      'by id, cluster-scoped (leading _) before lowercase namespaces',
      [e('default_b__ConfigMap'), e('_ns__Namespace'), e('default_a__ConfigMap'), e('alpha_x__Secret')],
      ['_ns__Namespace', 'alpha_x__Secret', 'default_a__ConfigMap', 'default_b__ConfigMap'],
    ],
    [
      'by UTF-16 code unit, not locale (- < . < letters)',
      [e('ns_ab__ConfigMap'), e('ns_a.b__ConfigMap'), e('ns_a-b__ConfigMap')],
      ['ns_a-b__ConfigMap', 'ns_a.b__ConfigMap', 'ns_ab__ConfigMap'],
    ],
    [
      'uppercase before underscore before lowercase',
      [e('ns_x_apps_Deployment'), e('ns_x__Service'), e('ns_x__ConfigMap')],
      ['ns_x__ConfigMap', 'ns_x__Service', 'ns_x_apps_Deployment'],
    ],
  ])('%s', (_name, input, wantIds) => {
    const copy = structuredClone(input);
    const sorted = sortEntries(input);
    expect(sorted.map((x) => x.id)).toStrictEqual(wantIds);
    expect(input).toStrictEqual(copy);
  });

  it('keeps versions attached to their ids', () => {
    expect(sortEntries([e('b_x__Secret', 'v2'), e('a_x__Secret', 'v1beta1')])).toStrictEqual([
      e('a_x__Secret', 'v1beta1'),
      e('b_x__Secret', 'v2'),
    ]);
  });
});

describe('staleEntries', () => {
  it.each<[string, Entry[], Entry[], Entry[]]>([
    ['nothing stale', [NS, DEPLOYMENT], [DEPLOYMENT, NS], []],
    ['both empty', [], [], []],
    ['only new entries', [], [NS, DEPLOYMENT], []],
    ['old minus new by id', [NS, SERVICE, DEPLOYMENT], [NS, DEPLOYMENT], [SERVICE]],
    ['a version change is not stale', [e(DEPLOYMENT.id, 'v1beta2')], [e(DEPLOYMENT.id, 'v1')], []],
    ["keeps the old entry's version", [e(CUSTOM.id, 'v1alpha1'), NS], [NS], [e(CUSTOM.id, 'v1alpha1')]],
    ['a Deployment before its Namespace', [NS, DEPLOYMENT], [], [DEPLOYMENT, NS]],
    ['same, from the reverse input order', [DEPLOYMENT, NS], [], [DEPLOYMENT, NS]],
    ['the Namespace before the CRD', [CRD, NS], [], [NS, CRD]],
    ['webhooks first', [DEPLOYMENT, MUTATING, VALIDATING], [], [VALIDATING, MUTATING, DEPLOYMENT]],
    [
      'same kind: reverse name order',
      [e('team-a_a__ConfigMap'), e('team-a_c__ConfigMap'), e('team-a_b__ConfigMap')],
      [],
      [e('team-a_c__ConfigMap'), e('team-a_b__ConfigMap'), e('team-a_a__ConfigMap')],
    ],
    [
      'full reverse apply order',
      [NS, CONFIG_MAP, CRD, VALIDATING, DEPLOYMENT, INGRESS_CLASS, CUSTOM, CLUSTER_ROLE, SERVICE, MUTATING],
      [],
      [VALIDATING, MUTATING, CUSTOM, DEPLOYMENT, SERVICE, CONFIG_MAP, INGRESS_CLASS, CLUSTER_ROLE, NS, CRD],
    ],
    [
      'only stale ones ordered, kept ones left out',
      [NS, CRD, DEPLOYMENT, VALIDATING, SERVICE],
      [SERVICE, CRD],
      [VALIDATING, DEPLOYMENT, NS],
    ],
  ])('%s', (_name, old, next, want) => {
    expect(staleEntries(old, next)).toStrictEqual(want);
  });

  it('throws on a malformed stale entry', () => {
    expect(() => staleEntries([e('bad')], [])).toThrow('is not <namespace>_<name>_<group>_<kind>');
  });
});

describe('inventory codec', () => {
  const status: InventoryStatus = {
    kustomization: 'flux-system/apps',
    source: 'acme/fleet',
    set: 'clusters/prod',
    result: 'Succeeded',
    message: 'Applied revision: main@sha1:0123abcd\nsecond line: with colon',
    lastAttemptedRevision: 'main@sha1:0123abcd',
    lastAppliedRevision: 'main@sha1:0123abcd',
    startedAt: '2024-05-01T10:00:00.000Z',
    finishedAt: '2024-05-01T10:01:30.500Z',
    durationMs: 90500,
    runUrl: 'https://github.com/acme/fleet/actions/runs/1',
    prune: true,
    deletionPolicy: 'MirrorPrune',
    timeoutMs: 300000,
  };
  const rec = (entries: Entry[], pending: Entry[] = []): InventoryRecord => ({ entries, pending, status });
  const SMALL: CodecLimits = { compressAbove: 100, maxPartBytes: 200 };
  const text = (entries: Entry[]) =>
    sortEntries(entries)
      .map((x) => `- id: ${x.id}\n  v: ${x.v}\n`)
      .join('');
  const sha = (b64: string[]) =>
    createHash('sha256')
      .update(Buffer.concat(b64.map((p) => Buffer.from(p, 'base64'))))
      .digest('hex');

  it('keeps a small inventory as readable, sorted YAML in data', () => {
    const enc = encodeInventory(rec([DEPLOYMENT, NS]), SMALL);
    expect(enc).toStrictEqual({
      data: {
        'status.yaml': stringify(status),
        count: '2',
        'entries.yaml': '- id: _team-a__Namespace\n  v: v1\n- id: team-a_web_apps_Deployment\n  v: v1\n',
      },
      binaryData: {},
      parts: [],
    });
    expect(parse(enc.data['entries.yaml']!)).toStrictEqual([NS, DEPLOYMENT]);
  });

  it('writes pending.yaml only when something is pending', () => {
    expect(encodeInventory(rec([NS], [SERVICE, CONFIG_MAP])).data['pending.yaml']).toBe(
      '- id: team-a_settings__ConfigMap\n  v: v1\n- id: team-a_web__Service\n  v: v1\n',
    );
    expect(Object.keys(encodeInventory(rec([NS], [])).data).sort()).toStrictEqual([
      'count',
      'entries.yaml',
      'status.yaml',
    ]);
  });

  it('an empty inventory', () => {
    const enc = encodeInventory(rec([]));
    expect(enc.data['entries.yaml']).toBe('');
    expect(enc.data['count']).toBe('0');
    expect(decodeInventory(enc.data, enc.binaryData, enc.parts)).toStrictEqual(rec([]));
  });

  type Tier = 'plain' | 'gzip' | 'parts';
  const tierOf = (enc: ReturnType<typeof encodeInventory>): Tier =>
    enc.parts.length > 0 ? 'parts' : enc.binaryData['entries.yaml.gz'] !== undefined ? 'gzip' : 'plain';

  it.each<[string, Entry[], Entry[], CodecLimits, Tier]>([
    ['plain', [DEPLOYMENT, NS], [SERVICE], SMALL, 'plain'],
    ['gzip into binaryData', configMaps(5), [], SMALL, 'gzip'],
    ['gzip with pending', configMaps(5).reverse(), [CRD, NS], SMALL, 'gzip'],
    ['split into parts', configMaps(300, 'app'), [], SMALL, 'parts'],
    ['split into parts with pending', configMaps(300, 'app'), configMaps(3, 'new'), SMALL, 'parts'],
    ['plain with default limits', configMaps(50), [], DEFAULT_LIMITS, 'plain'],
  ])('round trip: %s', (_name, entries, pending, limits, tier) => {
    const enc = encodeInventory(rec(entries, pending), limits);
    expect(tierOf(enc)).toBe(tier);
    expect(enc.data['count']).toBe(String(entries.length));
    expect(partCount(enc.data)).toBe(enc.parts.length);
    const dec = decodeInventory(enc.data, enc.binaryData, enc.parts);
    expect(dec).toStrictEqual(rec(sortEntries(entries), sortEntries(pending)));
  });

  it('gzip tier: binaryData holds the gzip of the sorted YAML and data its sha256', () => {
    const entries = configMaps(5).reverse();
    const enc = encodeInventory(rec(entries), SMALL);
    expect(enc.data['entries.yaml']).toBeUndefined();
    expect(enc.data['entries.encoding']).toBe('gzip');
    expect(enc.data['entries.parts']).toBeUndefined();
    const b64 = enc.binaryData['entries.yaml.gz']!;
    expect(b64.length).toBeLessThanOrEqual(SMALL.maxPartBytes);
    expect(gunzipSync(Buffer.from(b64, 'base64')).toString('utf8')).toBe(text(entries));
    expect(enc.data['entries.sha256']).toBe(sha([b64]));
  });

  it('parts tier: every part is valid base64 within maxPartBytes, and together they are the gzip', () => {
    const entries = configMaps(300, 'app');
    const enc = encodeInventory(rec(entries), SMALL);
    expect(enc.binaryData).toStrictEqual({});
    expect(enc.data['entries.yaml']).toBeUndefined();
    expect(enc.data['entries.encoding']).toBe('gzip');
    expect(enc.parts.length).toBeGreaterThan(1);
    expect(enc.data['entries.parts']).toBe(String(enc.parts.length));
    for (const p of enc.parts) {
      expect(p.length).toBeLessThanOrEqual(SMALL.maxPartBytes);
      expect(Buffer.from(p, 'base64').toString('base64')).toBe(p);
    }
    // All parts but the last are full (150 raw bytes → 200 base64 characters).
    for (const p of enc.parts.slice(0, -1)) expect(p.length).toBe(200);
    const gz = Buffer.concat(enc.parts.map((p) => Buffer.from(p, 'base64')));
    expect(gunzipSync(gz).toString('utf8')).toBe(text(entries));
    expect(enc.data['entries.sha256']).toBe(sha(enc.parts));
  });

  it('compresses only above compressAbove (boundary inclusive)', () => {
    const entries = configMaps(3);
    const size = Buffer.byteLength(text(entries));
    expect(tierOf(encodeInventory(rec(entries), { compressAbove: size, maxPartBytes: 10_000 }))).toBe('plain');
    expect(tierOf(encodeInventory(rec(entries), { compressAbove: size - 1, maxPartBytes: 10_000 }))).toBe('gzip');
  });

  it('splits only above maxPartBytes (boundary inclusive)', () => {
    const entries = configMaps(40);
    const whole = encodeInventory(rec(entries), { compressAbove: 0, maxPartBytes: 1_000_000 });
    const len = whole.binaryData['entries.yaml.gz']!.length;
    expect(tierOf(encodeInventory(rec(entries), { compressAbove: 0, maxPartBytes: len }))).toBe('gzip');
    // One base64 quantum (4 characters) less; base64 lengths are multiples of 4.
    expect(len % 4).toBe(0);
    const split = encodeInventory(rec(entries), { compressAbove: 0, maxPartBytes: len - 4 });
    expect(tierOf(split)).toBe('parts');
    expect(split.parts).toHaveLength(2);
    expect(split.parts.map((p) => p.length)).toStrictEqual([len - 4, 4]);
    expect(split.data['entries.sha256']).toBe(whole.data['entries.sha256']);
    expect(decodeInventory(split.data, split.binaryData, split.parts).entries).toStrictEqual(sortEntries(entries));
  });

  it.each([201, 202, 203, 4, 5])('keeps every part within maxPartBytes %i and round-trips', (maxPartBytes) => {
    const entries = configMaps(60);
    const enc = encodeInventory(rec(entries), { compressAbove: 0, maxPartBytes });
    expect(enc.parts.length).toBeGreaterThan(1);
    for (const p of enc.parts) expect(p.length).toBeLessThanOrEqual(maxPartBytes);
    expect(decodeInventory(enc.data, enc.binaryData, enc.parts).entries).toStrictEqual(sortEntries(entries));
  });

  it('is deterministic: the same entries in another order encode to the same bytes', () => {
    const entries = configMaps(300, 'app');
    const a = encodeInventory(rec(entries), SMALL);
    const b = encodeInventory(rec([...entries].reverse()), SMALL);
    expect(b).toStrictEqual(a);
  });

  it('round-trips 20,000 entries with the default limits', () => {
    const kinds = [
      ['', 'ConfigMap'],
      ['apps', 'Deployment'],
      ['', 'Service'],
      ['networking.k8s.io', 'Ingress'],
    ] as const;
    const entries = Array.from({ length: 20_000 }, (_, i) => {
      const [group, kind] = kinds[i % kinds.length]!;
      return e(
        `ns-${String(i % 97)}_obj-${String(i)}-${(i * 2654435761).toString(36)}_${group}_${kind}`,
        `v${String(1 + (i % 3))}`,
      );
    });
    expect(new Set(entries.map((x) => x.id)).size).toBe(20_000);
    const enc = encodeInventory(rec(entries, [NS]));
    // About 1 MB of YAML, about 300 kB compressed: gzip in binaryData, no parts.
    expect(tierOf(enc)).toBe('gzip');
    expect(enc.data['entries.yaml']).toBeUndefined();
    expect(enc.data['entries.encoding']).toBe('gzip');
    expect(enc.data['count']).toBe('20000');
    const dec = decodeInventory(enc.data, enc.binaryData, enc.parts);
    expect(dec.entries).toHaveLength(20_000);
    expect(dec).toStrictEqual(rec(sortEntries(entries), [NS]));
  });

  it('round-trips the status, including strings YAML would otherwise read as other types', () => {
    const tricky: InventoryStatus = {
      kustomization: 'flux-system/true',
      source: 'null',
      result: 'Failed',
      message: '0x10: "quoted" # not a comment\n- not a list',
      lastAttemptedRevision: '1234',
      startedAt: '2024-05-01',
      prune: false,
      deletionPolicy: 'WaitForTermination',
      timeoutMs: 0,
    };
    for (const limits of [SMALL, DEFAULT_LIMITS]) {
      for (const entries of [[NS], configMaps(300)]) {
        const enc = encodeInventory({ entries, pending: [], status: tricky }, limits);
        expect(decodeInventory(enc.data, enc.binaryData, enc.parts).status).toStrictEqual(tricky);
      }
    }
  });

  describe('rejects corrupted or mismatched parts', () => {
    const entries = configMaps(300, 'app');
    const enc = encodeInventory(rec(entries), SMALL);
    const other = encodeInventory(rec(configMaps(300, 'other')), SMALL);
    const gz = encodeInventory(rec(configMaps(5)), SMALL);
    const MISMATCH = 'the compressed entries do not match entries.sha256 (a part is missing or from another write)';

    it('sanity: the unmodified parts decode and have at least three parts', () => {
      expect(enc.parts.length).toBeGreaterThanOrEqual(3);
      expect(decodeInventory(enc.data, enc.binaryData, enc.parts).entries).toStrictEqual(sortEntries(entries));
    });

    it.each<[string, () => [Record<string, string>, Record<string, string>, string[]]]>([
      ['a missing middle part', () => [enc.data, enc.binaryData, enc.parts.filter((_, i) => i !== 1)]],
      ['a missing last part', () => [enc.data, enc.binaryData, enc.parts.slice(0, -1)]],
      ['parts out of order', () => [enc.data, enc.binaryData, [enc.parts[1]!, enc.parts[0]!, ...enc.parts.slice(2)]]],
      ['a part from another write', () => [enc.data, enc.binaryData, [other.parts[0]!, ...enc.parts.slice(1)]]],
      ['no parts passed', () => [enc.data, enc.binaryData, []]],
      ['an extra part', () => [enc.data, enc.binaryData, [...enc.parts, enc.parts[0]!]]],
      ['a wrong sha256', () => [{ ...enc.data, 'entries.sha256': '0'.repeat(64) }, enc.binaryData, enc.parts]],
      ['a missing sha256', () => [{ ...enc.data, 'entries.sha256': '' }, enc.binaryData, enc.parts]],
      [
        "another write's head with these parts",
        () => [{ ...enc.data, 'entries.sha256': other.data['entries.sha256']! }, enc.binaryData, enc.parts],
      ],
      [
        'binaryData with a wrong sha256',
        () => [
          { ...gz.data, 'entries.sha256': gz.data['entries.sha256']!.replace(/^./, (c) => (c === '0' ? '1' : '0')) },
          gz.binaryData,
          [],
        ],
      ],
      [
        'truncated binaryData',
        () => [gz.data, { 'entries.yaml.gz': gz.binaryData['entries.yaml.gz']!.slice(0, 40) }, []],
      ],
      ['missing binaryData', () => [gz.data, {}, []]],
    ])('%s', (_name, args) => {
      const [data, binaryData, parts] = args();
      expect(() => decodeInventory(data, binaryData, parts)).toThrow(MISMATCH);
    });
  });

  it.each<[string, Record<string, string>, string]>([
    ['an unknown encoding', { 'entries.encoding': 'zstd' }, 'unknown entries.encoding zstd'],
    ['entries.yaml that is not a list', { 'entries.yaml': 'id: x\nv: v1\n' }, 'entries.yaml is not a list'],
    ['an entry without v', { 'entries.yaml': '- id: _a__Namespace\n' }, 'entries.yaml[0] is not {id, v}'],
    [
      'a non-string id',
      { 'entries.yaml': '- id: _a__Namespace\n  v: v1\n- id: 12\n  v: v1\n' },
      'entries.yaml[1] is not {id, v}',
    ],
    [
      'a malformed pending.yaml',
      { 'entries.yaml': '', 'pending.yaml': '- just a string\n' },
      'pending.yaml[0] is not {id, v}',
    ],
  ])('decode rejects %s', (_name, data, message) => {
    expect(() => decodeInventory(data, {})).toThrow(message);
  });

  it.each<[Record<string, string>, number]>([
    [{}, 0],
    [{ 'entries.parts': '0' }, 0],
    [{ 'entries.parts': '1' }, 1],
    [{ 'entries.parts': '12' }, 12],
  ])('partCount(%j) = %i', (data, n) => {
    expect(partCount(data)).toBe(n);
  });

  it.each<string>(['-1', '1.5', 'x', 'NaN', 'Infinity', '', ' 2', '1e3'])(
    'partCount rejects entries.parts %j',
    (value) => {
      expect(() => partCount({ 'entries.parts': value })).toThrow(`entries.parts is ${JSON.stringify(value)}`);
    },
  );
});

describe('pruneRefusal', () => {
  const guard = { maxShare: 0.5, allowLarge: false };
  const emptyBuild = (n: number) =>
    `the build rendered no objects, so pruning would delete all ${String(n)} object(s) of the inventory; ` +
    'nothing was deleted. If that is intended, set the input allow-large-prune: true for one run';
  const tooMany = (stale: number, old: number, pct: number, maxPct: number) =>
    `pruning would delete ${String(stale)} of ${String(old)} object(s) (${String(pct)}%), more than ` +
    `prune-max-share (${String(maxPct)}%); nothing was deleted. If that is intended, raise ` +
    'prune-max-share or set allow-large-prune: true for one run';

  /** An inventory of `old` objects of which `stale` are pruned and `added` new ones rendered. */
  const scenario = (old: number, stale: number, added = 0) => {
    const o = configMaps(old, 'old');
    const next = [...o.slice(stale), ...configMaps(added, 'new')];
    return { old: o, next, stale: staleEntries(o, next) };
  };

  it('SMALL_PRUNE is 5', () => {
    expect(SMALL_PRUNE).toBe(5);
  });

  it.each<[string, number, number, number, { maxShare: number; allowLarge: boolean }, string | undefined]>([
    ['nothing stale', 10, 0, 0, guard, undefined],
    ['nothing stale, empty inventory', 0, 0, 0, guard, undefined],
    ['nothing stale, only additions', 3, 0, 4, guard, undefined],
    ['empty build with a non-empty inventory', 3, 3, 0, guard, emptyBuild(3)],
    ['empty build deleting a single object', 1, 1, 0, guard, emptyBuild(1)],
    ['empty build, even with maxShare 1', 20, 20, 0, { maxShare: 1, allowLarge: false }, emptyBuild(20)],
    ['empty build with allowLarge', 20, 20, 0, { maxShare: 0.5, allowLarge: true }, undefined],
    ['large share with allowLarge', 20, 19, 0, { maxShare: 0.1, allowLarge: true }, undefined],
    ['above maxShare with more than SMALL_PRUNE objects', 10, 6, 0, guard, tooMany(6, 10, 60, 50)],
    ['100% replaced by new objects', 6, 6, 1, guard, tooMany(6, 6, 100, 50)],
    ['percentage rounded', 12, 7, 0, guard, tooMany(7, 12, 58, 50)],
    ['maxShare 0 refuses any large prune', 100, 6, 0, { maxShare: 0, allowLarge: false }, tooMany(6, 100, 6, 0)],
    ['exactly SMALL_PRUNE objects at 100% share', 5, 5, 1, guard, undefined],
    ['SMALL_PRUNE objects at 100% share, maxShare 0', 5, 5, 1, { maxShare: 0, allowLarge: false }, undefined],
    ['share exactly at maxShare', 12, 6, 0, guard, undefined],
    ['share exactly at maxShare 1', 6, 6, 1, { maxShare: 1, allowLarge: false }, undefined],
    ['share below maxShare', 100, 40, 0, guard, undefined],
  ])('%s', (_name, oldN, staleN, added, g, want) => {
    const { old, next, stale } = scenario(oldN, staleN, added);
    expect(stale).toHaveLength(staleN);
    expect(pruneRefusal(old, next, stale, g)).toBe(want);
  });
});

describe('entriesAfter', () => {
  const A1 = e('ns_a__ConfigMap');
  const B1 = e('ns_b__ConfigMap');
  const C1 = e('ns_c__ConfigMap');
  const D1 = e('ns_d__ConfigMap');
  const X2 = e('ns_x_example.com_Foo', 'v2');
  const X1 = e('ns_x_example.com_Foo', 'v1');
  const old = [A1, B1, C1, X1];
  const next = [D1, A1, X2];

  it.each<[string, RunOutcome, Entry[]]>([
    ['succeeded: the new set', { kind: 'succeeded', survivors: [] }, [D1, A1, X2]],
    ['succeeded: plus survivors of the prune', { kind: 'succeeded', survivors: [C1, B1] }, [D1, A1, X2, C1, B1]],
    ['succeeded: survivors already in next are not doubled', { kind: 'succeeded', survivors: [A1, X1] }, [D1, A1, X2]],
    ['failed: nothing applied keeps old', { kind: 'failed', applied: [] }, [A1, B1, C1, X1]],
    ['failed: what was applied plus old', { kind: 'failed', applied: [D1, A1] }, [D1, A1, B1, C1, X1]],
    ['failed: the applied version wins over the old one', { kind: 'failed', applied: [X2] }, [X2, A1, B1, C1]],
  ])('%s', (_name, outcome, want) => {
    expect(entriesAfter(old, next, outcome)).toStrictEqual(want);
  });
});

describe('mergeConcurrent', () => {
  const [A, B, C, D, X, Y] = ['a', 'b', 'c', 'd', 'x', 'y'].map((n) => e(`ns_${n}__ConfigMap`)) as [
    Entry,
    Entry,
    Entry,
    Entry,
    Entry,
    Entry,
  ];

  it.each<[string, Entry[], Entry[], Entry[], Entry[]]>([
    ['no other writer', [A, B], [A, B], [A, C], [A, C]],
    ['entries another writer added survive', [A, B, C], [A, B, C, X, Y], [A, D], [A, D, X, Y]],
    ['entries we removed stay removed', [A, B, C], [A, B, C], [A], [A]],
    ['we removed some while another writer added', [A, B], [A, B, X], [B], [B, X]],
    ['entries another writer removed: our answer stands', [A, B, C], [A], [A, B, C], [A, B, C]],
    ['another writer removed the inventory', [A, B], [], [A, D], [A, D]],
    ['an entry both added: our version wins', [A], [A, e(X.id, 'v2')], [A, X], [A, X]],
    ['empty base: everything latest holds survives', [], [X, Y], [A], [A, X, Y]],
  ])('%s', (_name, base, latest, ours, want) => {
    expect(mergeConcurrent(base, latest, ours)).toStrictEqual(want);
  });
});

describe('leaseFree', () => {
  const NOW = Date.parse('2024-05-01T12:00:00.000Z');
  const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
  const micro = (offsetMs: number) => at(offsetMs).replace(/Z$/, '000Z');

  it.each<[string, Parameters<typeof leaseFree>[0], boolean]>([
    ['no spec', undefined, true],
    ['empty spec', {}, true],
    ['no holder, fresh renewTime', { holderIdentity: null, renewTime: at(0), leaseDurationSeconds: 15 }, true],
    ['empty holder', { holderIdentity: '', renewTime: at(0), leaseDurationSeconds: 15 }, true],
    ['held and fresh', { holderIdentity: 'run 1', renewTime: at(-10_000), leaseDurationSeconds: 15 }, false],
    ['held, MicroTime format', { holderIdentity: 'run 1', renewTime: micro(-10_000), leaseDurationSeconds: 15 }, false],
    ['held, expired', { holderIdentity: 'run 1', renewTime: at(-16_000), leaseDurationSeconds: 15 }, true],
    [
      'held, expired, MicroTime format',
      { holderIdentity: 'run 1', renewTime: micro(-16_000), leaseDurationSeconds: 15 },
      true,
    ],
    ['held, exactly at expiry', { holderIdentity: 'run 1', renewTime: at(-15_000), leaseDurationSeconds: 15 }, false],
    ['held, 1 ms past expiry', { holderIdentity: 'run 1', renewTime: at(-15_001), leaseDurationSeconds: 15 }, true],
    [
      'held, renewed in the future',
      { holderIdentity: 'run 1', renewTime: at(60_000), leaseDurationSeconds: 15 },
      false,
    ],
    ['held, no duration, renewed now', { holderIdentity: 'run 1', renewTime: at(0) }, false],
    ['held, no duration, renewed 1 ms ago', { holderIdentity: 'run 1', renewTime: at(-1) }, true],
    [
      'held, missing renewTime, fresh acquireTime',
      { holderIdentity: 'run 1', acquireTime: at(-5_000), leaseDurationSeconds: 15 },
      false,
    ],
    [
      'held, null renewTime, fresh acquireTime',
      { holderIdentity: 'run 1', renewTime: null, acquireTime: at(-5_000), leaseDurationSeconds: 15 },
      false,
    ],
    [
      'held, missing renewTime, old acquireTime',
      { holderIdentity: 'run 1', acquireTime: at(-20_000), leaseDurationSeconds: 15 },
      true,
    ],
    [
      'held, fresh renewTime wins over old acquireTime',
      { holderIdentity: 'run 1', renewTime: at(-1_000), acquireTime: at(-3_600_000), leaseDurationSeconds: 15 },
      false,
    ],
    ['held, missing renewTime and acquireTime', { holderIdentity: 'run 1', leaseDurationSeconds: 15 }, true],
    ['held, unparsable renewTime', { holderIdentity: 'run 1', renewTime: 'yesterday', leaseDurationSeconds: 15 }, true],
  ])('%s → %s', (_name, spec, free) => {
    expect(leaseFree(spec, NOW)).toBe(free);
  });
});

describe('pruneExclusion', () => {
  const owner = { name: 'apps', namespace: 'flux-system' };
  const ours = { [OWNER_NAME_LABEL]: 'apps', [OWNER_NAMESPACE_LABEL]: 'flux-system' };
  const G = 'kustomize.toolkit.fluxcd.io';
  const notOurs = (who: string) => `its owner labels name ${who}, not flux-system/apps (taken over or relabelled)`;
  type Live = Parameters<typeof pruneExclusion>[0];

  it('owner label keys', () => {
    expect([OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL]).toStrictEqual([`${G}/name`, `${G}/namespace`]);
  });

  it.each<[string, Live, string | undefined]>([
    ['ours', { metadata: { labels: ours } }, undefined],
    [
      'ours, with unrelated labels and annotations',
      { metadata: { labels: { ...ours, app: 'web' }, annotations: { note: 'x' } } },
      undefined,
    ],
    ['no metadata', {}, notOurs('no Kustomization')],
    ['no labels', { metadata: { annotations: { [`${G}/prune`]: 'enabled' } } }, notOurs('no Kustomization')],
    [
      'only the namespace label',
      { metadata: { labels: { [OWNER_NAMESPACE_LABEL]: 'flux-system' } } },
      notOurs('no Kustomization'),
    ],
    ['name label without namespace label', { metadata: { labels: { [OWNER_NAME_LABEL]: 'apps' } } }, notOurs('?/apps')],
    [
      'another Kustomization, same namespace',
      { metadata: { labels: { ...ours, [OWNER_NAME_LABEL]: 'infra' } } },
      notOurs('flux-system/infra'),
    ],
    [
      'same name, another namespace',
      { metadata: { labels: { ...ours, [OWNER_NAMESPACE_LABEL]: 'team-a' } } },
      notOurs('team-a/apps'),
    ],
    ['owner labels as annotations do not count', { metadata: { annotations: ours } }, notOurs('no Kustomization')],
    [
      'not ours and prune: disabled: the owner reason first',
      {
        metadata: {
          labels: { [OWNER_NAME_LABEL]: 'infra', [OWNER_NAMESPACE_LABEL]: 'flux-system' },
          annotations: { [`${G}/prune`]: 'disabled' },
        },
      },
      notOurs('flux-system/infra'),
    ],
    [
      'prune: disabled annotation',
      { metadata: { labels: ours, annotations: { [`${G}/prune`]: 'disabled' } } },
      `it is marked ${G}/prune: disabled`,
    ],
    [
      'prune: Disabled label (case-insensitive)',
      { metadata: { labels: { ...ours, [`${G}/prune`]: 'Disabled' } } },
      `it is marked ${G}/prune: disabled`,
    ],
    ['prune: enabled', { metadata: { labels: ours, annotations: { [`${G}/prune`]: 'enabled' } } }, undefined],
    ['prune: empty', { metadata: { labels: ours, annotations: { [`${G}/prune`]: '' } } }, undefined],
    [
      'reconcile: disabled',
      { metadata: { labels: ours, annotations: { [`${G}/reconcile`]: 'disabled' } } },
      `it is marked ${G}/reconcile: disabled`,
    ],
    [
      'ssa: Ignore annotation',
      { metadata: { labels: ours, annotations: { [`${G}/ssa`]: 'Ignore' } } },
      `it is marked ${G}/ssa: Ignore`,
    ],
    [
      'ssa: ignore label (case-insensitive)',
      { metadata: { labels: { ...ours, [`${G}/ssa`]: 'ignore' } } },
      `it is marked ${G}/ssa: Ignore`,
    ],
    ['ssa: Merge', { metadata: { labels: ours, annotations: { [`${G}/ssa`]: 'Merge' } } }, undefined],
    ['ssa: IfNotPresent', { metadata: { labels: ours, annotations: { [`${G}/ssa`]: 'IfNotPresent' } } }, undefined],
    [
      'prune: disabled and ssa: Ignore: prune reported',
      { metadata: { labels: ours, annotations: { [`${G}/prune`]: 'disabled', [`${G}/ssa`]: 'Ignore' } } },
      `it is marked ${G}/prune: disabled`,
    ],
    [
      'marker under another group is ignored',
      { metadata: { labels: ours, annotations: { 'example.com/prune': 'disabled', prune: 'disabled' } } },
      undefined,
    ],
  ])('%s', (_name, live, want) => {
    expect(pruneExclusion(live, owner)).toBe(want);
  });
});

describe('reading entries in their own format', () => {
  /** What the YAML parser makes of the text, as entries. */
  const parsed = (text: string) => (parse(text) as Entry[]).map(({ id, v }) => ({ id, v }));

  it.each([
    ['namespaced and cluster-scoped', '- id: ns_web_apps_Deployment\n  v: v1\n- id: _ns__Namespace\n  v: v1\n'],
    ['a group with dots', '- id: _admin_rbac.authorization.k8s.io_ClusterRole\n  v: v1\n'],
    ['a beta version', '- id: ns_w_example.com_Widget\n  v: v1beta1\n'],
  ])('reads %s as YAML does', (_, text) => {
    expect(readOwnEntries(text)).toEqual(parsed(text));
  });

  it.each([
    ['a name with a colon', '- id: _system:auth_rbac.authorization.k8s.io_ClusterRole\n  v: v1\n'],
    ['a namespace that starts with a digit', '- id: 1ns_x__ConfigMap\n  v: v1\n'],
    ['a version YAML reads as a boolean', '- id: ns_x__ConfigMap\n  v: true\n'],
    ['a quoted value', '- id: "ns_x__ConfigMap"\n  v: v1\n'],
    ['another layout', '- {id: ns_x__ConfigMap, v: v1}\n'],
    ['no final line break', '- id: ns_x__ConfigMap\n  v: v1'],
    ['a comment', '- id: ns_x__ConfigMap # c\n  v: v1\n'],
  ])('leaves %s to the YAML parser', (_, text) => {
    expect(readOwnEntries(text)).toBeUndefined();
  });

  it('reads what encodeInventory writes, 1,000 entries, as YAML does', () => {
    const entries = Array.from({ length: 1000 }, (_, i) => ({
      id: `${i % 3 ? `ns-${i % 7}` : ''}_obj-${i}_${i % 2 ? 'apps' : ''}_${i % 2 ? 'Deployment' : 'ConfigMap'}`,
      v: 'v1',
    }));
    const text = encodeInventory(
      { entries, pending: [], status: {} as never },
      { compressAbove: 1e9, maxPartBytes: 1e9 },
    ).data['entries.yaml']!;
    expect(readOwnEntries(text)).toEqual(parsed(text));
    expect(readOwnEntries(text)).toHaveLength(1000);
  });
});
