/**
 * Native SOPS decryption against files encrypted by the real, pinned `sops` with keys made by
 * `age-keygen`, `gpg` and `ssh-keygen` at test time (see `__tests__/helpers/sops-fixtures.ts`).
 * The plaintexts are written in the layout `sops decrypt` prints, so that the decrypted text can
 * be compared byte for byte. The values are test data; no assertion prints real secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { ageKeyService } from '../../src/sops/age.js';
import { decryptText, decryptTree, formatForPath, isSopsEncrypted } from '../../src/sops/decrypt.js';
import { pgpKeyService } from '../../src/sops/pgp.js';
import { SopsError, type KeyService, type SopsFormat } from '../../src/sops/types.js';
import {
  createSopsToolkit,
  type AgeKey,
  type PgpKey,
  type SopsToolkit,
  type SshKey,
} from '../helpers/sops-fixtures.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const YAML_PLAIN = `# a comment at the top
apiVersion: v1
kind: Secret
metadata:
    name: app-secrets # the name
    namespace: default
stringData:
    # database credentials
    password: s3cr3t-π
    token: "12345"
    looks_like_bool: "true"
    empty: ""
    nothing: null
    port: 5432
    negative: -17
    ratio: 0.25
    big: 9007199254740993
    enabled: true
    disabled: false
    multiline: |
        first line
        second line
    nested:
        list:
            - one
            - 2
            - 3.5
            - true
            - deep: value
              other: 1
        unicode: 日本語 ✓ émoji 🚀
# a comment at the end
`;

const JSON_PLAIN = `{
\t"apiVersion": "v1",
\t"kind": "Secret",
\t"data": {
\t\t"int": 42,
\t\t"negative": -7,
\t\t"int64max": 9223372036854775807,
\t\t"float": 1.5,
\t\t"tiny": 1e-7,
\t\t"huge": 1e+21,
\t\t"bool": false,
\t\t"null": null,
\t\t"empty": "",
\t\t"html": "\\u003ca href=\\"x\\"\\u003e\\u0026amp;\\u003c/a\\u003e",
\t\t"multi": "line1\\nline2\\ttab",
\t\t"unicode": "日本語 ✓ 🚀",
\t\t"list": [
\t\t\t1,
\t\t\t"two",
\t\t\t[],
\t\t\t{}
\t\t]
\t}
}
`;

const DOTENV_PLAIN = `# database
DB_USER=admin
DB_PASSWORD=p@ss=word#1
MULTI=line1\\nline2
EMPTY=
UNICODE=日本語 ✓
`;

const INI_PLAIN = `[database]
; the primary
user     = admin
password = "  spaced  "
comment  = \`a;b#c\`

[empty]

[other]
multi = """line1
line2"""
`;

const BINARY_PLAIN = 'line 1\nline 2 — ünïcödé\n\ttab, "quotes" and a trailing newline\n';

const SECRET_YAML = `apiVersion: v1
kind: Secret
metadata:
    name: db
    namespace: prod
type: Opaque
stringData:
    user: admin
    password: correct-horse
    hosts:
        - db-1
        - db-2
`;

const REGEX = ['--encrypted-regex', '^(data|stringData)$'];
/** A `.sops.yaml` with one creation rule (for settings that have no command-line flag). */
const ruleConfig = (recipient: string, settings: string[]) =>
  `creation_rules:\n  - age: ${recipient}\n${settings.map((l) => `    ${l}\n`).join('')}`;
const MAC_ONLY = ['encrypted_regex: ^(data|stringData)$', 'mac_only_encrypted: true'];
const macOnlyConfig = (recipient: string) => ruleConfig(recipient, MAC_ONLY);
const COMMENTED = `plain: value
# sops:enc
secret: hidden
nested:
    a: 1
    # sops:enc
    b: 2
list:
    - x
    # sops:enc
    - why-not
`;

