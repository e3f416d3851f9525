// Provenance by difference (issue 47): the canaries that stand in for decrypted values, and the
// comparison of the real build with the canary build (src/sops/canary.ts,
// src/substitute/provenance-diff.ts, src/reconcile/canary-render.ts markDerived).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ageKeyService } from '../../src/sops/age.js';
import { decryptText } from '../../src/sops/decrypt.js';
import type { SopsFormat } from '../../src/sops/types.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { canaryDerived, markDerived, redactBuildError } from '../../src/reconcile/canary-render.js';
import { canaryPlain, canaryText, type PlainValue } from '../../src/sops/canary.js';
import { derivedPart, pairObjects, redactDifference, secretDerived } from '../../src/substitute/provenance-diff.js';
import type { BuildOptions, BuildResult } from '../../src/kustomize/build.js';
import type { DecryptOptions } from '../../src/sops/types.js';
import { isUserError, UserError } from '../../src/util/user-error.js';

const cm = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', ...extra },
  data,
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('canaryText / canaryPlain', () => {
  it.each([
    ['lower, upper, digits', 'abcXYZ019', 'full', 'nopKLM564'],
    ['punctuation varied in full', 'p@ss-w0rd!', 'full', 'c[ff.j5eq$'],
    ['punctuation kept in alnum', 'p@ss-w0rd!', 'alnum', 'c@ff-j5eq!'],
    ['white space, #, =, quotes kept', 'a b#c="d"', 'full', 'n o#p="q"'],
    ['base64 stays base64 in alnum', b64('hunter22'), 'alnum', 'nUIhqTIlZwV='],
  ] as const)('%s', (_what, input, tier, want) => {
    expect(canaryText(input, tier)).toBe(want);
  });

  it('keeps base64 valid in alnum: it decodes to bytes of the same length', () => {
    const text = b64('correct horse battery staple');
    const out = canaryText(text, 'alnum');
    // Go's base64 (kustomize, the API server) accepts non-zero padding bits: the alphabet and length matter.
    expect(out).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
    expect(out).toHaveLength(text.length);
    expect(Buffer.from(out, 'base64')).toHaveLength(Buffer.from(text, 'base64').length);
    expect(out).not.toBe(text);
  });

  it('varies every letter and digit of any text, keeping its length', () => {
    const text = 'The quick brown fox 0123456789 JUMPS';
    const out = canaryText(text, 'alnum');
    expect(out).toHaveLength(text.length);
    text.split('').forEach((c, i) => {
      if (/[A-Za-z0-9]/.test(c)) expect(out[i]).not.toBe(c);
      else expect(out[i]).toBe(c);
    });
  });

  it.each<[string, PlainValue, PlainValue]>([
    ['int', 1234n, 6789n],
    ['negative int', -42n, -97n],
    ['19-digit int stays in int64', 9223372036854775807n, 1778827581309220352n],
    ['float', 2.5, -2.5],
    ['zero float', 0, 1],
    ['bool', true, false],
  ])('%s keeps its type', (_what, value, want) => {
    expect(canaryPlain(value, 'full')).toBe(want);
  });
});

describe('derivedPart', () => {
  it.each([
    ['equal', 'app-env', 'app-env', undefined],
    ['hash suffix: the whole suffix', 'app-env-5fk29g2h8c', 'app-env-t7b2k9m4c8', '5fk29g2h8c'],
    ['hash suffixes sharing a first character', 'app-env-5fk29g2h8c', 'app-env-5ab2k9m4c8', '5fk29g2h8c'],
    ['a slice in the middle of a name', 'leak-jpqv-cm', 'leak-wcdi-cm', 'jpqv'],
    ['a short slice: the whole name', 'leak-jpq', 'leak-wcd', 'leak-jpq'],
    ['a dotted segment', 'a.jpqvw.b', 'a.wcdij.b', 'jpqvw'],
    ['different lengths', 'x-abcdef', 'x-nop', 'abcdef'],
    ['too short even whole', 'jp', 'wc', 'jp'],
  ])('%s', (_what, real, other, want) => {
    expect(derivedPart(real, other)).toBe(want);
  });
});

