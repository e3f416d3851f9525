/**
 * SOPS files encrypted with `encrypted_comment_regex` / `unencrypted_comment_regex` (issue 51;
 * kustomize-controller v1.10 "Decrypt resources encrypted with SOPS comment regexes"): which values
 * such a file encrypts is decided by its comments, and the build drops comments. After the build a
 * value is decrypted when it is in the SOPS envelope; the MAC is checked on the source file, whose
 * comments are all there. Fixtures are made at test time by the real `sops` and `kustomize`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { ageKeyService } from '../../src/sops/age.js';
import { decryptText, decryptTree } from '../../src/sops/decrypt.js';
import { parseMetadata } from '../../src/sops/metadata.js';
import { decryptResources, signedText } from '../../src/sops/resources.js';
import { SopsError, type SopsFormat } from '../../src/sops/types.js';
import { byEnvelope, hasCommentRule } from '../../src/sops/walk.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { heavyFile } from '../helpers/heavy.js';
import { TOOLS } from '../helpers/paths.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';

heavyFile();

/** A Secret whose comments choose what is encrypted: a value, a list element, a whole subtree (typed values). */
const SECRET_PLAIN = `apiVersion: v1
kind: Secret
metadata:
    name: db
    namespace: prod
type: Opaque
stringData:
    user: app
    # sops:enc
    password: correct-horse
    hosts:
        - db-1
        # sops:enc
        - db-2
    # sops:enc
    tls:
        key: k3y-material
        port: 8443
        ratio: 0.5
        strict: true
`;

/** A ConfigMap (not a Secret) whose comments keep values in clear, the first one above the document's first key. */
const CONFIGMAP_PLAIN = `# sops:plain
apiVersion: v1
# sops:plain
kind: ConfigMap
# sops:plain
metadata:
    name: settings
    namespace: prod
data:
    # sops:plain
    mode: fast
    token: tok-123
    # a note that sops encrypts as a list element
    retries: "3"
`;

/** A custom kind with a list: sops writes the comment it encrypts inside a list as a list element. */
const WIDGET_PLAIN = `# sops:plain
apiVersion: example.com/v1
# sops:plain
kind: Widget
# sops:plain
metadata:
    name: w
spec:
    hosts:
        - a.example.invalid
        # a note inside the list
        - b.example.invalid
    # sops:plain
    replicas: 2
`;

const ENC_RULE = 'encrypted_comment_regex: sops:enc';
const PLAIN_RULE = 'unencrypted_comment_regex: sops:plain';

let tk: SopsToolkit;
let age: AgeKey;
let dir: string;
beforeAll(() => {
  tk = createSopsToolkit();
  age = tk.ageKey();
  dir = mkdtempSync(join(tmpdir(), 'kr-sops-comments-'));
});
afterAll(() => {
  tk.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const config = (rule: string) => `creation_rules:\n  - age: ${age.recipient}\n    ${rule}\n`;
const encrypt = (plain: string, rule: string, format: SopsFormat = 'yaml') =>
  tk.encrypt(plain, format, { config: config(rule) });
const opts = (verifyMac: boolean, secrets?: string[]) => ({
  keyServices: [ageKeyService(age.identity)],
  verifyMac,
  ...(secrets ? { onSecret: (v: string) => secrets.push(v) } : {}),
});

async function rejection(promise: Promise<unknown>): Promise<SopsError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(SopsError);
    return err as SopsError;
  }
  throw new Error('expected a SopsError');
}

