/**
 * Azure Key Vault master keys (`sops.azure_kv[]`: `{vault_url, name, version, enc}`): the data key is
 * recovered with the Key Vault REST `decrypt` operation (RSA-OAEP-256). SOPS stores `enc` as the
 * unpadded base64url of the ciphertext, which is what the REST API takes, and the result is the
 * raw 32-byte data key (sops azkv/keysource.go).
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { KeyService } from '../types.js';
import {
  dataKeyOf,
  expiryFromNow,
  field,
  fromBase64Url,
  githubOidcToken,
  httpDetail,
  jsonOf,
  keyError,
  keyStep,
  kindKeyService,
  num,
  oneLine,
  postDecrypt,
  readTextFile,
  readTokenFile,
  redact,
  send,
  str,
  TokenCache,
  type CachedToken,
  type DecryptApi,
} from './common.js';
import { oauthError, oauthToken, privateKeyFromPem, signJwtRs256 } from './oauth.js';
import { azureVaultEndpoint, refusal, testOrigins } from './endpoints.js';
import { trackChild } from '../../util/lifecycle.js';

const PROVIDER = 'Azure Key Vault';
const API_VERSION = '7.4';
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** Flux's `sops.azure-kv` fields (kustomize-controller internal/sops/azkv/config.go). */
interface AzureConfig {
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  clientCertificate?: string;
  clientCertificatePassword?: string;
  clientCertificateSendChain?: boolean;
  authorityHost?: string;
  appId?: string;
  tenant?: string;
  password?: string;
}

/** How to get a token for a resource ("https://vault.azure.net"). */
type Credential = (resource: string) => Promise<CachedToken>;

/**
 * A key service for Azure Key Vault master keys. `config` is Flux's `sops.azure-kv` entry (JSON or
 * YAML), chosen as Flux does: a service principal with `{tenantId, clientId, clientSecret}` or
 * `{tenantId, clientId, clientCertificate (PEM), clientCertificatePassword?, clientCertificateSendChain?}`,
 * az-CLI output `{appId, password, tenant}`, or a managed identity `{clientId}`; `authorityHost`
 * overrides the Entra host. Without it, from the environment: `AZURE_TENANT_ID` and
 * `AZURE_CLIENT_ID` with `AZURE_CLIENT_SECRET`, `AZURE_CLIENT_CERTIFICATE_PATH` (PEM; password in
 * `AZURE_CLIENT_CERTIFICATE_PASSWORD`), `AZURE_FEDERATED_TOKEN_FILE`, or the GitHub Actions OIDC
 * token (audience `api://AzureADTokenExchange`); a managed identity at `IDENTITY_ENDPOINT`; and
 * last the Azure CLI (`az account get-access-token`), which azure/login signs in.
 * `AZURE_AUTHORITY_HOST` overrides the Entra host; `AZURE_POD_IDENTITY_AUTHORITY_HOST` the IMDS host.
 */
