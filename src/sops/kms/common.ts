/**
 * What the cloud key services share: one HTTP call retried by util/retry.ts's policy, the decrypt request and
 * the key errors it ends in (naming the key but never a credential), a key service per master-key
 * kind, OAuth 2.0 token requests and a token cache, credential files, and RS256 JSON Web Tokens
 * signed with node:crypto.
 */
import { readFile } from 'node:fs/promises';
import { SopsError, type KeyService, type MasterKey, type MasterKeyKind } from '../types.js';
import { scrub } from '../../objects/secret.js';
import { againByStatus, HTTP_RETRY, retrying, type RetryPolicy } from '../../util/retry.js';

export interface HttpRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  body: string;
}

const TIMEOUT_MS = 30_000;
/** The retry policy of every key service's calls (util/retry.ts's); tests make its pauses instant. */
export const kmsRetry: { policy: RetryPolicy } = { policy: HTTP_RETRY };

/**
 * Sends one request with `fetch`, tried again (util/retry.ts) after a 429, a 5xx or a network error.
 * `what` names the call in a network error ("AWS KMS Decrypt"); a response of any status is returned.
 */
export async function send(url: string | URL, req: HttpRequest, what: string): Promise<HttpResponse> {
  try {
    return await retrying(
      async () => {
        const res = await fetch(url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        return { status: res.status, headers: res.headers, body: await res.text() };
      },
      { again: againByStatus, againAfter: () => true, policy: kmsRetry.policy },
    );
  } catch (err) {
    throw new Error(`${what}: ${hostOf(url)}: ${networkReason(err)}`, { cause: err });
  }
}

function hostOf(url: string | URL): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid URL';
  }
}

