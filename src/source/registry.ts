/**
 * An OCI registry's HTTP API v2 (the distribution spec), as a pull of one repository needs it,
 * through Node's fetch: the manifest media types (OCI and Docker v2, their index and list, and
 * `flux push artifact`'s); a client for one repository that goes anonymous first and answers a 401's
 * `WWW-Authenticate` challenge once (a `Bearer` token from the challenge's realm, asked with the
 * login when there is one, or `Basic`), tries again after a network error, a 429 or a 5xx (util/retry.ts's
 * policy, Retry-After honoured within its bound), reads every answer under a size cap, follows the tags list's
 * `Link` pagination on the registry's own origin, and says a registry's error answer as a phrase;
 * the login for a host in a `.dockerconfigjson`; a manifest read as a single image manifest, and
 * source-controller's layer choice; sha256 digests. Tokens are masked as soon as they are known.
 * The OCIRepository that names what to pull, and the pull itself, are oci.ts's.
 */
import { createHash } from 'node:crypto';
import { MAX_LIST_BYTES, MAX_TOKEN_BYTES, readBounded, readTruncated } from './bounded.js';
import { basicAuth, redactUrl } from './git.js';
import { againByStatus, HTTP_RETRY, retrying, type RetryPolicy } from '../util/retry.js';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
/** `flux push artifact`'s layer and config media types. */
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';

const MAX_TAGS_PAGES = 100;

/** A login to a registry: a user name and its password (or token). */
export interface Login {
  username: string;
  password: string;
}

/** Where a repository lives: its registry (host[:port]), the API's base URL, and the repository's name. */
export interface OciLocation {
  registry: string;
  base: string;
  repository: string;
}