describe('byEnvelope and hasCommentRule (pure)', () => {
  it.each<{ value: string | number | boolean | bigint; want: boolean }>([
    { value: 'ENC[AES256_GCM,data:eA==,iv:x,tag:y,type:str]', want: true },
    { value: 'ENC[AES256_GCM,', want: true },
    { value: 'ENC[x]', want: false },
    { value: 'plain', want: false },
    { value: ' ENC[AES256_GCM,data:eA==]', want: false },
    { value: 42n, want: false },
    { value: 1.5, want: false },
    { value: true, want: false },
  ])('$value → $want', ({ value, want }) => {
    expect(byEnvelope(value)).toBe(want);
  });

  const meta = (rule: Record<string, string>) => parseMetadata({ age: [{ recipient: 'r', enc: 'e' }], ...rule });
  it.each<{ rule: Record<string, string>; want: boolean }>([
    { rule: { encrypted_comment_regex: 'sops:enc' }, want: true },
    { rule: { unencrypted_comment_regex: 'sops:plain' }, want: true },
    { rule: { encrypted_regex: '^data$' }, want: false },
    { rule: { unencrypted_suffix: '_unencrypted' }, want: false },
    { rule: {}, want: false },
  ])('$rule → comment rule $want', ({ rule, want }) => {
    expect(hasCommentRule(meta(rule))).toBe(want);
  });
});

describe('signedText: the part of a source file sops signed (pure)', () => {
  const doc = (mac: string, body = 'a: 1') => `${body}\nsops:\n    mac: ${mac}\n`;
  it.each<{ why: string; text: string; mac: string; want: string | undefined }>([
    {
      why: 'the first document keeps the comments above its first key',
      text: `# sops:plain\n${doc('M1')}---\n${doc('M2', 'b: 2')}`,
      mac: 'M1',
      want: `# sops:plain\n${doc('M1')}`,
    },
    {
      why: 'a later document starts at its marker, with its own comments',
      text: `${doc('M1')}---\n# sops:plain\n${doc('M2', 'b: 2')}`,
      mac: 'M2',
      want: `---\n# sops:plain\n${doc('M2', 'b: 2')}`,
    },
    {
      why: 'a multi-document sops file is signed as a whole',
      text: `${doc('M', 'a: 1')}---\n${doc('M', 'b: 2')}`,
      mac: 'M',
      want: `${doc('M', 'a: 1')}---\n${doc('M', 'b: 2')}`,
    },
    { why: 'no document carries the MAC', text: doc('M1'), mac: 'other', want: undefined },
    { why: 'no sops metadata at all', text: 'a: 1\n', mac: 'M', want: undefined },
  ])('$why', ({ text, mac, want }) => {
    expect(signedText(text, mac)).toBe(want);
  });
});

describe('comment rules: the source file (comments present) decrypts by its rule, MAC checked', () => {
  it.each<{ rule: string; format: SopsFormat; plain: string; inClear: string[]; hidden: string[] }>([
    {
      rule: ENC_RULE,
      format: 'yaml',
      plain: SECRET_PLAIN,
      inClear: ['user: app', '- db-1', '# sops:enc'],
      hidden: ['correct-horse', 'db-2', 'k3y-material', '8443'],
    },
    {
      rule: PLAIN_RULE,
      format: 'yaml',
      plain: CONFIGMAP_PLAIN,
      inClear: ['kind: ConfigMap', 'name: settings', 'mode: fast'],
      hidden: ['tok-123', 'a note that sops encrypts'],
    },
    {
      rule: ENC_RULE,
      format: 'dotenv',
      plain: 'MODE=fast\n# sops:enc\nTOKEN=tok-456\nRETRIES=3\n',
      inClear: ['MODE=fast', 'RETRIES=3'],
      hidden: ['tok-456'],
    },
    {
      rule: PLAIN_RULE,
      format: 'dotenv',
      plain: '# sops:plain\nMODE=fast\nTOKEN=tok-456\n',
      inClear: ['MODE=fast'],
      hidden: ['tok-456'],
    },
  ])('$format, $rule', async ({ rule, format, plain, inClear, hidden }) => {
    const encrypted = encrypt(plain, rule, format);
    for (const text of inClear) expect(encrypted).toContain(text);
    for (const text of hidden) expect(encrypted).not.toContain(text);
    expect(await decryptText(encrypted, format, opts(true))).toBe(tk.sopsDecrypt(encrypted, format, age.identity));
    expect(await decryptText(encrypted, format, opts(true))).toBe(plain);
  });
});