let tk: SopsToolkit;
let ageA: AgeKey;
let ageB: AgeKey;
let ageWrong: AgeKey;
let agePq: AgeKey;
let pgp: PgpKey;
let pgpLocked: PgpKey;
let sshEd25519: SshKey;
let sshRsa: SshKey;
let sshRsaPem: SshKey;

beforeAll(() => {
  tk = createSopsToolkit();
  ageA = tk.ageKey();
  ageB = tk.ageKey();
  ageWrong = tk.ageKey();
  agePq = tk.ageKey({ postQuantum: true });
  pgp = tk.pgpKey();
  pgpLocked = tk.pgpKey({ passphrase: 'a passphrase' });
  sshEd25519 = tk.sshKey('ed25519');
  sshRsa = tk.sshKey('rsa');
  sshRsaPem = tk.sshKey('rsa', { pem: true });
});

afterAll(() => {
  tk.cleanup();
});

const withAge = (...keys: AgeKey[]): KeyService => ageKeyService(keys.map((k) => k.identity).join('\n'));
const opts = (services: KeyService[], verifyMac = true, secrets?: string[]) => ({
  keyServices: services,
  verifyMac,
  onSecret: secrets ? (v: string) => secrets.push(v) : undefined,
});
const parsed = (text: string): unknown =>
  parseAllDocuments(text, { intAsBigInt: true }).map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
/** Order-sensitive comparison of parsed YAML (big integers as strings). */
const canonical = (text: string): string =>
  JSON.stringify(parsed(text), (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

async function rejection(promise: Promise<unknown>): Promise<SopsError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(SopsError);
    return err as SopsError;
  }
  throw new Error('expected a SopsError');
}

describe('decryptText: every format, age', () => {
  it.each<{ format: SopsFormat; plain: string }>([
    { format: 'yaml', plain: YAML_PLAIN },
    { format: 'json', plain: JSON_PLAIN },
    { format: 'dotenv', plain: DOTENV_PLAIN },
    { format: 'ini', plain: INI_PLAIN },
    { format: 'binary', plain: BINARY_PLAIN },
  ])('$format gives back exactly the plaintext', async ({ format, plain }) => {
    const encrypted = tk.encrypt(plain, format, { age: [ageA.recipient] });
    expect(isSopsEncrypted(encrypted, format)).toBe(true);
    expect(isSopsEncrypted(plain, format)).toBe(false);
    const secrets: string[] = [];
    const out = await decryptText(encrypted, format, opts([withAge(ageA)], true, secrets));
    expect(out).toBe(plain);
    if (format === 'yaml') {
      expect(canonical(out)).toBe(canonical(plain));
    } else {
      // what `sops decrypt` prints, byte for byte
      expect(out).toBe(tk.sopsDecrypt(encrypted, format, ageA.identity));
    }
    // the data key (base64 of 32 bytes) and the decrypted strings are reported for masking
    expect(secrets.some((s) => /^[A-Za-z0-9+/]{43}=$/.test(s))).toBe(true);
    expect(secrets.every((s) => s.length > 0)).toBe(true);
  });
});

