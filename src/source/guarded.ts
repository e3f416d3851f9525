/**
 * The fetchers of a run behind the two rules that keep a tree from choosing where the runner
 * reaches and what it sends (the edge: DNS and git): each source's address read once and refused
 * when parsers could disagree or it is on this machine or its metadata service (address.ts), and
 * its credentials used only as the trust rule allows (trust.ts), else it is fetched anonymously.
 */
import { lookup } from 'node:dns/promises';
import type { Settings } from '../options/settings.js';
import { privateHostProblem, sourceAddress } from './address.js';
import { baseScopes } from './base-sources.js';
import { resolveBase, type BaseCommit } from './trust-base.js';
import type { BucketDef, GitRepositoryDef, OCIRepositoryDef } from '../flux/source-defs.js';
import type { Fetched } from './git.js';
import { credentialVerdict, sourceName, type FetchedDef, type TreeTrust } from './trust.js';

/** How each kind of source is fetched (the edge: git, a registry, an object store). */
export interface Fetchers {
  GitRepository: (def: GitRepositoryDef) => Promise<Fetched>;
  /** `filtered: false`: the layer was kept as it is (operation copy), and Flux filters nothing out of it. */
  OCIRepository: (def: OCIRepositoryDef) => Promise<Fetched & { filtered?: boolean }>;
  Bucket: (def: BucketDef) => Promise<Fetched>;
}

/**
 * Throws when `url` (a URL a source's server sends the run to: a registry's token realm, a
 * redirect) names a host the source's own address could not: on this machine or its metadata
 * service, unless allowed.
 */
export async function checkHopUrl(
  def: FetchedDef,
  url: string,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<string[]> = systemResolve,
): Promise<void> {
  if (allowPrivate) return;
  const { hostname, origin } = new URL(url);
  await refusePrivate(
    whereOf(def),
    hostname.replace(/^\[|\]$/g, ''),
    `its server sent the fetch to ${origin}:`,
    resolve,
  );
}

/**
 * checkHopUrl for every URL of one source's fetch, each origin checked (and resolved) once: a
 * registry sends every manifest and blob request through it.
 */
export function hopChecker(def: FetchedDef, allowPrivate: boolean): (url: string) => Promise<void> {
  const checked = new Map<string, Promise<void>>();
  return (url) => {
    const origin = new URL(url).origin;
    let check = checked.get(origin);
    if (check === undefined) {
      check = checkHopUrl(def, url, allowPrivate);
      checked.set(origin, check);
    }
    return check;
  };
}

/** `GitRepository flux-system/apps (clusters/prod/apps.yaml)`, for errors. */
const whereOf = (def: FetchedDef): string => `${sourceName(def)} (${def.file})`;

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true })).map((a) => a.address);
}

const ALLOW = 'set the input allow-private-source-hosts (--allow-private-source-hosts) to allow it';

/** Throws when `host`, literally or as resolved, is on this machine or its metadata service. */
async function refusePrivate(
  where: string,
  host: string,
  what: string,
  resolve: (host: string) => Promise<string[]>,
): Promise<void> {
  const literal = privateHostProblem(host);
  if (literal !== undefined) throw new Error(`${where}: ${what} ${literal}; ${ALLOW}`);
  // A name that resolves to such an address is refused too (git and fetch resolve it again, but a
  // tree that controls a name's DNS could only point it elsewhere by changing it in between).
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return; // not resolvable: the fetch fails on its own, with the resolver's words
  }
  for (const a of addresses) {
    const problem = privateHostProblem(a);
    if (problem !== undefined) throw new Error(`${where}: ${what} ${host} resolves to ${a}: ${problem}; ${ALLOW}`);
  }
}

