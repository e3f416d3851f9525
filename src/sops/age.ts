/**
 * age key service: opens the `age` master keys of SOPS files (the data key, encrypted to an age
 * recipient and stored as an armored age file in `enc`) with age identities given as text.
 *
 * Native X25519 identities (`AGE-SECRET-KEY-1…`) and post-quantum hybrid identities
 * (`AGE-SECRET-KEY-PQ-1…`) are handled by the `age-encryption` package. SSH identities (an
 * unencrypted OpenSSH, PKCS#1 or PKCS#8 private key block for ssh-ed25519 or ssh-rsa), which that
 * package does not support, are implemented here after filippo.io/age `agessh`.
 */
import {
  constants,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  hkdfSync,
  privateDecrypt,
  type KeyObject,
} from 'node:crypto';
import { armor, Decrypter, type Identity, type Stanza } from 'age-encryption';
import type { DescribesMiss } from './datakey.js';
import { SopsError, type KeyService, type MasterKey } from './types.js';

const ED25519_LABEL = 'age-encryption.org/v1/ssh-ed25519';
const RSA_OAEP_LABEL = 'age-encryption.org/v1/ssh-rsa';
/** DER prefixes that wrap a raw 32-byte X25519 private scalar / public point. */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

/** age's unpadded standard base64. */
function b64raw(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}

/** SSH wire encoding of a string. */
function sshString(bytes: Uint8Array): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

/** SSH mpint of an unsigned big-endian magnitude. */
function sshMpint(magnitude: Buffer): Buffer {
  let m = magnitude;
  while (m.length > 1 && m[0] === 0) m = m.subarray(1);
  return sshString(m[0] !== undefined && m[0] & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

/** `agessh.sshFingerprint`: the first 4 bytes of the SHA-256 of the public key's wire encoding. */
function sshTag(publicWire: Buffer): string {
  return b64raw(createHash('sha256').update(publicWire).digest().subarray(0, 4));
}

function x25519(scalar: Uint8Array, point: Uint8Array): Buffer {
  const privateKey = createPrivateKey({
    key: Buffer.concat([X25519_PKCS8_PREFIX, scalar]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, point]), format: 'der', type: 'spki' });
  return diffieHellman({ privateKey, publicKey });
}

function x25519Public(scalar: Uint8Array): Buffer {
  const privateKey = createPrivateKey({
    key: Buffer.concat([X25519_PKCS8_PREFIX, scalar]),
    format: 'der',
    type: 'pkcs8',
  });
  return createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(X25519_SPKI_PREFIX.length);
}

function hkdf(ikm: Uint8Array, salt: Uint8Array, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from(info, 'utf8'), 32));
}

/** age's `aeadDecrypt`: ChaCha20-Poly1305 with a zero nonce over a 16-byte file key. */
function unwrapWithChaCha(key: Uint8Array, sealed: Uint8Array): Uint8Array {
  if (sealed.length !== 32) throw new Error('invalid ssh-ed25519 stanza body');
  const decipher = createDecipheriv('chacha20-poly1305', key, Buffer.alloc(12), { authTagLength: 16 });
  decipher.setAuthTag(sealed.subarray(16));
  return Buffer.concat([decipher.update(sealed.subarray(0, 16)), decipher.final()]);
}

/** An ssh-ed25519 identity (`agessh.Ed25519Identity`). */
class SshEd25519Identity implements Identity {
  private readonly scalar: Buffer;
  private readonly ourPublic: Buffer;
  private readonly tag: string;

  constructor(
    private readonly publicWire: Buffer,
    seed: Uint8Array,
  ) {
    this.scalar = createHash('sha512').update(seed).digest().subarray(0, 32);
    this.ourPublic = x25519Public(this.scalar);
    this.tag = sshTag(publicWire);
  }

  unwrapFileKey(stanzas: Stanza[]): Uint8Array | null {
    for (const stanza of stanzas) {
      if (stanza.args[0] !== 'ssh-ed25519') continue;
      if (stanza.args.length !== 3) throw new Error('invalid ssh-ed25519 recipient block');
      if (stanza.args[1] !== this.tag) continue;
      const share = Buffer.from(stanza.args[2] ?? '', 'base64');
      if (share.length !== 32) throw new Error('invalid ssh-ed25519 recipient block');
      let shared = x25519(this.scalar, share);
      const tweak = hkdf(new Uint8Array(0), this.publicWire, ED25519_LABEL);
      shared = x25519(tweak, shared);
      const wrappingKey = hkdf(shared, Buffer.concat([share, this.ourPublic]), ED25519_LABEL);
      try {
        return unwrapWithChaCha(wrappingKey, stanza.body);
      } catch {
        throw new Error('failed to decrypt the file key with the ssh-ed25519 identity');
      }
    }
    return null;
  }
}