describe('decryptText: OpenPGP', () => {
  it.each<{ format: SopsFormat; plain: string }>([
    { format: 'yaml', plain: YAML_PLAIN },
    { format: 'json', plain: JSON_PLAIN },
  ])('$format encrypted to a PGP key', async ({ format, plain }) => {
    const encrypted = tk.encrypt(plain, format, { pgp: [pgp.fingerprint] });
    expect(encrypted).toContain(pgp.fingerprint);
    expect(await decryptText(encrypted, format, opts([pgpKeyService(pgp.armoredPrivate)]))).toBe(plain);
  });

  it('a passphrase-protected key is an error that says so', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { pgp: [pgpLocked.fingerprint] });
    const err = await rejection(decryptText(encrypted, 'yaml', opts([pgpKeyService(pgpLocked.armoredPrivate)])));
    expect(err.message).toContain(`pgp ${pgpLocked.fingerprint}`);
    expect(err.message).toContain('passphrase');
  });

  it('several armored keys may be concatenated; a key that is not the recipient is a miss', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { pgp: [pgp.fingerprint] });
    const both = pgpKeyService(pgpLocked.armoredPrivate + '\n' + pgp.armoredPrivate);
    expect(await decryptText(encrypted, 'yaml', opts([both]))).toBe(SECRET_YAML);
    const other = await rejection(decryptText(encrypted, 'yaml', opts([pgpKeyService(pgpLocked.armoredPrivate)])));
    expect(other.message).toContain(`pgp ${pgp.fingerprint}: no matching key among 1 OpenPGP private key`);
  });

  it('age and PGP master keys in one group: any one opens the file', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [ageWrong.recipient], pgp: [pgp.fingerprint] });
    const services = [withAge(ageA), pgpKeyService(pgp.armoredPrivate)];
    expect(await decryptText(encrypted, 'yaml', opts(services))).toBe(SECRET_YAML);
  });
});

describe('decryptText: age identity kinds', () => {
  it.each<{ kind: string; recipient: () => string; identity: () => string }>([
    { kind: 'X25519', recipient: () => ageA.recipient, identity: () => ageA.identity },
    { kind: 'post-quantum hybrid (age1pq1)', recipient: () => agePq.recipient, identity: () => agePq.identity },
    { kind: 'SSH ed25519', recipient: () => sshEd25519.recipient, identity: () => sshEd25519.privateKey },
    { kind: 'SSH RSA', recipient: () => sshRsa.recipient, identity: () => sshRsa.privateKey },
    { kind: 'SSH RSA, PKCS#1 PEM', recipient: () => sshRsaPem.recipient, identity: () => sshRsaPem.privateKey },
  ])('$kind', async ({ recipient, identity }) => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [recipient()] });
    // among other identities, concatenated as several identity files
    const service = ageKeyService([ageWrong.identity, identity(), ageB.identity].join('\n'));
    expect(await decryptText(encrypted, 'yaml', opts([service]))).toBe(SECRET_YAML);
  });

  it('a wrong age key is an error naming the recipient', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [ageA.recipient] });
    const one = await rejection(decryptText(encrypted, 'yaml', opts([withAge(ageWrong)])));
    expect(one.message).toContain('no master key could be opened');
    expect(one.message).toContain(`age ${ageA.recipient}: no matching identity among 1 age identity`);
    const two = await rejection(decryptText(encrypted, 'yaml', opts([withAge(ageWrong, ageB)])));
    expect(two.message).toContain(`age ${ageA.recipient}: no matching identity among 2 age identities`);
    const none = await rejection(decryptText(encrypted, 'yaml', opts([])));
    expect(none.message).toContain(`age ${ageA.recipient}: no key service was configured`);
    const otherKind = await rejection(decryptText(encrypted, 'yaml', opts([pgpKeyService(pgp.armoredPrivate)])));
    expect(otherKind.message).toContain('no configured key service opens age keys');
  });

  it.each([
    { why: 'a line that is not an identity', text: 'not-a-key\n', want: 'line 1 is not an age identity' },
    { why: 'a corrupt identity', text: '# c\nAGE-SECRET-KEY-1QQQ\n', want: 'line 2 is not a valid age identity' },
    { why: 'a plugin identity', text: 'AGE-PLUGIN-YUBIKEY-1XYZ\n', want: 'plugins are not supported' },
  ])('identity text with $why is refused without echoing it', ({ text, want }) => {
    expect(() => ageKeyService(text)).toThrow(want);
    try {
      ageKeyService(text);
    } catch (err) {
      expect((err as Error).message).not.toContain(text.trim().split('\n').pop());
    }
  });
});