/** Throws a sentence naming the source when its address is refused. */
export async function checkSourceAddress(
  def: FetchedDef,
  allowPrivate: boolean,
  resolve: (host: string) => Promise<string[]> = systemResolve,
): Promise<void> {
  const where = whereOf(def);
  const address = sourceAddress(def.kind, def.kind === 'Bucket' ? def.endpoint : def.url);
  if ('problem' in address) throw new Error(`${where}: ${address.problem}`);
  if (allowPrivate) return;
  await refusePrivate(where, address.host, 'the source host', resolve);
}

const trusts = new WeakMap<object, Promise<TreeTrust>>();
const baseBuilders = new WeakMap<object, (commit: string) => Promise<ReadonlySet<string>>>();
const baseBuilt = new WeakMap<object, Promise<ReadonlySet<string>>>();

/**
 * How a run works out the base commit's Kustomizations as their parents' builds make them (the
 * reconcile's build service, which this folder does not reach): registered once a run has a cluster
 * client, asked at most once, lazily, through TreeTrust.asBuilt.
 */
export function setBaseBuilder(
  untrusted: NonNullable<Settings['untrustedTree']>,
  build: (commit: string) => Promise<ReadonlySet<string>>,
): void {
  baseBuilders.set(untrusted, build);
}
const bases = new WeakMap<object, Promise<BaseCommit>>();

/**
 * The base commit of an untrusted run, found once per run: a commit of the default branch
 * (trust-base.ts), never one the change's author wrote. Whatever else compares the tree with its
 * base should ask this, not `untrustedTree.base` (which is only what the input or event named).
 */
export function baseCommit(untrusted: NonNullable<Settings['untrustedTree']>): Promise<BaseCommit> {
  let found = bases.get(untrusted);
  if (found === undefined) {
    found = resolveBase(untrusted.root, untrusted);
    bases.set(untrusted, found);
  }
  return found;
}

/**
 * How far a run with `settings` trusts its tree; the base commit's definitions are read once per
 * run (the settings of every Kustomization share the run's `untrustedTree`), when first needed.
 */
export function treeTrust(settings: Pick<Settings, 'untrustedTree'>): () => Promise<TreeTrust> {
  const untrusted = settings.untrustedTree;
  if (untrusted === undefined) return () => Promise.resolve({ trusted: true });
  return () => {
    let trust = trusts.get(untrusted);
    if (trust === undefined) {
      trust = baseCommit(untrusted).then(async (found) => {
        if ('problem' in found) return { trusted: false as const, reason: untrusted.reason, base: found };
        const asBuilt = () => {
          let built = baseBuilt.get(untrusted);
          if (built === undefined) {
            const build = baseBuilders.get(untrusted);
            built = build ? build(found.commit) : Promise.resolve(new Set<string>());
            baseBuilt.set(untrusted, built);
          }
          return built;
        };
        return {
          trusted: false as const,
          reason: untrusted.reason,
          base: await baseScopes(untrusted.root, found.commit),
          asBuilt,
        };
      });
      trusts.set(untrusted, trust);
    }
    return trust;
  };
}

/**
 * `fetchersWith()` (every credential) or `fetchersWith(why)` (none) for each source, as its verdict
 * says; `anonymous` hears of each source fetched without credentials, and why.
 */
export function guardedFetchers(
  settings: Settings,
  fetchersWith: (anonymous?: string) => Fetchers,
  anonymous: (def: FetchedDef, why: string) => void,
): Fetchers {
  const trust = treeTrust(settings);
  const trusted = fetchersWith();
  const choose = async (def: FetchedDef): Promise<Fetchers> => {
    await checkSourceAddress(def, settings.allowPrivateSourceHosts);
    const verdict = credentialVerdict(def, await trust());
    if (verdict.use) return trusted;
    anonymous(def, verdict.why);
    return fetchersWith(verdict.why);
  };
  return {
    GitRepository: async (def) => (await choose({ kind: 'GitRepository', ...def })).GitRepository(def),
    OCIRepository: async (def) => (await choose(def)).OCIRepository(def),
    Bucket: async (def) => (await choose(def)).Bucket(def),
  };
}
