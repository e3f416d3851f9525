/**
 * An OCIRepository's artifact (source.toolkit.fluxcd.io/v1), pulled as source-controller pulls it,
 * through the registry's HTTP API v2 (registry.ts, over Node's fetch):
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
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RE2JS } from 're2js';
import type { OCIRepositoryDef } from '../flux/source-defs.js';
import type { RetryPolicy } from '../util/retry.js';
import { scratchDir } from '../util/scratch.js';
import { MAX_MANIFEST_BYTES } from './bounded.js';
import type { ExtractBudget } from './budget.js';
import { basicAuth, redactUrl, type Fetched } from './git.js';
import {
  AuthError,
  DOCKER_LIST,
  DOCKER_MANIFEST,
  dockerConfigLogin,
  OCI_INDEX,
  OCI_MANIFEST,
  parseManifest,
  RegistryClient,
  sameRegistry,
  selectLayer,
  sha256Digest,
  type Descriptor,
  type ImageManifest,
  type Login,
  type OciLocation,
} from './registry.js';
import { pickTag } from './semver.js';
import { DEFAULT_MAX_BYTES, extractTarGz, isGzip } from './tar.js';

const DIGEST = /^sha256:[a-f0-9]{64}$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

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
  /** The run's budget for extracted files, shared with every other source (budget.ts). */
  budget?: ExtractBudget;
  /**
   * Throws when a URL the registry sends the pull to (its token realm, a redirect) may not be
   * reached: the address rule of the source itself (guarded.ts).
   */
  checkUrl?: (url: string) => Promise<void>;
  /** Why no credential at all may be used (the trust rule, trust.ts): the pull is anonymous. */
  anonymous?: string;
  /** How often a request is tried (util/retry.ts's HTTP_RETRY by default). */
  retry?: RetryPolicy;
}