/** A `WWW-Authenticate` challenge: its scheme (lower case) and parameters (keys lower case). */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** The first challenge of a `WWW-Authenticate` header, or undefined when there is none. */
export function parseWwwAuthenticate(header: string | null | undefined): Challenge | undefined {
  if (header === null || header === undefined) return undefined;
  const m = /^\s*([A-Za-z][\w!#$%&'*+.^`|~-]*)(?:\s+|$)/.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const rest = header.slice(m[0].length);
  let i = 0;
  while (i < rest.length) {
    const kv = /^[\s,]*([\w!#$%&'*+.^`|~-]+)\s*=\s*/.exec(rest.slice(i));
    if (!kv) break;
    i += kv[0].length;
    let value = '';
    if (rest[i] === '"') {
      i++;
      while (i < rest.length && rest[i] !== '"') {
        if (rest[i] === '\\' && i + 1 < rest.length) i++;
        value += rest[i]!;
        i++;
      }
      i++; // the closing quote
    } else {
      const token = /^[^\s,]*/.exec(rest.slice(i))![0];
      value = token;
      i += token.length;
    }
    params[kv[1]!.toLowerCase()] = value;
  }
  return { scheme: m[1]!.toLowerCase(), params };
}

/** `host` as a docker config's `auths` key names it (`https://host/v1/`, `host`, …), lower case. */
function authsKeyHost(key: string): string {
  return key
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .replace(/\/.*$/, '')
    .toLowerCase();
}

/** Docker Hub's names; any of them is the same registry. */
const DOCKER_HUB = ['index.docker.io', 'docker.io', 'registry-1.docker.io'];
/** Whether two hosts (lower case) are the same registry. */
export const sameRegistry = (a: string, b: string) => a === b || (DOCKER_HUB.includes(a) && DOCKER_HUB.includes(b));

/**
 * The login for `host` in a `.dockerconfigjson` (`auths[host]`: `username` and `password`, or `auth`,
 * base64 of `user:password`); undefined when none. Throws a sentence when the JSON is not a docker
 * config or the entry holds only an identity token (an OAuth refresh token, not handled here).
 */
export function dockerConfigLogin(json: string, host: string): Login | undefined {
  let config: unknown;
  try {
    config = JSON.parse(json);
  } catch {
    throw new Error('.dockerconfigjson is not valid JSON');
  }
  const auths =
    typeof config === 'object' && config !== null ? (config as Record<string, unknown>)['auths'] : undefined;
  if (typeof auths !== 'object' || auths === null) throw new Error('.dockerconfigjson has no "auths" object');
  const want = host.toLowerCase();
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (!sameRegistry(authsKeyHost(key), want) || typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const str = (k: string) => (typeof e[k] === 'string' ? e[k] : '');
    if (str('username') !== '' || str('password') !== '')
      return { username: str('username'), password: str('password') };
    if (str('auth') !== '') {
      const decoded = Buffer.from(str('auth'), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon === -1) throw new Error(`.dockerconfigjson's auth for ${key} is not base64 of USERNAME:PASSWORD`);
      return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    if (str('identitytoken') !== '') {
      throw new Error(`.dockerconfigjson's entry for ${key} holds only an identitytoken, which is not supported here`);
    }
  }
  return undefined;
}

/** A content descriptor of a manifest. */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

/** An image manifest, as far as a pull needs it. */
export interface ImageManifest {
  mediaType: string;
  config?: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

function descriptorOf(v: unknown, where: string): Descriptor {
  const d = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const { mediaType, digest, size } = d;
  if (typeof mediaType !== 'string' || typeof digest !== 'string' || typeof size !== 'number') {
    throw new Error(`the manifest's ${where} is not a descriptor (mediaType, digest, size)`);
  }
  return { mediaType, digest, size };
}

/**
 * The image manifest of a registry's answer (its body and Content-Type); throws a sentence for an
 * image index or a manifest list (Flux artifacts are single manifests) and for anything else.
 */
export function parseManifest(body: Buffer, contentType: string | null): ImageManifest {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new Error('the registry answered a manifest that is not JSON');
  }
  const m = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const header = (contentType ?? '').split(';')[0]!.trim();
  const mediaType = typeof m['mediaType'] === 'string' ? m['mediaType'] : header;
  if (mediaType === OCI_INDEX || mediaType === DOCKER_LIST || Array.isArray(m['manifests'])) {
    throw new Error(
      `the reference is an image index (${mediaType || 'manifests list'}), not a single manifest: Flux artifacts (flux push artifact) are single OCI manifests; point spec.ref at one of its manifests`,
    );
  }
  if (m['schemaVersion'] !== 2 || (mediaType !== '' && mediaType !== OCI_MANIFEST && mediaType !== DOCKER_MANIFEST)) {
    throw new Error(
      `unsupported manifest (media type ${mediaType || 'unknown'}, schemaVersion ${String(m['schemaVersion'])})`,
    );
  }
  if (!Array.isArray(m['layers'])) throw new Error('the manifest has no layers list');
  const layers = m['layers'].map((l: unknown, i) => descriptorOf(l, `layers[${i}]`));
  const annotations = m['annotations'];
  return {
    mediaType: mediaType || OCI_MANIFEST,
    ...(m['config'] !== undefined ? { config: descriptorOf(m['config'], 'config') } : {}),
    layers,
    ...(typeof annotations === 'object' && annotations !== null
      ? { annotations: annotations as Record<string, string> }
      : {}),
  };
}

/** source-controller's choice: the first layer of `mediaType` when set, else the first layer. */
export function selectLayer(manifest: ImageManifest, mediaType?: string): Descriptor {
  if (manifest.layers.length === 0) throw new Error('no layers found in artifact');
  if (mediaType === undefined || mediaType === '') return manifest.layers[0]!;
  const layer = manifest.layers.find((l) => l.mediaType === mediaType);
  if (layer === undefined) {
    const types = [...new Set(manifest.layers.map((l) => l.mediaType))].join(', ');
    throw new Error(`failed to find layer with media type '${mediaType}' in artifact (its layers: ${types})`);
  }
  return layer;
}

/** `sha256:<hex>` of `data`. */
export const sha256Digest = (data: Uint8Array): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** A registry's error answer as a phrase: `HTTP 404: manifest unknown (MANIFEST_UNKNOWN)`. */
export function registryError(status: number, body: string): string {
  let said = '';
  try {
    const errors = (JSON.parse(body) as { errors?: { code?: unknown; message?: unknown }[] }).errors;
    const first = Array.isArray(errors) ? errors[0] : undefined;
    if (first !== undefined) {
      const message = typeof first.message === 'string' ? first.message : '';
      const code = typeof first.code === 'string' ? first.code : '';
      said = [message, code !== '' ? `(${code})` : ''].filter(Boolean).join(' ');
    }
  } catch {
    said = body.trim().split('\n')[0]!.slice(0, 200);
  }
  return `HTTP ${status}${said !== '' ? `: ${said}` : ''}`;
}

/** Raised for a 401 or 403 that a login might cure: the message is completed with the login's story. */
export class AuthError extends Error {}

const MAX_REDIRECTS = 10;

/** One registry's API for one repository, with the token or basic auth a challenge asked for. */
export class RegistryClient {
  private authorization: string | undefined;
  private challenged = false;

  constructor(
    private readonly loc: OciLocation,
    private readonly login: Login | undefined,
    private readonly secret: (v: string) => void,
    private readonly signal: AbortSignal,
    private readonly checkUrl: (url: string) => Promise<void> = () => Promise.resolve(),
    private readonly retry: RetryPolicy = HTTP_RETRY,
  ) {}

  /** GET `url` (a path under /v2/<repository>/, or an absolute URL), authenticating once when challenged. */
  async get(
    url: string,
    accept: string | undefined,
    max: number,
    what: string,
  ): Promise<{ res: Response; body: Buffer }> {
    const target = url.startsWith('/') ? `${this.loc.base}${url}` : url;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {};
      if (accept !== undefined) headers['accept'] = accept;
      if (this.authorization !== undefined) headers['authorization'] = this.authorization;
      const res = await this.send(target, headers);
      if (res.status === 401 && attempt === 0 && !this.challenged) {
        const challenge = parseWwwAuthenticate(res.headers.get('www-authenticate'));
        await res.body?.cancel();
        await this.authenticate(challenge);
        continue;
      }
      if (!res.ok) {
        const text = await readTruncated(res);
        const said = `${what}: ${registryError(res.status, text)}`;
        throw res.status === 401 || res.status === 403 ? new AuthError(said) : new Error(said);
      }
      return { res, body: await readBounded(res, max, what) };
    }
  }

  /**
   * GET `url` as `fetch` does, tried again (util/retry.ts) after a network error or an answer worth
   * it (a 429 or a 5xx), after its Retry-After (bounded) or the backoff.
   */
  private send(url: string, headers: Record<string, string>): Promise<Response> {
    return retrying(() => this.fetch(url, headers), {
      again: againByStatus,
      againAfter: (err) => err instanceof NetworkFailure,
      drop: async (res) => res.body?.cancel(),
      signal: this.signal,
      policy: this.retry,
    });
  }

  /**
   * GET `url`, following redirects (blobs are often served elsewhere) one at a time: each hop's
   * host is checked as the source's own is (the registry, chosen by the tree, must not send the
   * runner to its own services), and the Authorization header goes only to the origin it was meant for.
   */
  private async fetch(url: string, headers: Record<string, string>): Promise<Response> {
    let at = url;
    let sent = headers;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      await this.checkUrl(at);
      let res: Response;
      try {
        res = await fetch(at, { headers: sent, signal: this.signal, redirect: 'manual' });
      } catch (err) {
        throw networkError(err, at);
      }
      const location = res.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(res.status) || location === null) return res;
      await res.body?.cancel();
      const next = new URL(location, at);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') {
        throw new Error(`the registry redirected to ${next.protocol} (only http and https are followed)`);
      }
      if (next.origin !== new URL(at).origin) {
        const { authorization: _dropped, ...rest } = sent;
        sent = rest;
      }
      at = next.toString();
    }
    throw new Error(`the registry redirected more than ${MAX_REDIRECTS} times (${new URL(url).origin})`);
  }

  /** Answers a 401's challenge: a bearer token from its realm, or basic auth, with the login when there is one. */
  private async authenticate(challenge: Challenge | undefined): Promise<void> {
    this.challenged = true;
    const login = this.login;
    if (challenge?.scheme === 'basic') {
      if (login === undefined) throw new AuthError('the registry asks for basic auth');
      this.authorization = basicAuth(login.username, login.password);
      return;
    }
    if (challenge?.scheme !== 'bearer' || challenge.params['realm'] === undefined) {
      throw new AuthError(
        `the registry answered 401 with ${challenge ? `a ${challenge.scheme} challenge` : 'no WWW-Authenticate challenge'} this client cannot answer`,
      );
    }
    let realm: URL;
    try {
      realm = new URL(challenge.params['realm']);
    } catch {
      throw new Error(`the registry's token realm "${challenge.params['realm']}" is not a URL`);
    }
    if (realm.protocol !== 'https:' && realm.protocol !== 'http:') {
      throw new Error(`the registry's token realm ${realm.origin} is not http(s)`);
    }
    if (login !== undefined && realm.protocol === 'http:' && this.loc.base.startsWith('https:')) {
      throw new Error(`refusing to send the login to the token realm ${realm.origin} over plain http`);
    }
    if (challenge.params['service'] !== undefined) realm.searchParams.set('service', challenge.params['service']);
    realm.searchParams.set('scope', challenge.params['scope'] ?? `repository:${this.loc.repository}:pull`);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (login !== undefined) headers['authorization'] = basicAuth(login.username, login.password);
    const res = await this.send(realm.toString(), headers);
    const service = `the token service ${realm.origin}${realm.pathname}`;
    if (!res.ok) {
      const said = `${service} refused: ${registryError(res.status, await readTruncated(res))}`;
      throw res.status === 401 || res.status === 403 ? new AuthError(said) : new Error(said);
    }
    const body = (await readBounded(res, MAX_TOKEN_BYTES, service)).toString('utf8');
    let token: unknown;
    try {
      const json = JSON.parse(body) as { token?: unknown; access_token?: unknown };
      token = json.token ?? json.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || token === '') {
      throw new Error(`${service} answered no token`);
    }
    this.secret(token);
    this.authorization = `Bearer ${token}`;
  }

  /** Every tag of the repository, following `Link` pagination. */
  async tags(): Promise<string[]> {
    const tags: string[] = [];
    let next: string | undefined = `/v2/${this.loc.repository}/tags/list?n=1000`;
    for (let page = 0; next !== undefined; page++) {
      if (page >= MAX_TAGS_PAGES) throw new Error(`the tags list has more than ${MAX_TAGS_PAGES} pages`);
      const { res, body } = await this.get(next, 'application/json', MAX_LIST_BYTES, 'listing the tags');
      let list: unknown;
      try {
        list = (JSON.parse(body.toString('utf8')) as { tags?: unknown }).tags;
      } catch {
        throw new Error('listing the tags: the registry answered no JSON');
      }
      if (Array.isArray(list)) tags.push(...list.filter((t): t is string => typeof t === 'string'));
      next = nextLink(res.headers.get('link'), res.url || `${this.loc.base}${next}`, this.loc.base);
    }
    return tags;
  }
}

/** The `rel="next"` URL of a `Link` header, resolved against `url`; only on the registry's own origin. */
export function nextLink(link: string | null, url: string, base: string): string | undefined {
  if (link === null) return undefined;
  for (const part of link.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m || !/(?:^|;)\s*rel\s*=\s*"?next"?\s*(?:;|$)/i.test(m[2]!)) continue;
    const next = new URL(m[1]!, url);
    if (next.origin !== new URL(base).origin)
      throw new Error(`the tags list's next page ${next.origin} is on another host`);
    return next.toString();
  }
  return undefined;
}

/** The registry (or a host it redirected to) could not be reached: worth another try. */
class NetworkFailure extends Error {}

function networkError(err: unknown, url: string): Error {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return new Error(`${redactUrl(url)} did not answer in time`);
  const cause = e.cause?.message ?? e.message;
  return new NetworkFailure(`${redactUrl(url)}: ${cause}`, { cause: err });
}