describe('decryptText: Shamir key groups', () => {
  const config = () => `creation_rules:
  - shamir_threshold: 2
    key_groups:
      - age:
          - ${ageA.recipient}
      - pgp:
          - ${pgp.fingerprint}
      - age:
          - ${ageB.recipient}
`;
  let encrypted = '';
  beforeAll(() => {
    encrypted = tk.encrypt(SECRET_YAML, 'yaml', {
      config: config(),
      flags: ['--shamir-secret-sharing-threshold', '2'],
    });
  });

  it('the file has three key groups and threshold 2', () => {
    const meta = (parseYaml(encrypted) as { sops: { key_groups: unknown[]; shamir_threshold: number } }).sops;
    expect(meta.key_groups).toHaveLength(3);
    expect(meta.shamir_threshold).toBe(2);
  });

  it.each<{ groups: string; services: () => KeyService[] }>([
    { groups: '1 and 2', services: () => [withAge(ageA), pgpKeyService(pgp.armoredPrivate)] },
    { groups: '1 and 3', services: () => [withAge(ageA, ageB)] },
    { groups: '2 and 3', services: () => [pgpKeyService(pgp.armoredPrivate), withAge(ageB)] },
    { groups: 'all three', services: () => [withAge(ageA, ageB), pgpKeyService(pgp.armoredPrivate)] },
  ])('groups $groups combine to the data key', async ({ services }) => {
    expect(await decryptText(encrypted, 'yaml', opts(services()))).toBe(SECRET_YAML);
  });

  it.each<{ format: SopsFormat; plain: string }>([
    { format: 'json', plain: JSON_PLAIN },
    { format: 'dotenv', plain: DOTENV_PLAIN },
    { format: 'ini', plain: INI_PLAIN },
    { format: 'binary', plain: BINARY_PLAIN },
  ])('$format: key groups in flattened or JSON metadata', async ({ format, plain }) => {
    const enc = tk.encrypt(plain, format, { config: config(), flags: ['--shamir-secret-sharing-threshold', '2'] });
    expect(await decryptText(enc, format, opts([pgpKeyService(pgp.armoredPrivate), withAge(ageB)]))).toBe(plain);
    const err = await rejection(decryptText(enc, format, opts([withAge(ageB)])));
    expect(err.message).toContain(`age ${ageA.recipient}: no matching identity among 1 age identity`);
  });

  it('one group is too few: the error names the keys of the groups that failed', async () => {
    const err = await rejection(decryptText(encrypted, 'yaml', opts([withAge(ageA)])));
    expect(err.message).toContain('1 of 3 key groups could be opened, 2 are needed');
    expect(err.message).toContain(`pgp ${pgp.fingerprint}: no configured key service opens pgp keys`);
    expect(err.message).toContain(`age ${ageB.recipient}: no matching identity among 1 age identity`);
    expect(err.message).not.toContain(`age ${ageA.recipient}`);
  });
});

