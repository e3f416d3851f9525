/**
 * An OCIRepository's artifact (source.toolkit.fluxcd.io/v1), pulled as source-controller pulls it,
 * through the registry's HTTP API v2 (Node's fetch):
 * - the URL `oci://host[:port]/repository` (no tag; a host without a dot, a port or `localhost` is
 *   Docker Hub's, as go-containerregistry reads it), over https, or http with spec.insecure;
 * - spec.ref: digest, else semver (the highest tag satisfying the range, among the tags that match
 *   spec.ref.semverFilter when set, semver.ts), else tag, else `latest`; the revision is named as Flux
 *   names it: `<tag>@sha256:<manifest digest>`, or `sha256:<digest>` for a digest;
 * - a single image manifest (OCI or Docker v2; an image index is refused), whose digest is checked
 *   when pinned; the layer spec.layerSelector.mediaType names (the first of that type), else the
 *   first layer; its sha256 digest and size are checked; it must be a gzip tarball;
 * - operation `extract` (the default): the layer is extracted (tar.ts; symlinks skipped, as
 *   source-controller's WithSkipSymlinks does) and spec.ignore is added to the root's .sourceignore:
 *   source-controller archives the extracted tree with the tree's .sourceignore patterns, then
 *   spec.ignore's, over its default exclusions, and the build here honours .sourceignore the same way
 *   (one nuance: here spec.ignore joins the root file's patterns, so a nested .sourceignore can
 *   re-include what it excludes, where in Flux spec.ignore's patterns come last);
 * - operation `copy`: source-controller stores the layer's tarball as it is as the artifact (no
 *   .sourceignore, no spec.ignore, no default exclusions), and kustomize-controller extracts that
 *   tarball to build: so the tree is the layer extracted the same way, spec.ignore is not applied,
 *   and `filtered: false` says that Flux applies no ignore rule to it.
 * Auth: anonymous first; on a 401, the challenge decides: `Bearer` (a token from its realm, asked
 * with the login when there is one) or `Basic`. The login: the registry-credentials input for the
 * host, else the kubernetes.io/dockerconfigjson Secret spec.secretRef names, else, for ghcr.io, the
 * GitHub token. Every secret value and header is masked. spec.provider other than generic (cloud
 * workload identity) and spec.verify (signature verification) are refused, not skipped.
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OCIRepositoryDef } from '../flux/source-defs.js';
import { basicAuth, redactUrl, type Fetched } from './git.js';
import { pickTag } from './semver.js';
import { DEFAULT_MAX_BYTES, extractTarGz, isGzip } from './tar.js';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
/** `flux push artifact`'s layer and config media types. */
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';

const MAX_MANIFEST_BYTES = 4 << 20;
const MAX_TAGS_PAGES = 100;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

export interface Login {
  username: string;
  password: string;
}