/** A pulled artifact's tree; `filtered` is false when Flux applies no ignore rule to it (operation copy). */
export interface OciFetched extends Fetched {
  filtered: boolean;
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
 * The tag spec.ref.semver chooses among `tags`: those matching `filter` (a Go regular expression,
 * unanchored, as Go's MatchString, matched in linear time by re2js) when set, then the highest that
 * satisfies the range.
 */
export function semverTag(tags: readonly string[], range: string, filter?: string): string | undefined {
  let candidates = tags;
  if (filter !== undefined) {
    let re: RE2JS;
    try {
      re = RE2JS.compile(filter);
    } catch (err) {
      throw new Error(
        `spec.ref.semverFilter "${filter}" is not a valid regular expression (Go syntax): ${(err as Error).message}`,
        { cause: err },
      );
    }
    candidates = tags.filter((t) => re.test(t));
  }
  return pickTag(candidates, range);
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
  if (opts.anonymous !== undefined) return { missing: `no login was used: ${opts.anonymous}` };
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

/** One pull of one OCIRepository: what a failure says, filled in as the steps learn it. */
interface Pull {
  /** What spec.ref chose, as said: `tag v1`, `tag v1.2.0 (semver ^1.0)`, `digest sha256:…`. */
  describe: string;
  /** Which login was refused, or why there was none: said after an AuthError. */
  hint: string;
  scratch?: { dir: string; remove: () => Promise<void> };
}

/** The manifest a reference names: its digest (checked), and the manifest read. */
interface PulledManifest {
  tag: string | undefined;
  digest: string;
  manifest: ImageManifest;
}

/** Pulls `def`'s artifact into a new temporary directory; throws a sentence naming it on failure. */
export async function fetchOCIRepository(def: OCIRepositoryDef, opts: OciFetchOptions): Promise<OciFetched> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const signal = AbortSignal.timeout(timeoutMs);
  const pull: Pull = { describe: 'spec.ref', hint: '' };
  try {
    const plan = ociRefPlan(def.ref);
    pull.describe = plan.describe;
    refuseUnsupported(def);
    const loc = parseOciUrl(def.url, def.insecure === true);
    const client = await connect(def, loc, opts, signal, pull);
    const reference = await chooseReference(client, plan, def, opts, pull);
    const { tag, digest, manifest } = await getManifest(client, loc, reference, plan);
    const { layer, blob } = await getLayer(client, loc, manifest, def);
    pull.scratch = await scratchDir('kr-oci-pull-');
    const root = pull.scratch.dir;
    await extractLayer(blob, root, `OCIRepository ${def.namespace}/${def.name}, layer ${layer.digest}`, opts.budget);
    const copy = def.layerSelector?.operation === 'copy';
    if (!copy && def.ignore !== undefined) await appendFile(join(root, '.sourceignore'), `\n${def.ignore}\n`);
    const revision = ociRevision(tag, digest);
    opts.log?.(
      `OCIRepository ${def.namespace}/${def.name}: pulled ${revision} (${layer.mediaType}, ${layer.size} bytes)`,
    );
    return { root, revision, cleanup: pull.scratch.remove, filtered: !copy };
  } catch (err) {
    await pull.scratch?.remove();
    throw pullError(def, pull, err, signal.aborted ? timeoutMs : undefined);
  }
}

/** spec.provider other than generic and spec.verify are refused, not skipped. */
function refuseUnsupported(def: OCIRepositoryDef): void {
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
}

/** The registry's client, with the login for its host when there is one (which `pull.hint` names). */
async function connect(
  def: OCIRepositoryDef,
  loc: OciLocation,
  opts: OciFetchOptions,
  signal: AbortSignal,
  pull: Pull,
): Promise<RegistryClient> {
  const who = await loginFor(def, loc.registry, opts);
  pull.hint = who.login !== undefined ? `the login from ${who.from} for ${loc.registry} was refused` : who.missing;
  return new RegistryClient(loc, who.login, opts.secret, signal, opts.checkUrl, opts.retry);
}

/** The tag or digest to pull: spec.ref's, or for semver the highest matching tag of the repository. */
async function chooseReference(
  client: RegistryClient,
  plan: OciRefPlan,
  def: OCIRepositoryDef,
  opts: OciFetchOptions,
  pull: Pull,
): Promise<{ tag?: string; reference: string }> {
  if (plan.kind === 'digest') return { reference: plan.digest };
  if (plan.kind === 'tag') return { tag: plan.tag, reference: plan.tag };
  const tags = await client.tags();
  const tag = semverTag(tags, plan.range, plan.filter);
  if (tag === undefined) {
    const some = tags.slice(0, 10).join(', ') + (tags.length > 10 ? ', …' : '');
    throw new Error(`no match found for semver: ${plan.range} (tags: ${some || 'none'})`);
  }
  pull.describe = `tag ${tag} (${plan.describe})`;
  opts.log?.(`OCIRepository ${def.namespace}/${def.name}: ${plan.describe} chose tag ${tag}`);
  return { tag, reference: tag };
}

/** The manifest `reference` names, its digest checked against the registry's word and a pinned digest. */
async function getManifest(
  client: RegistryClient,
  loc: OciLocation,
  { tag, reference }: { tag?: string; reference: string },
  plan: OciRefPlan,
): Promise<PulledManifest> {
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
  return { tag, digest, manifest: parseManifest(body, res.headers.get('content-type')) };
}

/** The layer spec.layerSelector chooses, downloaded: its digest and size checked, and gzip. */
async function getLayer(
  client: RegistryClient,
  loc: OciLocation,
  manifest: ImageManifest,
  def: OCIRepositoryDef,
): Promise<{ layer: Descriptor; blob: Buffer }> {
  const layer = selectLayer(manifest, def.layerSelector?.mediaType);
  if (!DIGEST.test(layer.digest)) throw new Error(`the layer's digest ${layer.digest} is not a sha256 digest`);
  if (!Number.isSafeInteger(layer.size) || layer.size < 0 || layer.size > DEFAULT_MAX_BYTES) {
    throw new Error(`the layer's size ${layer.size} is outside 0..${DEFAULT_MAX_BYTES} bytes`);
  }
  const path = `/v2/${loc.repository}/blobs/${layer.digest}`;
  const blob = (await client.get(path, undefined, layer.size, `the layer ${layer.digest}`)).body;
  if (blob.length !== layer.size || sha256Digest(blob) !== layer.digest) {
    throw new Error(`the layer ${layer.digest} downloaded does not match its digest or size (${blob.length} bytes)`);
  }
  if (!isGzip(blob)) {
    throw new Error(`the layer ${layer.digest} (${layer.mediaType}) is not gzip-compressed: Flux requires tar+gzip`);
  }
  return { layer, blob };
}

/** Extracts the layer into `root`, its files taken from the run's budget under `name`. */
async function extractLayer(
  blob: Buffer,
  root: string,
  name: string,
  budget: ExtractBudget | undefined,
): Promise<void> {
  const limits = budget
    ? {
        spend: (bytes: number, files: number) => {
          budget.take(bytes, files, name);
        },
      }
    : {};
  try {
    await extractTarGz(blob, root, limits);
  } catch (err) {
    throw new Error(`failed to extract layer contents from artifact: ${(err as Error).message}`, { cause: err });
  }
}

/** A failed pull as one sentence: the OCIRepository, its URL and reference, what failed, and after a refusal which login. */
function pullError(def: OCIRepositoryDef, pull: Pull, err: unknown, timedOutMs: number | undefined): Error {
  const auth = err instanceof AuthError && pull.hint !== '' ? ` (${pull.hint})` : '';
  const what = `OCIRepository ${def.namespace}/${def.name} (${def.file}): ${redactUrl(def.url)} at ${pull.describe}`;
  const said = (err as Error).message;
  const message = timedOutMs !== undefined ? `timed out after ${timedOutMs / 1000}s (${said})` : said;
  return new Error(`fetching ${what} failed: ${message}${auth}`, { cause: err });
}