describe('decryptText: encryption rules and the MAC', () => {
  const SUFFIXED = `apiVersion: v1
kind: ConfigMap
settings:
    password: hidden
    password_unencrypted: visible
    config_unencrypted:
        nested: also visible
        count: 3
    list_unencrypted:
        - a
        - b
`;
  const TAGGED = `plain: value
token_secret: hidden
nested_secret:
    inner: hidden too
`;
  it.each<{ rule: string; plain: string; flags?: string[]; settings?: string[]; inClear: string[]; hidden: string[] }>([
    {
      rule: 'encrypted_regex',
      plain: SECRET_YAML,
      flags: REGEX,
      inClear: ['name: db', 'namespace: prod', 'type: Opaque'],
      hidden: ['correct-horse', 'db-1'],
    },
    {
      rule: 'unencrypted_suffix',
      plain: SUFFIXED,
      flags: ['--unencrypted-suffix', '_unencrypted'],
      inClear: ['password_unencrypted: visible', 'nested: also visible', '- a'],
      hidden: ['hidden', 'ConfigMap'],
    },
    {
      rule: 'default unencrypted suffix',
      plain: SUFFIXED,
      flags: [],
      inClear: ['password_unencrypted: visible'],
      hidden: ['hidden'],
    },
    {
      rule: 'unencrypted_regex',
      plain: SECRET_YAML,
      flags: ['--unencrypted-regex', '^(apiVersion|kind|metadata|type)$'],
      inClear: ['name: db', 'kind: Secret'],
      hidden: ['correct-horse', 'admin'],
    },
    {
      rule: 'encrypted_suffix',
      plain: TAGGED,
      flags: ['--encrypted-suffix', '_secret'],
      inClear: ['plain: value'],
      hidden: ['hidden'],
    },
    {
      rule: 'mac_only_encrypted',
      plain: SECRET_YAML,
      settings: MAC_ONLY,
      inClear: ['name: db', 'mac_only_encrypted: true'],
      hidden: ['correct-horse'],
    },
    {
      rule: 'encrypted_comment_regex',
      plain: COMMENTED,
      settings: ['encrypted_comment_regex: sops:enc'],
      inClear: ['plain: value', 'a: 1', '- x', '# sops:enc'],
      hidden: ['hidden', 'why-not'],
    },
    {
      rule: 'unencrypted_comment_regex',
      plain: 'secret: hidden\n# sops:nocrypt\nvisible: plain\nafter: hidden2\n',
      settings: ['unencrypted_comment_regex: sops:nocrypt'],
      inClear: ['visible: plain', '# sops:nocrypt'],
      hidden: ['hidden'],
    },
  ])('$rule', async ({ plain, flags, settings, inClear, hidden }) => {
    const encrypted = settings
      ? tk.encrypt(plain, 'yaml', { config: ruleConfig(ageA.recipient, settings) })
      : tk.encrypt(plain, 'yaml', { age: [ageA.recipient], flags: flags ?? [] });
    for (const text of inClear) expect(encrypted).toContain(text);
    for (const text of hidden) expect(encrypted).not.toContain(text);
    expect(await decryptText(encrypted, 'yaml', opts([withAge(ageA)]))).toBe(plain);
  });

  it('mac_only_encrypted: changing a value that is not encrypted keeps the MAC valid, as in sops', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { config: macOnlyConfig(ageA.recipient) });
    expect(encrypted).toContain('mac_only_encrypted: true');
    const changed = encrypted.replace('name: db', 'name: db-renamed');
    expect(tk.sopsDecrypt(changed, 'yaml', ageA.identity)).toContain('name: db-renamed');
    const out = await decryptText(changed, 'yaml', opts([withAge(ageA)]));
    expect(out).toBe(SECRET_YAML.replace('name: db', 'name: db-renamed'));
  });

  const tamperCases: { how: string; tamper: (enc: string) => string; expect: (plain: string) => string }[] = [
    {
      how: 'an unencrypted value changed',
      tamper: (enc) => enc.replace('namespace: prod', 'namespace: staging'),
      expect: (plain) => plain.replace('namespace: prod', 'namespace: staging'),
    },
    {
      how: 'two encrypted list elements swapped',
      tamper: (enc) => {
        const [first, second] = [...enc.matchAll(/^ {8}- (ENC\[.*\])$/gm)].map((m) => m[1]!);
        return enc.replace(first!, '@@FIRST@@').replace(second!, first!).replace('@@FIRST@@', second!);
      },
      expect: (plain) => plain.replace('- db-1\n        - db-2', '- db-2\n        - db-1'),
    },
    {
      how: 'a key added',
      tamper: (enc) => enc.replace('type: Opaque', 'type: Opaque\nextra: field'),
      expect: (plain) => plain.replace('type: Opaque', 'type: Opaque\nextra: field'),
    },
  ];
  it.each(tamperCases)('$how: MAC mismatch, and the same file decrypts with verifyMac false', async (c) => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [ageA.recipient], flags: REGEX });
    const tampered = c.tamper(encrypted);
    expect(tampered).not.toBe(encrypted);
    const err = await rejection(decryptText(tampered, 'yaml', opts([withAge(ageA)])));
    expect(err.message).toMatch(/^MAC mismatch: the file was modified after it was encrypted \(/);
    for (const secret of ['correct-horse', 'admin', 'db-1']) expect(err.message).not.toContain(secret);
    expect(await decryptText(tampered, 'yaml', opts([withAge(ageA)], false))).toBe(c.expect(SECRET_YAML));
  });

  it('a changed lastmodified is a MAC mismatch', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [ageA.recipient], flags: REGEX });
    const tampered = encrypted.replace(/lastmodified: "([^"]+)"/, 'lastmodified: "2001-01-01T00:00:00Z"');
    const err = await rejection(decryptText(tampered, 'yaml', opts([withAge(ageA)])));
    expect(err.message).toContain('MAC mismatch');
    expect(await decryptText(tampered, 'yaml', opts([withAge(ageA)], false))).toBe(SECRET_YAML);
  });

  it('an encrypted value moved to another key does not decrypt (its path is authenticated)', async () => {
    const encrypted = tk.encrypt(SECRET_YAML, 'yaml', { age: [ageA.recipient], flags: REGEX });
    const password = /password: (ENC\[.*\])/.exec(encrypted)![1]!;
    const user = /user: (ENC\[.*\])/.exec(encrypted)![1]!;
    const moved = encrypted.replace(user, password);
    const err = await rejection(decryptText(moved, 'yaml', opts([withAge(ageA)], false)));
    expect(err.message).toContain("cannot decrypt the value at 'stringData.user'");
    expect(err.message).not.toContain('correct-horse');
  });
});