/** What the build leaves of an encrypted file: its objects parsed, every comment gone, then kustomize's changes. */
const built = (encrypted: string, change: (o: KubeObject) => void = () => {}): KubeObject => {
  const obj = parseYaml(encrypted) as KubeObject;
  change(obj);
  return obj;
};
const relabel = (o: KubeObject) => {
  o.metadata.namespace = 'staging';
  o.metadata.labels = { team: 'x' };
};

describe('comment rules after the build: the comments are gone, the envelope decides', () => {
  const secretSource = parseYaml(SECRET_PLAIN) as { stringData: Record<string, unknown> };
  const secretWant = {
    ...secretSource,
    metadata: { name: 'db', namespace: 'staging', labels: { team: 'x' } },
  };
  const configMapWant = {
    ...(parseYaml(CONFIGMAP_PLAIN) as object),
    metadata: { name: 'settings', namespace: 'staging', labels: { team: 'x' } },
  };
  it.each<{
    why: string;
    rule: string;
    plain: string;
    change: (o: KubeObject) => void;
    want: unknown;
    encryptedHas?: RegExp;
  }>([
    {
      why: 'Secret, encrypted_comment_regex: the values its comments chose, typed',
      rule: ENC_RULE,
      plain: SECRET_PLAIN,
      change: relabel,
      want: secretWant,
    },
    {
      why: 'ConfigMap, unencrypted_comment_regex: the values left in clear stay, the list comment is dropped',
      rule: PLAIN_RULE,
      plain: CONFIGMAP_PLAIN,
      change: relabel,
      want: configMapWant,
    },
    {
      why: 'a custom kind, unencrypted_comment_regex: the comment sops encrypted as a list element is dropped',
      rule: PLAIN_RULE,
      plain: WIDGET_PLAIN,
      change: () => {},
      want: parseYaml(WIDGET_PLAIN) as unknown,
      encryptedHas: /^ {8}- ENC\[AES256_GCM,.*type:comment\]$/m,
    },
    {
      why: 'a patch that replaced an encrypted value with a plain one: kept as patched',
      rule: ENC_RULE,
      plain: SECRET_PLAIN,
      change: (o) => {
        relabel(o);
        (o['stringData'] as Record<string, unknown>)['password'] = 'patched';
      },
      want: {
        ...secretWant,
        stringData: { ...secretSource.stringData, password: 'patched' },
      },
    },
  ])('$why', async ({ rule, plain, change, want, encryptedHas }) => {
    const encrypted = encrypt(plain, rule);
    if (encryptedHas) expect(encrypted).toMatch(encryptedHas);
    const secrets: string[] = [];
    const out = await decryptTree(built(encrypted, change), opts(false, secrets));
    expect(out).toStrictEqual(want);
    expect(JSON.stringify(out)).not.toContain('ENC[');
    for (const v of ['correct-horse', 'tok-123'].filter((s) => JSON.stringify(want).includes(s)))
      expect(secrets).toContain(v);
    expect(secrets).not.toContain('app');
  });

  it('the MAC cannot be checked on the built object: an error that says where it is checked', async () => {
    const err = await rejection(decryptTree(built(encrypt(SECRET_PLAIN, ENC_RULE)), opts(true)));
    expect(err.message).toContain('encrypted_comment_regex');
    expect(err.message).toContain('source file');
  });

  it('an enveloped value moved to another key does not open (its path is authenticated)', async () => {
    const obj = built(encrypt(SECRET_PLAIN, ENC_RULE));
    const data = obj['stringData'] as Record<string, unknown>;
    data['user'] = data['password'];
    const err = await rejection(decryptTree(obj, opts(false)));
    expect(err.message).toContain("'stringData.user'");
    expect(err.message).not.toContain('correct-horse');
  });

  it('an encrypted_regex file is still judged by its rule: a plain value where it encrypts is an error', async () => {
    const encrypted = tk.encrypt(SECRET_PLAIN, 'yaml', {
      age: [age.recipient],
      flags: ['--encrypted-regex', '^stringData$'],
    });
    const obj = built(encrypted, (o) => {
      (o['stringData'] as Record<string, unknown>)['user'] = 'patched';
    });
    const err = await rejection(decryptTree(obj, opts(false)));
    expect(err.message).toContain("'stringData.user' should be encrypted");
  });
});