/** An ssh-rsa identity (`agessh.RSAIdentity`): RSA-OAEP-SHA256 with age's label. */
class SshRsaIdentity implements Identity {
  private readonly tag: string;

  constructor(
    publicWire: Buffer,
    private readonly key: KeyObject,
  ) {
    this.tag = sshTag(publicWire);
  }

  unwrapFileKey(stanzas: Stanza[]): Uint8Array | null {
    for (const stanza of stanzas) {
      if (stanza.args[0] !== 'ssh-rsa') continue;
      if (stanza.args.length !== 2) throw new Error('invalid ssh-rsa recipient block');
      if (stanza.args[1] !== this.tag) continue;
      try {
        return privateDecrypt(
          {
            key: this.key,
            padding: constants.RSA_PKCS1_OAEP_PADDING,
            oaepHash: 'sha256',
            oaepLabel: Buffer.from(RSA_OAEP_LABEL, 'utf8'),
          },
          stanza.body,
        );
      } catch {
        throw new Error('failed to decrypt the file key with the ssh-rsa identity');
      }
    }
    return null;
  }
}

/** Reads the SSH wire format. */
class SshReader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}

  u32(): number {
    if (this.pos + 4 > this.buf.length) throw new Error('truncated');
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  bytes(): Buffer {
    const len = this.u32();
    if (this.pos + len > this.buf.length) throw new Error('truncated');
    const v = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return v;
  }

  text(): string {
    return this.bytes().toString('latin1');
  }
}

const OPENSSH_MAGIC = 'openssh-key-v1\0';

function rsaFromParts(parts: { n: Buffer; e: Buffer; d: Buffer; iqmp: Buffer; p: Buffer; q: Buffer }): KeyObject {
  const big = (b: Buffer): bigint => BigInt('0x' + (b.toString('hex') || '0'));
  const b64url = (v: bigint): string => {
    let hex = v.toString(16);
    if (hex.length % 2) hex = '0' + hex;
    return Buffer.from(hex, 'hex').toString('base64url');
  };
  const d = big(parts.d);
  const p = big(parts.p);
  const q = big(parts.q);
  return createPrivateKey({
    key: {
      kty: 'RSA',
      n: b64url(big(parts.n)),
      e: b64url(big(parts.e)),
      d: b64url(d),
      p: b64url(p),
      q: b64url(q),
      dp: b64url(d % (p - 1n)),
      dq: b64url(d % (q - 1n)),
      qi: b64url(big(parts.iqmp)),
    },
    format: 'jwk',
  });
}

/** An `-----BEGIN OPENSSH PRIVATE KEY-----` block (openssh-key-v1), unencrypted. */
function parseOpenSshKey(body: Buffer, which: string): Identity[] {
  if (!body.subarray(0, OPENSSH_MAGIC.length).equals(Buffer.from(OPENSSH_MAGIC, 'latin1'))) {
    throw new SopsError(`${which} is not an OpenSSH private key`);
  }
  const r = new SshReader(body.subarray(OPENSSH_MAGIC.length));
  const cipher = r.text();
  r.text(); // kdf name
  r.bytes(); // kdf options
  if (cipher !== 'none') {
    throw new SopsError(`${which} is protected by a passphrase; SOPS decryption needs an SSH key without one`);
  }
  const count = r.u32();
  const publics: Buffer[] = [];
  for (let i = 0; i < count; i++) publics.push(r.bytes());
  const priv = new SshReader(r.bytes());
  if (priv.u32() !== priv.u32()) throw new SopsError(`${which} is corrupt (check bytes differ)`);
  const identities: Identity[] = [];
  for (let i = 0; i < count; i++) {
    const type = priv.text();
    const publicWire = publics[i]!;
    if (type === 'ssh-ed25519') {
      priv.bytes(); // public key
      const secret = priv.bytes(); // seed || public key
      priv.bytes(); // comment
      identities.push(new SshEd25519Identity(publicWire, secret.subarray(0, 32)));
    } else if (type === 'ssh-rsa') {
      const n = priv.bytes();
      const e = priv.bytes();
      const d = priv.bytes();
      const iqmp = priv.bytes();
      const p = priv.bytes();
      const q = priv.bytes();
      priv.bytes(); // comment
      identities.push(new SshRsaIdentity(publicWire, rsaFromParts({ n, e, d, iqmp, p, q })));
    } else {
      throw new SopsError(`${which} is an SSH key of type ${type}; age supports ssh-ed25519 and ssh-rsa`);
    }
  }
  return identities;
}