describe('pairObjects', () => {
  it('pairs by identity, then by order within a kind', () => {
    const real = [cm('same', {}), cm('app-env-aaaa', {}), cm('app-x-bbbb', {})];
    const canary = [cm('app-env-nnnn', {}), cm('same', {}), cm('app-x-oooo', {})];
    expect(pairObjects(real, canary).map((o) => o?.metadata.name)).toEqual(['same', 'app-env-nnnn', 'app-x-oooo']);
  });

  it('leaves an object without a twin unpaired', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } as KubeObject;
    expect(pairObjects([cm('a', {}), secret], [cm('a', {})])).toEqual([cm('a', {}), undefined]);
  });
});

describe('secretDerived', () => {
  const SECRET = 'jpqvwxzjpqvw';
  const CANARY = canaryText(SECRET, 'full');

  it.each<[string, KubeObject[], KubeObject[], string[][], string[]]>([
    ['nothing differs', [cm('a', { k: 'v' })], [cm('a', { k: 'v' })], [[]], []],
    [
      'a replacement into a ConfigMap value',
      [cm('a', { k: SECRET, plain: 'x' })],
      [cm('a', { k: CANARY, plain: 'x' })],
      [['/data/k']],
      [],
    ],
    [
      'a delimiter slice',
      [cm('a', { k: SECRET.slice(4, 7) })],
      [cm('a', { k: CANARY.slice(4, 7) })],
      [['/data/k']],
      [],
    ],
    ['base64 of the value', [cm('a', { k: b64(SECRET) })], [cm('a', { k: b64(CANARY) })], [['/data/k']], []],
    [
      'a label and an annotation',
      [cm('a', {}, { labels: { l: SECRET.slice(0, 5) }, annotations: { n: SECRET } })],
      [cm('a', {}, { labels: { l: CANARY.slice(0, 5) }, annotations: { n: CANARY } })],
      [['/metadata/annotations/n', '/metadata/labels/l']],
      [],
    ],
    [
      'a name hash: the name and every reference to it',
      [
        cm('app-env-5fk29g2h8c', { k: SECRET }),
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: { template: { spec: { volumes: [{ name: 'v', configMap: { name: 'app-env-5fk29g2h8c' } }] } } },
        },
      ],
      [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web' },
          spec: { template: { spec: { volumes: [{ name: 'v', configMap: { name: 'app-env-t7b2k9m4c8' } }] } } },
        },
        cm('app-env-t7b2k9m4c8', { k: CANARY }),
      ],
      [['/data/k', '/metadata/name'], ['/spec/template/spec/volumes/0/configMap/name']],
      ['5fk29g2h8c'],
    ],
    [
      'a CRD spec, nested in a list',
      [{ apiVersion: 'x.io/v1', kind: 'Db', metadata: { name: 'd' }, spec: { users: [{ pw: SECRET }] } }],
      [{ apiVersion: 'x.io/v1', kind: 'Db', metadata: { name: 'd' }, spec: { users: [{ pw: CANARY }] } }],
      [['/spec/users/0/pw']],
      [],
    ],
    [
      'a list whose length depends on the secret: all of it',
      [cm('a', {}, { finalizers: ['x', 'y'] })],
      [cm('a', {}, { finalizers: ['x'] })],
      [['/metadata/finalizers']],
      [],
    ],
    [
      'keys read from a decrypted env file',
      [cm('a', { DBPASSWORD: 'x', keep: 'y' })],
      [cm('a', { QOCNFFJBEQ: 'x', keep: 'y' })],
      [['/data/DBPASSWORD', '/data/keep']],
      ['DBPASSWORD'],
    ],
    [
      'a ConfigMap holding the decrypted file',
      [cm('a', { 'secret.enc.env': `PASSWORD=${SECRET}\n` })],
      [cm('a', { 'secret.enc.env': `PASSWORD=${CANARY}\n` })],
      [['/data/secret.enc.env']],
      [],
    ],
    [
      'an object with no twin: all of it',
      [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'only-here' }, data: { k: 'eA==' } }],
      [],
      [['/apiVersion', '/data/k', '/kind', '/metadata/name']],
      ['only-here'],
    ],
  ])('%s', (_what, real, canary, paths, tokens) => {
    const got = secretDerived(real, canary);
    expect(got.paths).toEqual(paths);
    expect(got.tokens).toEqual(tokens);
    expect(got.unhidable).toEqual([]);
  });

  it('reports a derived name too short to hide, without its text', () => {
    const got = secretDerived([cm('jpq', {})], [cm('wcd', {})]);
    expect(got.unhidable).toEqual([{ index: 0, field: 'metadata.name' }]);
    expect(got.tokens).toEqual([]);
  });
});