/** fetch says "fetch failed" and keeps the reason in `cause`: ECONNREFUSED, a DNS failure, a timeout. */
function networkReason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no response in ${TIMEOUT_MS / 1000}s`;
  const cause = e.cause;
  if (cause?.code) return `${e.message ?? 'request failed'} (${cause.code})`;
  return cause?.message ?? e.message ?? String(err);
}

/** Parses a JSON body, or returns undefined when it is not JSON. */
export function jsonOf(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** A plain object's string field, else undefined. */
export function str(o: unknown, key: string): string | undefined {
  if (typeof o !== 'object' || o === null) return undefined;
  const v = (o as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** A plain object's number field (or numeric string, as some token endpoints send), else undefined. */
export function num(o: unknown, key: string): number | undefined {
  if (typeof o !== 'object' || o === null) return undefined;
  const v = (o as Record<string, unknown>)[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return undefined;
}

/** A key service for the master keys of one kind; `open` recovers the data key of such a key. */
export function kindKeyService(
  name: string,
  kind: MasterKeyKind,
  open: (key: MasterKey) => Promise<Uint8Array>,
): KeyService {
  return {
    name,
    canOpen: (key: MasterKey) => key.kind === kind,
    decrypt: async (key: MasterKey) => (key.kind === kind ? open(key) : undefined),
  };
}

/** A master key's string field, else undefined (an empty string counts as absent). */
export function field(key: MasterKey, name: string): string | undefined {
  const v = key.fields[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * Replaces every occurrence of the given secrets in a text, so that a provider's error that echoes
 * part of a request cannot leak a credential into a log.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  return scrub(text, secrets);
}

/** Shortens a provider's message to one line of reasonable length. */
export function oneLine(text: string, max = 300): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

/**
 * The error of a key service: "<provider> key <key>: <what failed>". `cause` keeps the underlying
 * error for debugging; the message is what users see and holds no credential.
 */
export function keyError(provider: string, keyName: string, detail: string, cause?: unknown): SopsError {
  return new SopsError(`${provider} key ${keyName}: ${detail}`, cause === undefined ? undefined : { cause });
}

/**
 * Runs one step of opening a key (getting a token, calling the service); a failure becomes the
 * key's error with the step's message, so that every provider names the key the same way.
 */
export async function keyStep<T>(provider: string, keyName: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw keyError(provider, keyName, (err as Error).message, err);
  }
}

/** How a provider's decrypt request is named, and how its refusals read. */
export interface DecryptApi {
  /** The provider, as key errors name it ("AWS KMS"). */
  provider: string;
  /** Names the request in a network error ("AWS KMS Decrypt"). */
  call: string;
  /** The operation as a refusal names it: "<operation> failed: HTTP 403 (...)". */
  operation: string;
  /** The provider's error code and message, from a refusal's body. */
  errorOf(json: unknown, res: HttpResponse): { code?: string | undefined; message?: string | undefined };
}

/**
 * POSTs a decrypt request for the key `keyName` and returns the JSON answer. A network error or a
 * refusal becomes the key's error; `secrets` (what the request carries) never reach its message.
 */
export async function postDecrypt(
  api: DecryptApi,
  keyName: string,
  url: string | URL,
  req: { headers: Record<string, string>; body: string },
  secrets: readonly (string | undefined)[],
): Promise<unknown> {
  const res = await keyStep(api.provider, keyName, () => send(url, { method: 'POST', ...req }, api.call));
  const json = jsonOf(res.body);
  if (res.status !== 200) {
    const { code, message } = api.errorOf(json, res);
    const detail = httpDetail(res.status, code, message && redact(message, secrets));
    throw keyError(api.provider, keyName, `${api.operation} failed: ${detail}`);
  }
  return json;
}

/** "HTTP 403 (AccessDenied: not allowed)", or "HTTP 403" when the provider said nothing readable. */
export function httpDetail(status: number, code: string | undefined, message: string | undefined): string {
  const parts = [code, message].filter((p): p is string => !!p && p.trim() !== '').map((p) => oneLine(p));
  return parts.length ? `HTTP ${status} (${parts.join(': ')})` : `HTTP ${status}`;
}

export interface CachedToken {
  value: string;
  /** Epoch milliseconds; Infinity for a token whose lifetime is not known. */
  expiresAt: number;
}

/** Reuse a token until a minute before it expires. */
const EARLY_REFRESH_MS = 60_000;

/**
 * A cache of tokens by key, sharing one in-flight fetch per key, so that decrypting a hundred
 * documents asks the token endpoint once. A failed fetch is not cached.
 */
export class TokenCache<T extends { expiresAt: number } = CachedToken> {
  private readonly entries = new Map<string, Promise<T>>();

  async get(key: string, fetchToken: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      try {
        const t = await hit;
        if (t.expiresAt - EARLY_REFRESH_MS > Date.now()) return t;
      } catch {
        // fall through: fetch again
      }
      if (this.entries.get(key) !== hit) return this.get(key, fetchToken);
    }
    const p = fetchToken();
    this.entries.set(key, p);
    try {
      return await p;
    } catch (err) {
      if (this.entries.get(key) === p) this.entries.delete(key);
      throw err;
    }
  }
}

/** `expires_in` seconds from now, as epoch milliseconds; one hour when the server did not say. */
export function expiryFromNow(expiresIn: number | undefined): number {
  return Date.now() + (expiresIn ?? 3600) * 1000;
}

/** Strict standard base64 (with or without padding) to bytes; undefined when it is not base64. */
export function fromBase64(text: string): Uint8Array | undefined {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.replace(/=+$/, '').length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(t, 'base64'));
}

/** Strict base64url (unpadded, as SOPS writes Azure's ciphertext) to bytes; undefined when it is not. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  const t = text.trim().replace(/=+$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(t) || t.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(t, 'base64url'));
}

/** The 32-byte SOPS data key, or an error saying what came back instead. */
export function dataKeyOf(bytes: Uint8Array | undefined, provider: string, keyName: string): Uint8Array {
  if (!bytes) throw keyError(provider, keyName, 'the service returned a plaintext that is not base64');
  if (bytes.length !== 32) {
    throw keyError(provider, keyName, `the decrypted data key is ${bytes.length} bytes, not the 32 bytes SOPS uses`);
  }
  return bytes;
}

/** Reads a file the credentials name; an error says which setting named it (`what`) and why it failed. */
export async function readTextFile(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`${what}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Reads a token file (a projected OIDC token, a credential source), trimmed. */
export async function readTokenFile(path: string, what: string): Promise<string> {
  const text = (await readTextFile(path, what)).trim();
  if (!text) throw new Error(`${what}: cannot read ${path}: the file is empty`);
  return text;
}

/**
 * A GitHub Actions OIDC token for `audience`, from the runner's token endpoint
 * (`ACTIONS_ID_TOKEN_REQUEST_URL`, with `permissions: id-token: write`); undefined off Actions.
 */
export async function githubOidcToken(env: NodeJS.ProcessEnv, audience: string): Promise<string | undefined> {
  const url = env['ACTIONS_ID_TOKEN_REQUEST_URL'];
  const bearer = env['ACTIONS_ID_TOKEN_REQUEST_TOKEN'];
  if (!url || !bearer) return undefined;
  const u = new URL(url);
  u.searchParams.set('audience', audience);
  const res = await send(
    u,
    { method: 'GET', headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' } },
    'GitHub OIDC token',
  );
  const token = str(jsonOf(res.body), 'value');
  if (res.status !== 200 || !token) {
    throw new Error(`GitHub OIDC token: ${httpDetail(res.status, undefined, redact(res.body, [bearer]))}`);
  }
  return token;
}