export function azureKeyVaultKeyService(config?: string, env: NodeJS.ProcessEnv = process.env): KeyService {
  const cache = new TokenCache();
  let credential: Credential | undefined;
  const tokenFor = (resource: string) =>
    cache.get(resource, () => {
      credential ??= chooseCredential(config, env);
      return credential(resource);
    });

  return kindKeyService(PROVIDER, 'azure_kv', async (key) => {
    const vaultUrl = field(key, 'vault_url')?.replace(/\/+$/, '');
    const keyName = field(key, 'name');
    const version = field(key, 'version') ?? '';
    const name = `${vaultUrl ?? '(no vault_url)'}/keys/${keyName ?? '(no name)'}/${version}`;
    if (!vaultUrl || !keyName) throw keyError(PROVIDER, name, 'the master key needs vault_url and name');
    let url: URL;
    try {
      url = new URL(
        `${vaultUrl}/keys/${encodeURIComponent(keyName)}${version ? `/${encodeURIComponent(version)}` : ''}/decrypt`,
      );
    } catch {
      throw keyError(PROVIDER, name, 'vault_url is not a URL');
    }
    url.searchParams.set('api-version', API_VERSION);
    // The vault host comes from the SOPS file: only Key Vault hosts get a token or a request.
    const endpoint = azureVaultEndpoint(url, testOrigins(env));
    if (!endpoint.ok) throw keyError(PROVIDER, name, refusal(endpoint, 'vault_url'));
    const ciphertext = fromBase64Url(key.enc);
    if (!ciphertext || ciphertext.length === 0) throw keyError(PROVIDER, name, 'enc is not base64url');

    const token = await keyStep(PROVIDER, name, () => tokenFor(endpoint.resource));
    const headers = { authorization: `Bearer ${token.value}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ alg: 'RSA-OAEP-256', value: Buffer.from(ciphertext).toString('base64url') });
    const json = await postDecrypt(DECRYPT, name, url, { headers, body }, [token.value]);
    const value = str(json, 'value');
    return dataKeyOf(value === undefined ? undefined : fromBase64Url(value), PROVIDER, name);
  });
}

/** Key Vault's error body: `{error: {code, message}}`. */
function keyVaultError(json: unknown): { code?: string; message?: string } {
  const e = (json as { error?: unknown } | undefined)?.error;
  return { code: str(e, 'code'), message: str(e, 'message') };
}

const DECRYPT: DecryptApi = {
  provider: PROVIDER,
  call: 'Azure Key Vault decrypt',
  operation: 'decrypt',
  errorOf: keyVaultError,
};

/** Parses Flux's `sops.azure-kv` entry (JSON is YAML). */
function parseConfig(text: string): AzureConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new Error(`sops.azure-kv: not JSON or YAML: ${(err as Error).message}`, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error('sops.azure-kv: expected a JSON or YAML object');
  }
  const o = raw as Record<string, unknown>;
  const s = (k: string) => {
    const v = o[k];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const out: AzureConfig = {};
  for (const k of [
    'tenantId',
    'clientId',
    'clientSecret',
    'clientCertificate',
    'clientCertificatePassword',
    'authorityHost',
    'appId',
    'tenant',
    'password',
  ] as const) {
    const v = s(k);
    if (v !== undefined) out[k] = v;
  }
  if (o['clientCertificateSendChain'] === true || o['clientCertificateSendChain'] === 'true') {
    out.clientCertificateSendChain = true;
  }
  return out;
}

function chooseCredential(configText: string | undefined, env: NodeJS.ProcessEnv): Credential {
  const envAuthority = env['AZURE_AUTHORITY_HOST'];
  if (configText?.trim()) {
    const c = parseConfig(configText);
    const authority = c.authorityHost ?? envAuthority;
    if (c.tenantId && c.clientId) {
      if (c.clientSecret) return clientSecretCredential(authority, c.tenantId, c.clientId, c.clientSecret);
      if (c.clientCertificate) {
        return clientCertificateCredential(
          authority,
          c.tenantId,
          c.clientId,
          c.clientCertificate,
          c.clientCertificatePassword,
          c.clientCertificateSendChain ?? false,
        );
      }
    }
    if (c.tenant && c.appId && c.password) return clientSecretCredential(authority, c.tenant, c.appId, c.password);
    if (c.clientId) return managedIdentityCredential(env, c.clientId);
    throw new Error(
      "sops.azure-kv: requires a 'clientId' field, a combination of 'tenantId', 'clientId' and 'clientSecret', " +
        "or 'tenantId', 'clientId' and 'clientCertificate', or az-CLI's 'appId', 'password' and 'tenant'",
    );
  }

  const tenant = env['AZURE_TENANT_ID'];
  const client = env['AZURE_CLIENT_ID'];
  if (tenant && client) {
    const secret = env['AZURE_CLIENT_SECRET'];
    if (secret) return clientSecretCredential(envAuthority, tenant, client, secret);
    const certPath = env['AZURE_CLIENT_CERTIFICATE_PATH'];
    if (certPath) {
      return async (resource) => {
        const pem = await readTextFile(certPath, 'AZURE_CLIENT_CERTIFICATE_PATH');
        const sendChain = env['AZURE_CLIENT_SEND_CERTIFICATE_CHAIN'] === 'true';
        const password = env['AZURE_CLIENT_CERTIFICATE_PASSWORD'];
        return clientCertificateCredential(envAuthority, tenant, client, pem, password, sendChain)(resource);
      };
    }
    const tokenFile = env['AZURE_FEDERATED_TOKEN_FILE'];
    if (tokenFile) {
      return federatedCredential(envAuthority, tenant, client, () =>
        readTokenFile(tokenFile, 'AZURE_FEDERATED_TOKEN_FILE'),
      );
    }
    if (env['ACTIONS_ID_TOKEN_REQUEST_URL'] && env['ACTIONS_ID_TOKEN_REQUEST_TOKEN']) {
      return federatedCredential(envAuthority, tenant, client, async () => {
        const t = await githubOidcToken(env, 'api://AzureADTokenExchange');
        if (!t) throw new Error('no GitHub OIDC token');
        return t;
      });
    }
  }
  if (env['IDENTITY_ENDPOINT'] && env['IDENTITY_HEADER']) return managedIdentityCredential(env, client);
  return azureCliCredential(env);
}

function tokenUrl(authority: string | undefined, tenant: string): string {
  const host = (authority ?? DEFAULT_AUTHORITY).replace(/\/+$/, '');
  return `${/^https?:\/\//.test(host) ? host : `https://${host}`}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;
}

/** OAuth 2.0 client credentials grant at Microsoft Entra (the v2.0 token endpoint). */
function entraToken(url: string, form: Record<string, string>, what: string, secrets: string[]): Promise<CachedToken> {
  const failed = `${what}: token request to ${new URL(url).host}`;
  return oauthToken(url, form, { call: 'Microsoft Entra token', failed }, secrets);
}

function clientSecretCredential(
  authority: string | undefined,
  tenant: string,
  clientId: string,
  secret: string,
): Credential {
  return (resource) =>
    entraToken(
      tokenUrl(authority, tenant),
      { client_id: clientId, scope: `${resource}/.default`, client_secret: secret, grant_type: 'client_credentials' },
      `service principal ${clientId} (client secret)`,
      [secret],
    );
}

/**
 * Certificate credential: a client assertion JWT (RS256, `x5t` = the certificate's SHA-1
 * thumbprint, and the chain in `x5c` when asked) signed with the PEM's private key.
 */
function clientCertificateCredential(
  authority: string | undefined,
  tenant: string,
  clientId: string,
  pem: string,
  password: string | undefined,
  sendChain: boolean,
): Credential {
  const what = `service principal ${clientId} (client certificate)`;
  return async (resource) => {
    const certs = (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
      (c) => new X509Certificate(c),
    );
    const keyPem =
      /-----BEGIN (?:RSA |ENCRYPTED )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |ENCRYPTED )?PRIVATE KEY-----/.exec(
        pem,
      )?.[0];
    if (!keyPem || certs.length === 0) {
      throw new Error(`${what}: clientCertificate must be PEM holding the certificate and its private key`);
    }
    let key;
    try {
      key = privateKeyFromPem(keyPem, password);
    } catch (err) {
      throw new Error(`${what}: cannot read the private key${password ? '' : ' (is it encrypted?)'}`, { cause: err });
    }
    const leaf = certs.find((c) => c.checkPrivateKey(key)) ?? certs[0]!;
    const chain = [leaf, ...certs.filter((c) => c !== leaf)];
    const url = tokenUrl(authority, tenant);
    const now = Math.floor(Date.now() / 1000);
    const assertion = signJwtRs256(
      {
        alg: 'RS256',
        typ: 'JWT',
        x5t: createHash('sha1').update(leaf.raw).digest('base64url'),
        ...(sendChain ? { x5c: chain.map((c) => c.raw.toString('base64')) } : {}),
      },
      { aud: url, iss: clientId, sub: clientId, jti: randomUUID(), nbf: now, iat: now, exp: now + 600 },
      key,
    );
    return entraToken(
      url,
      {
        client_id: clientId,
        scope: `${resource}/.default`,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        grant_type: 'client_credentials',
      },
      what,
      [assertion],
    );
  };
}

/** Federated credential: an OIDC token from elsewhere (a projected file, GitHub) as the client assertion. */
function federatedCredential(
  authority: string | undefined,
  tenant: string,
  clientId: string,
  assertion: () => Promise<string>,
): Credential {
  return async (resource) => {
    const token = await assertion();
    return entraToken(
      tokenUrl(authority, tenant),
      {
        client_id: clientId,
        scope: `${resource}/.default`,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: token,
        grant_type: 'client_credentials',
      },
      `federated credential of ${clientId}`,
      [token],
    );
  };
}

/**
 * Managed identity: App Service / Container Apps / Arc style when `IDENTITY_ENDPOINT` and
 * `IDENTITY_HEADER` are set, else the VM's Instance Metadata Service.
 */
function managedIdentityCredential(env: NodeJS.ProcessEnv, clientId: string | undefined): Credential {
  const what = `managed identity${clientId ? ` ${clientId}` : ''}`;
  return async (resource) => {
    const endpoint = env['IDENTITY_ENDPOINT'];
    const header = env['IDENTITY_HEADER'];
    let url: URL;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (endpoint && header) {
      url = new URL(endpoint);
      url.searchParams.set('api-version', '2019-08-01');
      headers['x-identity-header'] = header;
    } else {
      const host = (env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] ?? 'http://169.254.169.254').replace(/\/+$/, '');
      url = new URL(`${host}/metadata/identity/oauth2/token`);
      url.searchParams.set('api-version', '2018-02-01');
      headers['metadata'] = 'true';
    }
    url.searchParams.set('resource', resource);
    if (clientId) url.searchParams.set('client_id', clientId);
    const res = await send(url, { method: 'GET', headers }, `Azure ${what} token`);
    const json = jsonOf(res.body);
    const token = str(json, 'access_token');
    if (res.status !== 200 || !token) {
      const { code, message } = oauthError(res.body);
      throw new Error(
        `${what}: token request to ${url.host} failed: ${httpDetail(res.status, code, message && redact(message, [header]))}`,
      );
    }
    const expiresOn = num(json, 'expires_on');
    return { value: token, expiresAt: expiresOn ? expiresOn * 1000 : expiryFromNow(num(json, 'expires_in')) };
  };
}

/**
 * What may be passed to the Azure CLI as --resource: `https://` and a host name of letters, digits,
 * dots and dashes. On Windows `az` is `az.cmd`, which Node runs only through cmd.exe, where `&`, `|`
 * or `"` in an argument (a URL host from a SOPS file can hold them) would run commands.
 */
export const CLI_RESOURCE = /^https:\/\/[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;

/** The Azure CLI's token (`az account get-access-token`), for a runner signed in by azure/login. */
function azureCliCredential(env: NodeJS.ProcessEnv): Credential {
  return (resource) =>
    new Promise<CachedToken>((resolve, reject) => {
      if (!CLI_RESOURCE.test(resource)) {
        reject(
          new Error(
            `Azure CLI: refusing to ask for a token for ${JSON.stringify(resource)}: not an https:// host name`,
          ),
        );
        return;
      }
      const az = process.platform === 'win32' ? 'az.cmd' : 'az';
      const child = execFile(
        az,
        ['account', 'get-access-token', '--resource', resource, '--output', 'json'],
        { env, timeout: 30_000, shell: process.platform === 'win32', windowsHide: true },
        (err, stdout, stderr) => {
          if (err) {
            const notFound = (err as NodeJS.ErrnoException).code === 'ENOENT';
            reject(
              new Error(
                notFound
                  ? 'no Azure credentials: give a sops.azure-kv entry in the decryption Secret, or set AZURE_TENANT_ID ' +
                      'and AZURE_CLIENT_ID with AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH or ' +
                      'AZURE_FEDERATED_TOKEN_FILE (or a GitHub OIDC token), or sign in the Azure CLI (azure/login)'
                  : `Azure CLI: az account get-access-token failed: ${oneLine(stderr || err.message)}`,
                { cause: err },
              ),
            );
            return;
          }
          const json = jsonOf(stdout);
          const token = str(json, 'accessToken');
          if (!token) {
            reject(new Error('Azure CLI: az account get-access-token printed no accessToken'));
            return;
          }
          const epoch = num(json, 'expires_on');
          const parsed = Date.parse(str(json, 'expiresOn') ?? '');
          resolve({
            value: token,
            expiresAt: epoch ? epoch * 1000 : Number.isFinite(parsed) ? parsed : Date.now() + 5 * 60_000,
          });
        },
      );
      // Killed should this process end first (util/lifecycle.ts).
      trackChild(child, false);
    });
}