describe('decryptText: YAML details', () => {
  it('timestamps, !!binary, hex and exponent numbers, -0 and infinity come out as sops prints them', async () => {
    const plain = [
      'when: 2001-12-14',
      'when_unencrypted: 2001-12-14 21:59:43.10 -5',
      'at: 2020-01-02T03:04:05.123456789+02:00',
      'bin: !!binary aGVsbG8=',
      'hex_unencrypted: 0x1F',
      'float_unencrypted: 1e3',
      'neg0: -0.0',
      'huge: 1.0e+30',
      'inf: .inf',
      '',
    ].join('\n');
    const encrypted = tk.encrypt(plain, 'yaml', { age: [ageA.recipient] });
    expect(encrypted).toMatch(/^when: ENC\[.*type:time\]$/m);
    const out = await decryptText(encrypted, 'yaml', opts([withAge(ageA)]));
    expect(out).toBe(tk.sopsDecrypt(encrypted, 'yaml', ageA.identity));
    expect(out).toContain('when: 2001-12-14T00:00:00Z\n');
  });

  it('multi-document YAML', async () => {
    const plain = 'a: 1\nb: secret\n---\nc: other\nd:\n    - x\n';
    const encrypted = tk.encrypt(plain, 'yaml', { age: [ageA.recipient] });
    const out = await decryptText(encrypted, 'yaml', opts([withAge(ageA)]));
    expect(canonical(out)).toBe(canonical(plain));
    expect(out).not.toContain('sops');
  });

  it('a comment inside a list (which sops encrypts as a list element) comes back as a comment', async () => {
    const plain = 'list:\n    - a\n    # between\n    - b\n';
    const encrypted = tk.encrypt(plain, 'yaml', { age: [ageA.recipient] });
    expect(encrypted).toMatch(/- ENC\[.*type:comment\]/);
    expect(await decryptText(encrypted, 'yaml', opts([withAge(ageA)]))).toBe(plain);
  });
});