export interface OciFetchOptions {
  /** Registry host[:port] (lower case) → login, from the registry-credentials input. */
  credentials: Readonly<Record<string, Login>>;
  /** Used for ghcr.io when the input has no login for it. */
  githubToken?: string;
  /** Masks a value in every later log line. */
  secret: (value: string) => void;
  /** Reads a Secret's data, decoded (spec.secretRef, in the OCIRepository's namespace). */
  readSecret?: (namespace: string, name: string) => Promise<Record<string, string>>;
  /** For the whole pull (Flux's spec.timeout default: 60 s). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

/** A pulled artifact's tree; `filtered` is false when Flux applies no ignore rule to it (operation copy). */
export interface OciFetched extends Fetched {
  filtered: boolean;
}

/** Where a repository lives: its registry (host[:port]), the API's base URL, and the repository's name. */
export interface OciLocation {
  registry: string;
  base: string;
  repository: string;
}

/** spec.url as source-controller reads it; throws a sentence when it is not a repository URL. */
export function parseOciUrl(url: string, insecure = false): OciLocation {
  if (!url.startsWith('oci://')) throw new Error(`URL must be in format 'oci://<domain>/<org>/<repo>'`);
  const rest = url.slice('oci://'.length);
  if (rest.includes('@')) throw new Error('URL must not contain a digest; set spec.ref.digest instead');
  const slash = rest.indexOf('/');
  const first = slash === -1 ? rest : rest.slice(0, slash);
  const isRegistry = first.includes('.') || first.includes(':') || first === 'localhost';
  let registry = isRegistry ? first.toLowerCase() : 'index.docker.io';
  let repository = isRegistry ? (slash === -1 ? '' : rest.slice(slash + 1)) : rest;
  if (registry === 'docker.io') registry = 'index.docker.io';
  if (registry === 'index.docker.io' && repository !== '' && !repository.includes('/')) {
    repository = `library/${repository}`;
  }
  const tagged = /:([^/]*)$/.exec(repository);
  if (tagged) throw new Error(`URL must not contain a tag; remove ':${tagged[1]}'`);
  if (repository === '') throw new Error(`URL must name a repository: 'oci://<domain>/<org>/<repo>'`);
  if (!repository.split('/').every((c) => PATH_COMPONENT.test(c))) {
    throw new Error(`"${repository}" is not a valid repository name (lower-case letters, digits and . _ - between /)`);
  }
  if (!/^[a-z0-9.-]+(?::\d{1,5})?$|^\[[0-9a-f:.]+\](?::\d{1,5})?$/.test(registry)) {
    throw new Error(`"${registry}" is not a valid registry host`);
  }
  return { registry, base: `${insecure ? 'http' : 'https'}://${registry}`, repository };
}

/** What spec.ref asks for, in source-controller's order: digest, semver, tag, `latest`. */
export type OciRefPlan =
  | { kind: 'digest'; digest: string; describe: string }
  | { kind: 'semver'; range: string; filter?: string; describe: string }
  | { kind: 'tag'; tag: string; describe: string };

export function ociRefPlan(ref: OCIRepositoryDef['ref']): OciRefPlan {
  const r = ref ?? {};
  if (r.digest !== undefined) {
    if (!DIGEST.test(r.digest)) {
      throw new Error(`spec.ref.digest "${r.digest}" is not a sha256 digest (sha256:<64 hex digits>)`);
    }
    return { kind: 'digest', digest: r.digest, describe: `digest ${r.digest}` };
  }
  if (r.semver !== undefined) {
    const filter = r.semverFilter;
    return {
      kind: 'semver',
      range: r.semver,
      ...(filter !== undefined ? { filter } : {}),
      describe: `semver ${r.semver}${filter !== undefined ? ` (filter ${filter})` : ''}`,
    };
  }
  const tag = r.tag ?? 'latest';
  if (!TAG.test(tag)) throw new Error(`spec.ref.tag "${tag}" is not a valid tag`);
  return { kind: 'tag', tag, describe: `tag ${tag}` };
}

/** Flux's revision: `<tag>@<digest>`, or the digest alone when the artifact was pinned by digest. */
export function ociRevision(tag: string | undefined, digest: string): string {
  return tag === undefined ? digest : `${tag}@${digest}`;
}

/**
 * The tag spec.ref.semver chooses among `tags`: those matching `filter` (a regular expression,
 * unanchored, as Go's MatchString) when set, then the highest that satisfies the range.
 */
export function semverTag(tags: readonly string[], range: string, filter?: string): string | undefined {
  let candidates = tags;
  if (filter !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(filter);
    } catch (err) {
      throw new Error(
        `spec.ref.semverFilter "${filter}" is not a valid regular expression: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    candidates = tags.filter((t) => re.test(t));
  }
  return pickTag(candidates, range);
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

const DOCKER_HUB = ['index.docker.io', 'docker.io', 'registry-1.docker.io'];
const sameRegistry = (a: string, b: string) => a === b || (DOCKER_HUB.includes(a) && DOCKER_HUB.includes(b));

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

/** Where the login came from, for messages. */
interface LoginFor {
  login?: Login;
  /** `the registry-credentials input`, `spec.secretRef NAME`, `the GitHub token`. */
  from?: string;
  /** Why there is none (or what else was looked at), when a 401/403 needs saying it. */
  missing: string;
}

async function loginFor(def: OCIRepositoryDef, registry: string, opts: OciFetchOptions): Promise<LoginFor> {
  const mask = (login: Login) => {
    if (login.password !== '') opts.secret(login.password);
    opts.secret(basicAuth(login.username, login.password).slice('Basic '.length));
  };
  const inputKey = Object.keys(opts.credentials).find((k) => sameRegistry(k.toLowerCase(), registry));
  if (inputKey !== undefined) {
    const login = opts.credentials[inputKey]!;
    mask(login);
    return { login, from: 'the registry-credentials input', missing: '' };
  }
  const notes = [`no login for ${registry} in the registry-credentials input`];
  if (def.secretRef !== undefined) {
    const name = def.secretRef;
    try {
      if (opts.readSecret === undefined) throw new Error('Secrets are not read here');
      const data = await opts.readSecret(def.namespace, name);
      const json = data['.dockerconfigjson'];
      if (json === undefined)
        throw new Error('it has no .dockerconfigjson key (a kubernetes.io/dockerconfigjson Secret)');
      for (const m of json.matchAll(/"(?:password|auth|identitytoken)"\s*:\s*"([^"]+)"/g)) opts.secret(m[1]!);
      const login = dockerConfigLogin(json, registry);
      if (login !== undefined) {
        mask(login);
        return { login, from: `spec.secretRef ${name}`, missing: '' };
      }
      notes.push(`spec.secretRef ${name} has no auths entry for ${registry}`);
    } catch (err) {
      notes.push(`spec.secretRef ${name} could not be used: ${(err as Error).message}`);
    }
  } else notes.push('no spec.secretRef');
  if (registry === 'ghcr.io') {
    if (opts.githubToken !== undefined && opts.githubToken !== '') {
      const login = { username: 'x-access-token', password: opts.githubToken };
      mask(login);
      return { login, from: 'the GitHub token', missing: '' };
    }
    notes.push('no GitHub token');
  }
  return { missing: notes.join(', ') };
}

/** Raised for a 401 or 403 that a login might cure: the message is completed with the login's story. */
class AuthError extends Error {}

/** One registry's API for one repository, with the token or basic auth a challenge asked for. */
class RegistryClient {
  private authorization: string | undefined;
  private challenged = false;

  constructor(
    private readonly loc: OciLocation,
    private readonly who: LoginFor,
    private readonly secret: (v: string) => void,
    private readonly signal: AbortSignal,
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
      const res = await this.fetch(target, headers);
      if (res.status === 401 && attempt === 0 && !this.challenged) {
        const challenge = parseWwwAuthenticate(res.headers.get('www-authenticate'));
        await res.body?.cancel();
        await this.authenticate(challenge);
        continue;
      }
      if (!res.ok) {
        const text = (await readCapped(res, 64 << 10, what).catch(() => Buffer.alloc(0))).toString('utf8');
        const said = `${what}: ${registryError(res.status, text)}`;
        throw res.status === 401 || res.status === 403 ? new AuthError(said) : new Error(said);
      }
      return { res, body: await readCapped(res, max, what) };
    }
  }

  private async fetch(url: string, headers: Record<string, string>): Promise<Response> {
    try {
      return await fetch(url, { headers, signal: this.signal, redirect: 'follow' });
    } catch (err) {
      throw networkError(err, url);
    }
  }

  /** Answers a 401's challenge: a bearer token from its realm, or basic auth, with the login when there is one. */
  private async authenticate(challenge: Challenge | undefined): Promise<void> {
    this.challenged = true;
    const login = this.who.login;
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
    const res = await this.fetch(realm.toString(), headers);
    const body = (await readCapped(res, 1 << 20, 'the token')).toString('utf8');
    if (!res.ok) {
      const said = `the token service ${realm.origin}${realm.pathname} refused: ${registryError(res.status, body)}`;
      throw res.status === 401 || res.status === 403 ? new AuthError(said) : new Error(said);
    }
    let token: unknown;
    try {
      const json = JSON.parse(body) as { token?: unknown; access_token?: unknown };
      token = json.token ?? json.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== 'string' || token === '') {
      throw new Error(`the token service ${realm.origin}${realm.pathname} answered no token`);
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
      const { res, body } = await this.get(next, 'application/json', 16 << 20, 'listing the tags');
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

async function readCapped(res: Response, max: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new Error(`${what}: the registry answered ${declared} bytes, more than the ${max} allowed`);
  }
  if (res.body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel();
      throw new Error(`${what}: the registry answered more than the ${max} bytes allowed`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function networkError(err: unknown, url: string): Error {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return new Error(`${redactUrl(url)} did not answer in time`);
  const cause = e.cause?.message ?? e.message;
  return new Error(`${redactUrl(url)}: ${cause}`, { cause: err });
}

/** Pulls `def`'s artifact into a new temporary directory; throws a sentence naming it on failure. */
export async function fetchOCIRepository(def: OCIRepositoryDef, opts: OciFetchOptions): Promise<OciFetched> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const signal = AbortSignal.timeout(timeoutMs);
  let describe = 'spec.ref';
  let hint = '';
  let root: string | undefined;
  try {
    const plan = ociRefPlan(def.ref);
    describe = plan.describe;
    if (def.provider !== undefined && def.provider !== 'generic') {
      throw new Error(
        `spec.provider ${def.provider} (cloud workload identity) is not supported here: use provider generic with the registry-credentials input or a dockerconfigjson spec.secretRef`,
      );
    }
    if (def.verify === true) {
      throw new Error(
        'spec.verify is set, and signature verification is not done here: the artifact is not pulled rather than used unverified',
      );
    }
    const loc = parseOciUrl(def.url, def.insecure === true);
    const who = await loginFor(def, loc.registry, opts);
    hint = who.login !== undefined ? `the login from ${who.from} for ${loc.registry} was refused` : who.missing;
    const client = new RegistryClient(loc, who, opts.secret, signal);

    let tag: string | undefined;
    let reference: string;
    if (plan.kind === 'digest') reference = plan.digest;
    else if (plan.kind === 'tag') reference = tag = plan.tag;
    else {
      const tags = await client.tags();
      tag = semverTag(tags, plan.range, plan.filter);
      if (tag === undefined) {
        const some = tags.slice(0, 10).join(', ') + (tags.length > 10 ? ', …' : '');
        throw new Error(`no match found for semver: ${plan.range} (tags: ${some || 'none'})`);
      }
      describe = `tag ${tag} (${plan.describe})`;
      opts.log?.(`OCIRepository ${def.namespace}/${def.name}: ${plan.describe} chose tag ${tag}`);
      reference = tag;
    }

    const accept = [OCI_MANIFEST, DOCKER_MANIFEST, OCI_INDEX, DOCKER_LIST].join(', ');
    const what = tag !== undefined ? `the manifest of tag "${tag}"` : `the manifest ${reference}`;
    const { res, body } = await client.get(
      `/v2/${loc.repository}/manifests/${reference}`,
      accept,
      MAX_MANIFEST_BYTES,
      what,
    );
    const digest = sha256Digest(body);
    const said = res.headers.get('docker-content-digest');
    if (said !== null && said.startsWith('sha256:') && said !== digest) {
      throw new Error(`${what}: the registry says its digest is ${said}, but its content's is ${digest}`);
    }
    if (plan.kind === 'digest' && digest !== plan.digest) {
      throw new Error(`${what}: the registry answered a manifest whose digest is ${digest}`);
    }
    const manifest = parseManifest(body, res.headers.get('content-type'));
    const layer = selectLayer(manifest, def.layerSelector?.mediaType);
    if (!DIGEST.test(layer.digest)) throw new Error(`the layer's digest ${layer.digest} is not a sha256 digest`);
    if (!Number.isSafeInteger(layer.size) || layer.size < 0 || layer.size > DEFAULT_MAX_BYTES) {
      throw new Error(`the layer's size ${layer.size} is outside 0..${DEFAULT_MAX_BYTES} bytes`);
    }
    const blob = (
      await client.get(
        `/v2/${loc.repository}/blobs/${layer.digest}`,
        undefined,
        layer.size,
        `the layer ${layer.digest}`,
      )
    ).body;
    if (blob.length !== layer.size || sha256Digest(blob) !== layer.digest) {
      throw new Error(`the layer ${layer.digest} downloaded does not match its digest or size (${blob.length} bytes)`);
    }
    if (!isGzip(blob)) {
      throw new Error(`the layer ${layer.digest} (${layer.mediaType}) is not gzip-compressed: Flux requires tar+gzip`);
    }
    root = await mkdtemp(join(tmpdir(), 'kr-oci-pull-'));
    try {
      await extractTarGz(blob, root);
    } catch (err) {
      throw new Error(`failed to extract layer contents from artifact: ${(err as Error).message}`, { cause: err });
    }
    const copy = def.layerSelector?.operation === 'copy';
    if (!copy && def.ignore !== undefined) await appendFile(join(root, '.sourceignore'), `\n${def.ignore}\n`);
    const revision = ociRevision(tag, digest);
    opts.log?.(
      `OCIRepository ${def.namespace}/${def.name}: pulled ${revision} (${layer.mediaType}, ${layer.size} bytes)`,
    );
    const dir = root;
    return { root: dir, revision, cleanup: () => rm(dir, { recursive: true, force: true }), filtered: !copy };
  } catch (err) {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
    const auth = err instanceof AuthError && hint !== '' ? ` (${hint})` : '';
    const what = `OCIRepository ${def.namespace}/${def.name} (${def.file}): ${redactUrl(def.url)} at ${describe}`;
    const said = (err as Error).message;
    const message = signal.aborted ? `timed out after ${timeoutMs / 1000}s (${said})` : said;
    throw new Error(`fetching ${what} failed: ${message}${auth}`, { cause: err });
  }
}