describe('comment rules through kustomize: decrypted, the MAC checked on the source file', () => {
  function kustomizeBuild(files: Record<string, string>): { root: string; objects: KubeObject[] } {
    const root = mkdtempSync(join(dir, 'tree-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
    const out = execFileSync(join(TOOLS, 'kustomize'), ['build', root], { encoding: 'utf8' });
    return { root, objects: parseAllDocuments(out).map((d) => d.toJS() as KubeObject) };
  }
  const run = (objects: KubeObject[], source: (o: KubeObject) => string | undefined, notes: string[] = []) =>
    decryptResources(objects, {
      ...opts(true),
      sourceOf: (o) => Promise.resolve(source(o)),
      note: (l) => notes.push(l),
    });

  it.each<{ why: string; files: () => Record<string, string>; tamper?: (text: string) => string; mac: boolean }>([
    {
      why: 'a Secret and a ConfigMap, one file each, in an overlay with a namespace and labels',
      files: () => ({
        'secret.yaml': encrypt(SECRET_PLAIN, ENC_RULE),
        'cm.yaml': encrypt(CONFIGMAP_PLAIN, PLAIN_RULE),
      }),
      mac: true,
    },
    {
      why: 'one multi-document sops file holding both',
      files: () => ({ 'both.yaml': encrypt(`${SECRET_PLAIN}---\n${CONFIGMAP_PLAIN}`, ENC_RULE) }),
      mac: true,
    },
    {
      why: 'a value in clear changed in the file: MAC mismatch',
      files: () => ({ 'secret.yaml': encrypt(SECRET_PLAIN, ENC_RULE) }),
      tamper: (t) => t.replace('user: app', 'user: root'),
      mac: false,
    },
    {
      why: 'the comment above the first key removed: a value it kept in clear now fails its rule',
      files: () => ({ 'cm.yaml': encrypt(CONFIGMAP_PLAIN, PLAIN_RULE) }),
      tamper: (t) => t.replace(/^# sops:plain\n/, ''),
      mac: false,
    },
  ])('$why', async ({ files, tamper, mac }) => {
    const sources = Object.fromEntries(Object.entries(files()).map(([n, t]) => [n, tamper ? tamper(t) : t]));
    const names = Object.keys(sources);
    const { objects } = kustomizeBuild({
      ...sources,
      'kustomization.yaml': `namespace: staging\nlabels:\n  - pairs: {team: x}\nresources: [${names.join(', ')}]\n`,
    });
    const sourceOf = (o: KubeObject) =>
      names.map((n) => sources[n]!).find((t) => t.includes(`name: ${o.metadata.name}`));
    if (!mac) {
      await expect(run(objects, sourceOf)).rejects.toThrow(/SOPS decryption failed/);
      return;
    }
    const notes: string[] = [];
    const out = await run(objects, sourceOf, notes);
    expect(notes).toEqual([]);
    const byKind = Object.fromEntries(out.map((o) => [o.kind, o]));
    if (byKind['Secret']) {
      expect(byKind['Secret']['stringData']).toStrictEqual((parseYaml(SECRET_PLAIN) as KubeObject)['stringData']);
      expect(byKind['Secret'].metadata).toStrictEqual({ name: 'db', namespace: 'staging', labels: { team: 'x' } });
    }
    if (byKind['ConfigMap']) {
      expect(byKind['ConfigMap']['data']).toStrictEqual({ mode: 'fast', token: 'tok-123', retries: '3' });
    }
    for (const o of out) expect(o['sops']).toBeUndefined();
  });
});
