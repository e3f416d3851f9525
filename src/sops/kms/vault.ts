/**
 * HashiCorp Vault / OpenBao transit master keys (`sops.hc_vault[]`:
 * `{vault_address, engine_path, key_name, enc}`): the data key is recovered with the transit
 * engine's `decrypt` endpoint. `enc` is the transit ciphertext as Vault returned it
 * (`vault:v1:...`), and the plaintext comes back as the base64 of the raw 32-byte data key
 * (sops hcvault/keysource.go).
 */
import type { KeyService } from '../types.js';
import { dataKeyOf, field, fromBase64, keyError, kindKeyService, postDecrypt, str, type DecryptApi } from './common.js';
import { refusal, vaultEndpoint } from './endpoints.js';

const PROVIDER = 'Vault transit';

/**
 * A key service for Vault transit master keys, at the address each key names when that address is
 * one of `allowed` (the `sops-vault-addresses` input, normalised by `normalizeVaultAddress`): the
 * address comes from the SOPS file and receives the token, so no other Vault is contacted. Token:
 * `token` (Flux's `sops.vault-token` entry, trimmed), else `VAULT_TOKEN`. `VAULT_NAMESPACE` is sent
 * as `X-Vault-Namespace` (Vault Enterprise, HCP Vault, OpenBao namespaces).
 */
export function vaultTransitKeyService(
  token?: string,
  env: NodeJS.ProcessEnv = process.env,
  allowed: readonly string[] = [],
): KeyService {
  return kindKeyService(PROVIDER, 'hc_vault', async (key) => {
    const address = field(key, 'vault_address')?.replace(/\/+$/, '');
    const engine = field(key, 'engine_path')?.replace(/^\/+|\/+$/g, '');
    const keyName = field(key, 'key_name');
    const name = `${address ?? '(no vault_address)'}/v1/${engine ?? '(no engine_path)'}/keys/${keyName ?? '(no key_name)'}`;
    if (!address || !engine || !keyName) {
      throw keyError(PROVIDER, name, 'the master key needs vault_address, engine_path and key_name');
    }
    const endpoint = vaultEndpoint(address, allowed);
    if (!endpoint.ok) throw keyError(PROVIDER, name, refusal(endpoint, 'vault_address'));
    const t = (token ?? '').trim() || (env['VAULT_TOKEN'] ?? '').trim();
    if (!t) {
      throw keyError(
        PROVIDER,
        name,
        'no Vault token: give a sops.vault-token entry in the decryption Secret or set VAULT_TOKEN',
      );
    }
    let url: URL;
    try {
      const enginePath = engine.split('/').map(encodeURIComponent).join('/');
      url = new URL(`${address}/v1/${enginePath}/decrypt/${encodeURIComponent(keyName)}`);
    } catch {
      throw keyError(PROVIDER, name, 'vault_address is not a URL');
    }
    const headers: Record<string, string> = { 'x-vault-token': t, 'content-type': 'application/json' };
    const namespace = env['VAULT_NAMESPACE'];
    if (namespace) headers['x-vault-namespace'] = namespace;
    const body = JSON.stringify({ ciphertext: key.enc });
    const json = await postDecrypt(DECRYPT, name, url, { headers, body }, [t]);
    const data = (json as { data?: unknown } | undefined)?.data;
    const plaintext = str(data, 'plaintext');
    if (plaintext === undefined) throw keyError(PROVIDER, name, 'the response has no data.plaintext');
    return dataKeyOf(fromBase64(plaintext), PROVIDER, name);
  });
}

/** Vault's error body: `{"errors": ["...", ...]}`. */
function vaultErrors(json: unknown): { message?: string } {
  const errors = (json as { errors?: unknown } | undefined)?.errors;
  if (!Array.isArray(errors)) return {};
  const texts = errors.filter((e): e is string => typeof e === 'string' && e.trim() !== '');
  return texts.length ? { message: texts.join('; ') } : {};
}

const DECRYPT: DecryptApi = { provider: PROVIDER, call: 'Vault decrypt', operation: 'decrypt', errorOf: vaultErrors };
