/**
 * Makes SOPS fixtures at test time with the real tools: keys from `age-keygen`, `gpg` and
 * `ssh-keygen`, files encrypted by the pinned `sops` that `test/cluster/build.sh` builds. Everything
 * lives in a temporary directory; no user configuration (sops config, GnuPG home, age keys) is read.
 * Nothing here prints key material or plaintext.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SopsFormat } from '../../src/sops/types.js';
import { TOOLS } from './paths.js';

export const SOPS = join(TOOLS, 'sops');
export const AGE_KEYGEN = join(TOOLS, 'age-keygen');
export const GPG = '/usr/bin/gpg';
export const SSH_KEYGEN = '/usr/bin/ssh-keygen';

export interface AgeKey {
  /** The identity file's text (with age-keygen's comment lines). */
  identity: string;
  /** `age1…` (or `age1pq1…`). */
  recipient: string;
}

export interface PgpKey {
  fingerprint: string;
  /** ASCII-armored secret key. */
  armoredPrivate: string;
}

export interface SshKey {
  /** The OpenSSH private key file. */
  privateKey: string;
  /** `ssh-ed25519 AAAA…` or `ssh-rsa AAAA…`, as sops takes it for an age recipient. */
  recipient: string;
}

export interface EncryptOptions {
  age?: readonly string[];
  pgp?: readonly string[];
  /** Extra `sops encrypt` flags, e.g. `['--encrypted-regex', '^data$']`. */
  flags?: readonly string[];
  /** A `.sops.yaml` for this file (for key groups), written beside it and passed with `--config`. */
  config?: string;
}

export interface SopsToolkit {
  readonly dir: string;
  ageKey(options?: { postQuantum?: boolean }): AgeKey;
  pgpKey(options?: { passphrase?: string }): PgpKey;
  /** An SSH key pair; `pem` writes the private key as PKCS#1 (RSA) instead of the OpenSSH format. */
  sshKey(type: 'ed25519' | 'rsa', options?: { pem?: boolean }): SshKey;
  /** Encrypts `plaintext` as a file of `format` and returns the encrypted file's text. */
  encrypt(plaintext: string, format: SopsFormat, options: EncryptOptions): string;
  /** `sops decrypt` of an encrypted text with the given age identities (for comparison). */
  sopsDecrypt(encrypted: string, format: SopsFormat, ageIdentities: string): string;
  cleanup(): void;
}

const EXTENSIONS: Readonly<Record<SopsFormat, string>> = {
  yaml: 'yaml',
  json: 'json',
  dotenv: 'env',
  ini: 'ini',
  binary: 'bin',
};

function requireTool(path: string, hint: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: ${hint}`);
}

/** Checks the tools and creates a temporary workspace; call `cleanup()` when done. */
export function createSopsToolkit(): SopsToolkit {
  const build = 'run `bash test/cluster/build.sh` to build the pinned sops and age tools';
  requireTool(SOPS, build);
  requireTool(AGE_KEYGEN, build);
  requireTool(GPG, 'install GnuPG (Debian package gnupg); then run `bash test/cluster/build.sh`');
  requireTool(SSH_KEYGEN, 'install the OpenSSH client (Debian package openssh-client)');

  const dir = mkdtempSync(join(tmpdir(), 'kr-sops-'));
  const gnupgHome = join(dir, 'gnupg');
  mkdirSync(gnupgHome, { mode: 0o700 });
  const home = join(dir, 'home');
  mkdirSync(home);
  // a clean environment: no SOPS_*, no user GnuPG home, no age key file
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, GNUPGHOME: gnupgHome };
  let counter = 0;
  const fresh = (name: string): string => join(dir, `${++counter}-${name}`);
  const run = (file: string, args: readonly string[], input?: string, extraEnv?: NodeJS.ProcessEnv): string => {
    const result = spawnSync(file, args, {
      cwd: dir,
      env: { ...env, ...extraEnv },
      input,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (result.error !== undefined || result.status !== 0) {
      // only stderr in the message: stdout could hold plaintext
      const tool = file.split('/').pop() ?? file;
      const why = result.error?.message ?? result.stderr.trim();
      throw new Error(`${tool} ${args.join(' ')} failed (exit ${result.status ?? '?'}): ${why}`);
    }
    return result.stdout;
  };
  const gpg = (args: readonly string[], input?: string): string =>
    run(GPG, ['--batch', '--no-tty', '--pinentry-mode', 'loopback', ...args], input);

  return {
    dir,
    ageKey(options = {}) {
      const file = fresh('age.txt');
      run(AGE_KEYGEN, [...(options.postQuantum ? ['-pq'] : []), '-o', file]);
      const identity = readFileSync(file, 'utf8');
      const recipient = run(AGE_KEYGEN, ['-y', file]).trim();
      return { identity, recipient };
    },
    pgpKey(options = {}) {
      const uid = `kustomize-reconcile test ${++counter} <test${counter}@example.invalid>`;
      const passphrase = options.passphrase ?? '';
      gpg(['--passphrase', passphrase, '--quick-generate-key', uid, 'future-default', 'default', 'never']);
      const listing = gpg(['--with-colons', '--list-secret-keys', uid]);
      const fingerprint = /^fpr:+([0-9A-F]{40}):/m.exec(listing)?.[1];
      if (!fingerprint) throw new Error('gpg did not list the new key');
      const armoredPrivate = gpg(['--passphrase', passphrase, '--armor', '--export-secret-keys', fingerprint]);
      return { fingerprint, armoredPrivate };
    },
    sshKey(type, options = {}) {
      const file = fresh(`id_${type}`);
      const extra = [...(type === 'rsa' ? ['-b', '2048'] : []), ...(options.pem ? ['-m', 'PEM'] : [])];
      run(SSH_KEYGEN, ['-q', '-t', type, ...extra, '-N', '', '-C', '', '-f', file]);
      const recipient = readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
      return { privateKey: readFileSync(file, 'utf8'), recipient };
    },
    encrypt(plaintext, format, options) {
      const file = fresh(`plain.${EXTENSIONS[format]}`);
      writeFileSync(file, plaintext);
      let config = '/dev/null';
      if (options.config !== undefined) {
        config = fresh('sops.yaml');
        writeFileSync(config, options.config);
      }
      const args = ['--config', config, 'encrypt', '--input-type', format, '--output-type', format];
      if (options.age?.length) args.push('--age', options.age.join(','));
      if (options.pgp?.length) args.push('--pgp', options.pgp.join(','));
      args.push(...(options.flags ?? []), file);
      return run(SOPS, args);
    },
    sopsDecrypt(encrypted, format, ageIdentities) {
      const file = fresh(`enc.${EXTENSIONS[format]}`);
      writeFileSync(file, encrypted);
      const keyFile = fresh('keys.txt');
      writeFileSync(keyFile, ageIdentities, { mode: 0o600 });
      return run(
        SOPS,
        ['--config', '/dev/null', 'decrypt', '--input-type', format, '--output-type', format, file],
        undefined,
        { SOPS_AGE_KEY_FILE: keyFile },
      );
    },
    cleanup() {
      try {
        execFileSync('gpgconf', ['--kill', 'all'], { env, stdio: 'ignore' });
      } catch {
        // no agent was started
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