describe('decryptTree', () => {
  const object = parseYaml(SECRET_YAML) as Record<string, unknown>;
  let encrypted: Record<string, unknown>;
  beforeAll(() => {
    encrypted = JSON.parse(
      tk.encrypt(JSON.stringify(object), 'json', { age: [ageA.recipient], flags: REGEX }),
    ) as Record<string, unknown>;
  });

  it('decrypts a parsed document and drops sops', async () => {
    const secrets: string[] = [];
    expect(await decryptTree(encrypted, opts([withAge(ageA)], true, secrets))).toEqual(object);
    expect(secrets).toEqual(expect.arrayContaining(['admin', 'correct-horse', 'db-1', 'db-2']));
  });

  it('after kustomize changed the metadata: MAC mismatch, unless verifyMac is false', async () => {
    const built = structuredClone(encrypted);
    (built['metadata'] as Record<string, unknown>)['labels'] = { 'app.kubernetes.io/name': 'db' };
    const err = await rejection(decryptTree(built, opts([withAge(ageA)])));
    expect(err.message).toContain('MAC mismatch');
    const out = await decryptTree(built, opts([withAge(ageA)], false));
    expect(out['stringData']).toEqual(object['stringData']);
    expect(out['metadata']).toEqual({ ...(object['metadata'] as object), labels: { 'app.kubernetes.io/name': 'db' } });
  });

  it('a tree without sops metadata is an error', async () => {
    const err = await rejection(decryptTree(object, opts([withAge(ageA)])));
    expect(err.message).toContain('sops metadata not found');
  });

  it('typed values come back with their types', async () => {
    const plain = { i: 42, f: 2.5, b: true, s: 'x', n: null, l: [1, 'a', false] };
    const enc = JSON.parse(tk.encrypt(JSON.stringify(plain), 'json', { age: [ageA.recipient] })) as Record<
      string,
      unknown
    >;
    expect(await decryptTree(enc, opts([withAge(ageA)]))).toStrictEqual(plain);
  });
});

describe('isSopsEncrypted', () => {
  it.each<{ format: SopsFormat; text: string; want: boolean }>([
    { format: 'yaml', text: 'a: ENC[x]\nsops:\n    mac: ENC[AES256_GCM,data:x]\n', want: true },
    { format: 'yaml', text: 'a: b\n', want: false },
    { format: 'json', text: '{"sops": {"mac": "ENC[AES256_GCM,data:x]"}}', want: true },
    { format: 'json', text: '{"sops":{"mac":"ENC[x]"}}', want: false },
    { format: 'binary', text: '{\n\t"sops": {\n\t\t"mac": "ENC[x]"\n\t}\n}', want: true },
    { format: 'dotenv', text: 'A=1\nsops_mac=ENC[x]\n', want: true },
    { format: 'dotenv', text: 'A=1\n', want: false },
    { format: 'ini', text: '[a]\nk = v\n\n[sops]\nmac = ENC[x]\n', want: true },
    { format: 'ini', text: '[a]\nk = v\n', want: false },
  ])('$format: $want', ({ format, text, want }) => {
    expect(isSopsEncrypted(text, format)).toBe(want);
  });
});

describe('formatForPath', () => {
  it.each<{ path: string; want: SopsFormat }>([
    { path: 'secret.yaml', want: 'yaml' },
    { path: 'dir/secret.enc.yml', want: 'yaml' },
    { path: 'config.json', want: 'json' },
    { path: '.env', want: 'dotenv' },
    { path: 'app.env', want: 'dotenv' },
    { path: 'settings.ini', want: 'ini' },
    { path: '.dockerconfigjson', want: 'json' },
    { path: 'registry.dockerconfigjson', want: 'json' },
    { path: 'id_rsa', want: 'binary' },
    { path: 'tls.crt', want: 'binary' },
    { path: 'secret.YAML', want: 'binary' },
    { path: 'secret.yaml.bak', want: 'binary' },
  ])('$path → $want', ({ path, want }) => {
    expect(formatForPath(path)).toBe(want);
  });
});
