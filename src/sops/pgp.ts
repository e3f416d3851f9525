/**
 * OpenPGP key service: opens the `pgp` master keys of SOPS files (the data key as an armored PGP
 * message in `enc`, the recipient's fingerprint in `fp`) with passwordless ASCII-armored private
 * keys, through the `openpgp` package instead of a `gpg` binary.
 */
import type { PrivateKey } from 'openpgp';
import type { DescribesMiss } from './datakey.js';
import { SopsError, type KeyService, type MasterKey } from './types.js';

/** openpgp is large (about 0.5 MB of the bundle): loaded at the first decryption that needs it, not at start-up. */
const openpgp = () => import('openpgp');

const BLOCK_RE = /-----BEGIN PGP PRIVATE KEY BLOCK-----[\s\S]*?-----END PGP PRIVATE KEY BLOCK-----/g;

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
}

/**
 * A key service for `pgp` master keys. `armoredKeys` holds one or more ASCII-armored OpenPGP
 * private keys (what Flux reads from `*.asc` Secret entries), concatenated. A key protected by a
 * passphrase cannot be used: decrypting with it is an error saying so.
 */
export function pgpKeyService(armoredKeys: string): KeyService & DescribesMiss {
  const blocks = armoredKeys.match(BLOCK_RE) ?? [];
  if (blocks.length === 0 && armoredKeys.trim() !== '') {
    throw new SopsError(
      armoredKeys.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----')
        ? 'the OpenPGP key text holds a public key; decryption needs the private key (gpg --export-secret-keys --armor)'
        : 'the OpenPGP key text holds no ASCII-armored private key block',
    );
  }
  let loaded: Promise<PrivateKey[]> | undefined;
  let count = blocks.length;
  const load = (): Promise<PrivateKey[]> => {
    loaded ??= openpgp()
      .then(({ readPrivateKeys }) =>
        Promise.all(
          blocks.map(async (block, i) => {
            try {
              return await readPrivateKeys({ armoredKeys: block });
            } catch (err) {
              throw new SopsError(`OpenPGP: private key block ${i + 1} cannot be read: ${messageOf(err)}`, {
                cause: err,
              });
            }
          }),
        ),
      )
      .then((lists) => {
        const keys = lists.flat();
        count = keys.length;
        return keys;
      });
    return loaded;
  };

  return {
    name: 'OpenPGP',
    canOpen: (key: MasterKey) => key.kind === 'pgp',
    describeMiss: () =>
      count === 0
        ? 'no OpenPGP private keys were given'
        : `no matching key among ${count} OpenPGP private ${count === 1 ? 'key' : 'keys'}`,
    async decrypt(key: MasterKey): Promise<Uint8Array | undefined> {
      if (blocks.length === 0) return undefined;
      const keys = await load();
      const { decrypt, readMessage } = await openpgp();
      let message;
      try {
        message = await readMessage({ armoredMessage: key.enc });
      } catch (err) {
        throw new Error(`OpenPGP: the encrypted data key is not an armored OpenPGP message: ${messageOf(err)}`, {
          cause: err,
        });
      }
      const wanted = message.getEncryptionKeyIDs();
      const anonymous = wanted.some((id) => /^0+$/.test(id.toHex()));
      const matching = keys.filter((k) => anonymous || wanted.some((id) => k.getKeys(id).length > 0));
      if (matching.length === 0) return undefined;
      const unlocked = matching.filter((k) =>
        anonymous ? k.isDecrypted() : wanted.some((id) => k.getKeys(id).some((sub) => sub.isDecrypted())),
      );
      const names = matching.map((k) => k.getFingerprint().toUpperCase()).join(', ');
      if (unlocked.length === 0) {
        throw new Error(
          `OpenPGP: private key ${names} is protected by a passphrase; SOPS decryption needs a key without one`,
        );
      }
      try {
        const result = await decrypt({ message, decryptionKeys: unlocked, format: 'binary' });
        const data: unknown = result.data;
        if (data instanceof Uint8Array) return data;
        throw new Error('the decrypted data key is not binary');
      } catch (err) {
        throw new Error(`OpenPGP: cannot decrypt the data key with private key ${names}: ${messageOf(err)}`, {
          cause: err,
        });
      }
    },
  };
}
