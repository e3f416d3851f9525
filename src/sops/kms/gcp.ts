/**
 * Google Cloud KMS master keys (`sops.gcp_kms[]`: `{resource_id, enc}`): the data key is recovered
 * with the Cloud KMS REST `decrypt` method. SOPS stores `enc` as the standard base64 of the KMS
 * ciphertext (kept for compatibility with SOPS 3.8 and older), which is also what the REST API takes,
 * and the plaintext it returns is the base64 of the raw 32-byte data key (sops gcpkms/keysource.go).
 */
import type { KeyService } from '../types.js';
import {
  dataKeyOf,
  expiryFromNow,
  field,
  fromBase64,
  httpDetail,
  jsonOf,
  keyError,
  keyStep,
  kindKeyService,
  num,
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
import { oauthToken, privateKeyFromPem, signJwtRs256 } from './oauth.js';
import { googleEndpoint, refusal, testOrigins, type GoogleUse } from './endpoints.js';

const PROVIDER = 'GCP KMS';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const RESOURCE_RE = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

interface GcpToken extends CachedToken {
  /** `quota_project_id` of the credentials, sent as `x-goog-user-project`. */
  quotaProject?: string;
}

/**
 * A key service for Google Cloud KMS master keys. Credentials, in order, as SOPS reads them:
 * `credentialsJson` (Flux's `sops.gcp-kms` entry: a service-account key, or any credentials JSON
 * that Google's client libraries accept: `authorized_user`, `external_account`); the
 * `GOOGLE_CREDENTIALS` variable (SOPS's own: a file path or the JSON itself); the
 * `GOOGLE_OAUTH_ACCESS_TOKEN` variable; the file named by `GOOGLE_APPLICATION_CREDENTIALS` (what
 * google-github-actions/auth writes: a service-account key, or an `external_account` for Workload
 * Identity Federation, with service account impersonation when it names one).
 *
 * Credentials from the decryption Secret are a cluster object that the tree's Kustomization
 * chooses, so they are pinned: their `token_uri` must be Google's (`oauth2.googleapis.com`,
 * `accounts.google.com`), and `external_account` credentials are refused there, since their
 * `credential_source` makes the runner read a local file or URL (`/proc/self/environ` holds every
 * input) and send it on. Credentials from the runner's environment are the workflow's own.
 *
 * Endpoint: `KR_GCP_KMS_ENDPOINT` (a base URL such as `http://127.0.0.1:8080`), else SOPS's
 * `SOPS_GCP_KMS_ENDPOINT` (host[:port] or URL) or `SOPS_GCP_KMS_UNIVERSE_DOMAIN`, else
 * `https://cloudkms.googleapis.com`. Token endpoints come from the credentials JSON.
 */
export function gcpKmsKeyService(credentialsJson?: string, env: NodeJS.ProcessEnv = process.env): KeyService {
  const cache = new TokenCache<GcpToken>();
  const accessToken = () => cache.get('token', () => resolveToken(credentialsJson, env, testOrigins(env)));

  return kindKeyService(PROVIDER, 'gcp_kms', async (key) => {
    const resource = field(key, 'resource_id');
    if (!resource) throw keyError(PROVIDER, '(no resource_id)', 'the master key has no resource_id');
    if (!RESOURCE_RE.test(resource)) {
      throw keyError(
        PROVIDER,
        resource,
        'not a key resource id (projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>)',
      );
    }
    const ciphertext = fromBase64(key.enc);
    if (!ciphertext || ciphertext.length === 0) throw keyError(PROVIDER, resource, 'enc is not base64');

    const token = await keyStep(PROVIDER, resource, accessToken);
    const path = resource.split('/').map(encodeURIComponent).join('/');
    const url = `${kmsEndpoint(env)}/v1/${path}:decrypt`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${token.value}`,
      'content-type': 'application/json',
    };
    if (token.quotaProject) headers['x-goog-user-project'] = token.quotaProject;
    const body = JSON.stringify({ ciphertext: Buffer.from(ciphertext).toString('base64') });
    const json = await postDecrypt(DECRYPT, resource, url, { headers, body }, [token.value]);
    const plaintext = str(json, 'plaintext');
    return dataKeyOf(plaintext === undefined ? undefined : fromBase64(plaintext), PROVIDER, resource);
  });
}

function kmsEndpoint(env: NodeJS.ProcessEnv): string {
  const ours = env['KR_GCP_KMS_ENDPOINT'];
  if (ours) return ours.replace(/\/+$/, '');
  const sops = env['SOPS_GCP_KMS_ENDPOINT'];
  if (sops) return (/^https?:\/\//.test(sops) ? sops : `https://${sops}`).replace(/\/+$/, '');
  const universe = env['SOPS_GCP_KMS_UNIVERSE_DOMAIN'];
  if (universe) return `https://cloudkms.${universe}`;
  return 'https://cloudkms.googleapis.com';
}

/** Google's API error body: `{error: {code, message, status}}`; OAuth endpoints use RFC 6749's form. */
function googleError(json: unknown): { code?: string; message?: string } {
  const e = (json as { error?: unknown } | undefined)?.error;
  if (typeof e === 'object' && e !== null) {
    const code = str(e, 'status');
    const message = str(e, 'message');
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  }
  return {};
}

const DECRYPT: DecryptApi = { provider: PROVIDER, call: 'GCP KMS decrypt', operation: 'decrypt', errorOf: googleError };

async function resolveToken(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
  test: readonly string[],
): Promise<GcpToken> {
  if (explicit?.trim()) return tokenFromCredentials(explicit, 'the sops.gcp-kms credentials', { test });
  const sopsCreds = env['GOOGLE_CREDENTIALS'];
  if (sopsCreds?.trim()) {
    const text = sopsCreds.trim().startsWith('{') ? sopsCreds : await readTextFile(sopsCreds, 'GOOGLE_CREDENTIALS');
    return tokenFromCredentials(text, 'GOOGLE_CREDENTIALS');
  }
  const oauth = env['GOOGLE_OAUTH_ACCESS_TOKEN'];
  if (oauth?.trim()) return { value: oauth.trim(), expiresAt: Infinity };
  const adc = env['GOOGLE_APPLICATION_CREDENTIALS'];
  if (adc) {
    const text = await readTextFile(adc, 'GOOGLE_APPLICATION_CREDENTIALS');
    return tokenFromCredentials(text, `GOOGLE_APPLICATION_CREDENTIALS (${adc})`);
  }
  throw new Error(
    'no GCP credentials: give a sops.gcp-kms entry in the decryption Secret, or set ' +
      'GOOGLE_APPLICATION_CREDENTIALS (google-github-actions/auth does), GOOGLE_CREDENTIALS or GOOGLE_OAUTH_ACCESS_TOKEN',
  );
}

/** For credentials that did not come from the runner: the test-only origins admitted besides Google's. */
interface Pinned {
  test: readonly string[];
}

/**
 * The URL a credentials field names, as given; when the credentials are `pinned`, only Google's
 * host for that use (else an error saying nothing was sent).
 */
function checkedUrl(pinned: Pinned | undefined, use: GoogleUse, url: string, fieldName: string, what: string): string {
  if (!pinned) return url;
  const v = googleEndpoint(use, url, pinned.test);
  if (!v.ok) throw new Error(`${what}: ${refusal(v, fieldName)}`);
  return url;
}

/** Gets an access token with a credentials JSON of any type Google's client libraries write. */
async function tokenFromCredentials(text: string, what: string, pinned?: Pinned): Promise<GcpToken> {
  const j = jsonOf(text);
  if (typeof j !== 'object' || j === null) throw new Error(`${what}: not a JSON credentials file`);
  const type = str(j, 'type');
  const quota = str(j, 'quota_project_id');
  const withQuota = (t: CachedToken): GcpToken => (quota ? { ...t, quotaProject: quota } : t);
  switch (type) {
    case 'service_account':
      return withQuota(await serviceAccountToken(j, what, pinned));
    case 'authorized_user':
      return withQuota(await authorizedUserToken(j, what, pinned));
    case 'external_account':
      if (pinned) throw externalAccountRefused(j, what, pinned);
      return withQuota(await externalAccountToken(j, what));
    default:
      throw new Error(
        `${what}: credentials of type ${JSON.stringify(type ?? null)} are not supported ` +
          '(service_account, authorized_user and external_account are)',
      );
  }
}

/**
 * external_account credentials that did not come from the runner: refused whole, since their
 * credential source is a file or URL of the runner's; the message also names the URLs that are not
 * Google's (token_url, service_account_impersonation_url). Nothing is read or sent.
 */
function externalAccountRefused(j: object, what: string, pinned: Pinned): Error {
  const source = (j as { credential_source?: unknown }).credential_source;
  const from =
    str(source, 'file') !== undefined ? 'a local file' : str(source, 'url') !== undefined ? 'a URL' : 'a source';
  const reasons = [`their credential_source would make the runner read ${from} and send it on`];
  const urls: [GoogleUse, string, string | undefined][] = [
    ['sts', 'token_url', str(j, 'token_url')],
    ['impersonation', 'service_account_impersonation_url', str(j, 'service_account_impersonation_url')],
  ];
  for (const [use, name, url] of urls) {
    const v = url === undefined ? undefined : googleEndpoint(use, url, pinned.test);
    if (v && !v.ok) reasons.push(`${name} ${v.host} is ${v.why}`);
  }
  return new Error(
    `${what}: external_account credentials are refused in a decryption Secret: ${reasons.join('; ')}. ` +
      'Give them to the runner instead (GOOGLE_APPLICATION_CREDENTIALS, as google-github-actions/auth sets it); ' +
      'nothing was read and no request was sent',
  );
}

/** OAuth 2.0 JWT bearer grant (RFC 7523) with an RS256 assertion signed by the service account's key. */
async function serviceAccountToken(j: object, what: string, pinned?: Pinned): Promise<CachedToken> {
  const email = str(j, 'client_email');
  const pem = str(j, 'private_key');
  if (!email || !pem) throw new Error(`${what}: a service account key needs client_email and private_key`);
  const tokenUri = checkedUrl(pinned, 'token', str(j, 'token_uri') ?? DEFAULT_TOKEN_URI, 'token_uri', what);
  let key;
  try {
    key = privateKeyFromPem(pem);
  } catch (err) {
    throw new Error(`${what}: private_key of ${email} is not a PEM private key`, { cause: err });
  }
  const iat = Math.floor(Date.now() / 1000);
  const kid = str(j, 'private_key_id');
  const assertion = signJwtRs256(
    { alg: 'RS256', typ: 'JWT', ...(kid ? { kid } : {}) },
    { iss: email, scope: SCOPE, aud: tokenUri, iat, exp: iat + 3600 },
    key,
  );
  return oauthTokenRequest(
    tokenUri,
    { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion },
    `service account ${email}: token request to ${tokenUri}`,
    [assertion],
  );
}

/** A user's refresh token (`gcloud auth application-default login`). */
async function authorizedUserToken(j: object, what: string, pinned?: Pinned): Promise<CachedToken> {
  const clientId = str(j, 'client_id');
  const clientSecret = str(j, 'client_secret');
  const refreshToken = str(j, 'refresh_token');
  if (!clientId || !clientSecret || !refreshToken) {
    throw new Error(`${what}: authorized_user credentials need client_id, client_secret and refresh_token`);
  }
  const tokenUri = checkedUrl(pinned, 'token', str(j, 'token_uri') ?? DEFAULT_TOKEN_URI, 'token_uri', what);
  return oauthTokenRequest(
    tokenUri,
    { grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: refreshToken },
    `authorized user: token request to ${tokenUri}`,
    [clientSecret, refreshToken],
  );
}

/**
 * Workload Identity Federation: read the subject token from `credential_source` (a file, or a URL
 * such as GitHub's OIDC endpoint), exchange it at `token_url` (Google STS, RFC 8693), then, when the
 * file names one, trade that for the service account's token at `service_account_impersonation_url`.
 */
async function externalAccountToken(j: object, what: string): Promise<CachedToken> {
  const audience = str(j, 'audience');
  const subjectTokenType = str(j, 'subject_token_type');
  const tokenUrl = str(j, 'token_url') ?? 'https://sts.googleapis.com/v1/token';
  const source = (j as { credential_source?: unknown }).credential_source;
  if (!audience || !subjectTokenType || typeof source !== 'object' || source === null) {
    throw new Error(`${what}: external_account credentials need audience, subject_token_type and credential_source`);
  }
  const subjectToken = await subjectTokenFrom(source, what);
  const userProject = str(j, 'workforce_pool_user_project');
  const form: Record<string, string> = {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    audience,
    scope: SCOPE,
    requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    subject_token: subjectToken,
    subject_token_type: subjectTokenType,
  };
  if (userProject) form['options'] = JSON.stringify({ userProject });
  const federated = await oauthTokenRequest(tokenUrl, form, `STS token exchange at ${tokenUrl}`, [subjectToken]);

  const impersonationUrl = str(j, 'service_account_impersonation_url');
  if (!impersonationUrl) return federated;
  const lifetime =
    num((j as { service_account_impersonation?: unknown }).service_account_impersonation, 'token_lifetime_seconds') ??
    3600;
  const res = await send(
    impersonationUrl,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${federated.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: [SCOPE], lifetime: `${lifetime}s` }),
    },
    'GCP service account impersonation',
  );
  const body = jsonOf(res.body);
  const token = str(body, 'accessToken');
  if (res.status !== 200 || !token) {
    const { code, message } = googleError(body);
    throw new Error(
      `service account impersonation at ${impersonationUrl} failed: ` +
        httpDetail(res.status, code, message && redact(message, [federated.value, subjectToken])),
    );
  }
  const expire = Date.parse(str(body, 'expireTime') ?? '');
  return { value: token, expiresAt: Number.isFinite(expire) ? expire : expiryFromNow(lifetime) };
}

/** The subject token of an external account's `credential_source` (file or url; text or json format). */
async function subjectTokenFrom(source: object, what: string): Promise<string> {
  const format = (source as { format?: unknown }).format;
  const formatType = str(format, 'type') ?? 'text';
  const fieldName = str(format, 'subject_token_field_name');
  let raw: string;
  const file = str(source, 'file');
  const url = str(source, 'url');
  if (file) {
    raw = await readTokenFile(file, `${what}: credential_source.file`);
  } else if (url) {
    const hdrs = (source as { headers?: unknown }).headers;
    const headers: Record<string, string> = {};
    if (typeof hdrs === 'object' && hdrs !== null) {
      for (const [k, v] of Object.entries(hdrs)) if (typeof v === 'string') headers[k] = v;
    }
    const res = await send(url, { method: 'GET', headers }, 'GCP credential_source.url');
    if (res.status !== 200) {
      throw new Error(
        `${what}: credential_source.url ${new URL(url).host} answered ${httpDetail(res.status, undefined, undefined)}`,
      );
    }
    raw = res.body.trim();
  } else {
    throw new Error(
      `${what}: only file and url credential sources are supported (not executable or AWS environment sources)`,
    );
  }
  if (formatType === 'json') {
    if (!fieldName) throw new Error(`${what}: credential_source.format json needs subject_token_field_name`);
    const token = str(jsonOf(raw), fieldName);
    if (!token) throw new Error(`${what}: the credential source has no string field ${fieldName}`);
    return token;
  }
  if (!raw) throw new Error(`${what}: the credential source is empty`);
  return raw;
}

/** POSTs a form to a Google token endpoint; `what` names the request in its errors. */
function oauthTokenRequest(url: string, form: Record<string, string>, what: string, secrets: string[]) {
  return oauthToken(url, form, { call: what, failed: what }, secrets);
}