describe('markDerived', () => {
  const built = (objects: KubeObject[]): BuildResult => ({
    objects,
    origins: new Map([['/ConfigMap/ns/jpq', 'apps/x/cm.yaml']]),
    generated: false,
    missingComponents: [],
  });

  it.each([
    ['an untrusted tree hides derived names', true, ['5fk29g2h8c']],
    ['a trusted tree shows them, as kustomize-controller does', false, []],
  ])('%s', (_what, untrusted, secrets) => {
    const derived = secretDerived([cm('app-5fk29g2h8c', { k: 'a' })], [cm('app-t7b2k9m4c8', { k: 'n' })]);
    const paths: [number, string[]][] = [];
    const seen: string[] = [];
    markDerived(
      derived,
      built([]),
      untrusted,
      (i, p) => paths.push([i, p]),
      (v) => seen.push(v),
    );
    expect(paths).toEqual([[0, ['/data/k', '/metadata/name']]]);
    expect(seen).toEqual(secrets);
  });

  it('refuses, in an untrusted tree, a derived name too short to hide, naming the file but not the name', () => {
    const obj = cm('jpq', {});
    const derived = secretDerived([obj], [cm('wcd', {})]);
    expect(() => {
      markDerived(
        derived,
        built([obj]),
        false,
        () => undefined,
        () => undefined,
      );
    }).not.toThrow();
    let message = '';
    try {
      markDerived(
        derived,
        built([obj]),
        true,
        () => undefined,
        () => undefined,
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(
      /ConfigMap number 1 of the build \(apps\/x\/cm\.yaml\): metadata\.name is made from a decrypted value/,
    );
    expect(message).not.toContain('jpq');
  });
});

describe('redactDifference', () => {
  it.each([
    [
      'equal messages',
      'kustomize failed: no such file',
      'kustomize failed: no such file',
      'kustomize failed: no such file',
    ],
    [
      'a quoted value',
      'options.index 3 is out of bounds for value jpq-vwx',
      'options.index 3 is out of bounds for value wcd.ijk',
      'options.index 3 is out of bounds for value ***',
    ],
    [
      'a slice inside a word, and text after it',
      'invalid label "x-jpq": must match',
      'invalid label "x-wcd": must match',
      'invalid label *** must match',
    ],
    [
      'two places: all between them',
      'value jpqv in a, value jpqv in b',
      'value wcdi in a, value wcdi in b',
      'value *** in b',
    ],
    ['different lengths', 'at jpqvw end', 'at wc end', 'at *** end'],
  ])('%s', (_what, real, other, want) => {
    expect(redactDifference(real, other)).toBe(want);
  });
});

describe('canaryDerived and redactBuildError (the builds injected)', () => {
  const options = { root: '/r', path: '.', kustomizeBin: 'kustomize' } as BuildOptions;
  const decryption: DecryptOptions = { keyServices: [], verifyMac: true, onSecret: () => undefined };
  const result = (objects: KubeObject[]): BuildResult => ({
    objects,
    origins: new Map(),
    generated: false,
    missingComponents: [],
  });
  /** A build that answers each call in turn: a result, or an error to throw. */
  const builds = (...answers: (BuildResult | Error)[]) => {
    const seen: BuildOptions[] = [];
    const build = (o: BuildOptions) => {
      seen.push(o);
      const a = answers[seen.length - 1];
      return a === undefined || a instanceof Error ? Promise.reject(a ?? new Error('no answer')) : Promise.resolve(a);
    };
    return { build, seen };
  };

  it('builds again with a beforeBuild of its own, and compares', async () => {
    const { build, seen } = builds(result([cm('a', { k: 'wcdi' })]));
    const got = await canaryDerived(options, decryption, result([cm('a', { k: 'jpqv' })]), ['s.env'], build);
    expect(got.paths).toEqual([['/data/k']]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.beforeBuild).toBeTypeOf('function');
  });

  it('tries the canary that keeps punctuation when the first does not build', async () => {
    const { build, seen } = builds(new Error('index out of bounds'), result([cm('a', { k: 'x' })]));
    const got = await canaryDerived(options, decryption, result([cm('a', { k: 'x' })]), ['s.env'], build);
    expect(got.paths).toEqual([[]]);
    expect(seen).toHaveLength(2);
  });

  it('fails the render, naming the files, when no canary builds', async () => {
    const { build } = builds(new Error('a'), new Error('b'));
    await expect(canaryDerived(options, decryption, result([]), ['apps/s.env'], build)).rejects.toThrow(
      /replaced by stand-ins.*apps\/s\.env|apps\/s\.env.*stand-ins/,
    );
  });

  it.each([
    [
      'the canary build fails too: the difference hidden',
      [new UserError('bounds for value wcd.ijk')],
      'bounds for value ***',
    ],
    ['no canary build fails: nothing of the message', [result([]), result([])], "kustomize's message is not shown"],
  ])('%s', async (_what, answers, want) => {
    const { build } = builds(...answers);
    const err = await redactBuildError(
      new UserError('bounds for value jpq-vwx'),
      options,
      decryption,
      ['apps/s.env'],
      build,
    );
    expect(err.message).toContain(want);
    expect(err.message).not.toContain('jpq');
    expect(isUserError(err)).toBe(true);
    expect(err.cause).toBeUndefined();
  });
});

describe('decryption with canaries (the real sops encrypts)', () => {
  let tk: SopsToolkit;
  let key: AgeKey;
  beforeAll(() => {
    tk = createSopsToolkit();
    key = tk.ageKey();
  });
  afterAll(() => {
    tk.cleanup();
  });

  const SECRET = 'hunter2-Pass';
  // A whole file (binary) has its punctuation varied too by the first canary; the second keeps it.
  it.each<[SopsFormat, string, string]>([
    ['dotenv', `PASSWORD=${SECRET}\nUSER=app\n`, 'PASSWORD=uhagre7.Cnff\nUSER=ncc\n'],
    [
      'yaml',
      `password: ${SECRET}\nport: 5432\nlist: [a1, true]\n`,
      'password: uhagre7.Cnff\nport: 987\nlist:\n  - n6\n  - false\n',
    ],
    ['json', `{"password": "${SECRET}", "n": 7}`, '{\n\t"password": "uhagre7.Cnff",\n\t"n": 2\n}\n'],
    ['ini', `[db]\npassword = ${SECRET}\n`, '[db]\npassword = uhagre7.Cnff\n'],
    ['binary', `user: app\npassword: ${SECRET}\n`, 'hfre; ncc\ncnffjbeq; uhagre7.Cnff\n'],
  ])('%s: every decrypted value replaced after the MAC is checked, the layout kept', async (format, plain, want) => {
    const text = tk.encrypt(plain, format, { age: [key.recipient] });
    const seen: string[] = [];
    const out = await decryptText(text, format, {
      keyServices: [ageKeyService(key.identity)],
      verifyMac: true,
      onSecret: (v) => seen.push(v),
      canary: (v) => canaryPlain(v, 'full'),
    });
    expect(out.replaceAll(' ', '')).toBe(want.replaceAll(' ', ''));
    expect(out).not.toContain(SECRET);
    // The real values were still seen (to be masked); the canaries never are.
    expect(seen.join('\n')).not.toContain('uhagre7');
  });
});