/** A PEM private key block: OpenSSH, or PKCS#1 / PKCS#8 (ed25519 or RSA) through node:crypto. */
function parsePemIdentity(pem: string, which: string): Identity[] {
  const header = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1] ?? '';
  if (header === 'OPENSSH PRIVATE KEY') {
    const body = pem.replace(/-----(BEGIN|END) OPENSSH PRIVATE KEY-----/g, '').replace(/\s+/g, '');
    try {
      return parseOpenSshKey(Buffer.from(body, 'base64'), which);
    } catch (err) {
      if (err instanceof SopsError) throw err;
      throw new SopsError(`${which} is not a valid OpenSSH private key`);
    }
  }
  if (header === 'ENCRYPTED PRIVATE KEY' || pem.includes('Proc-Type: 4,ENCRYPTED')) {
    throw new SopsError(`${which} is protected by a passphrase; SOPS decryption needs an SSH key without one`);
  }
  if (header !== 'RSA PRIVATE KEY' && header !== 'PRIVATE KEY') {
    throw new SopsError(`${which} is a PEM block of type "${header}", not an SSH private key`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new SopsError(`${which} is not a valid private key`);
  }
  const jwk = key.export({ format: 'jwk' });
  if (key.asymmetricKeyType === 'ed25519' && jwk.x && jwk.d) {
    const publicWire = Buffer.concat([
      sshString(Buffer.from('ssh-ed25519')),
      sshString(Buffer.from(jwk.x, 'base64url')),
    ]);
    return [new SshEd25519Identity(publicWire, Buffer.from(jwk.d, 'base64url'))];
  }
  if (key.asymmetricKeyType === 'rsa' && jwk.n && jwk.e) {
    const publicWire = Buffer.concat([
      sshString(Buffer.from('ssh-rsa')),
      sshMpint(Buffer.from(jwk.e, 'base64url')),
      sshMpint(Buffer.from(jwk.n, 'base64url')),
    ]);
    return [new SshRsaIdentity(publicWire, key)];
  }
  throw new SopsError(`${which} is a ${key.asymmetricKeyType ?? 'unknown'} key; age supports ssh-ed25519 and ssh-rsa`);
}

/**
 * Parses age identity text: native identities one per line (blank lines and `#` comments
 * ignored; several files may be concatenated) and SSH private key blocks. Errors name the line,
 * never its content.
 */
function parseIdentities(text: string): (string | Identity)[] {
  const identities: (string | Identity)[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const which = `the age identity on line ${i + 1}`;
    if (line.startsWith('-----BEGIN ')) {
      const start = i;
      while (i < lines.length && !/^-----END [A-Z0-9 ]+-----$/.test(lines[i]!.trim())) i++;
      if (i >= lines.length) throw new SopsError(`the private key block starting on line ${start + 1} has no END line`);
      identities.push(...parsePemIdentity(lines.slice(start, i + 1).join('\n'), `the SSH key on line ${start + 1}`));
      continue;
    }
    if (line.startsWith('AGE-PLUGIN-')) {
      throw new SopsError(`${which} is an age plugin identity; plugins are not supported`);
    }
    if (!line.startsWith('AGE-SECRET-KEY-1') && !line.startsWith('AGE-SECRET-KEY-PQ-1')) {
      throw new SopsError(`${which} is not an age identity (expected AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1…)`);
    }
    try {
      // validates the Bech32 encoding now rather than at the first decryption
      new Decrypter().addIdentity(line);
    } catch {
      throw new SopsError(`${which} is not a valid age identity`);
    }
    identities.push(line);
  }
  return identities;
}

/**
 * A key service for `age` master keys. `identities` is the text of one or more age identity
 * files (what Flux reads from `*.agekey` Secret entries), optionally with SSH private keys.
 * Throws a SopsError when the text holds something that is not an identity.
 */
export function ageKeyService(identities: string): KeyService & DescribesMiss {
  const parsed = parseIdentities(identities);
  const decrypter = new Decrypter();
  for (const identity of parsed) decrypter.addIdentity(identity);
  const count = parsed.length;
  return {
    name: 'age',
    canOpen: (key: MasterKey) => key.kind === 'age',
    describeMiss: () =>
      count === 0
        ? 'no age identities were given'
        : `no matching identity among ${count} age ${count === 1 ? 'identity' : 'identities'}`,
    async decrypt(key: MasterKey): Promise<Uint8Array | undefined> {
      if (count === 0) return undefined;
      let file: Uint8Array;
      try {
        file = armor.decode(key.enc);
      } catch {
        throw new Error('age: the encrypted data key is not an armored age file');
      }
      try {
        return await decrypter.decrypt(file);
      } catch (err) {
        if (noIdentityMatched(err)) return undefined;
        throw new Error(`age: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },
  };
}

/**
 * The age library's refusal when none of the identities given opens the file (age-encryption's
 * "no identity matched any of the file's recipients"): another key's file, not an error.
 */
function noIdentityMatched(err: unknown): boolean {
  return err instanceof Error && err.message.includes('no identity matched');
}
