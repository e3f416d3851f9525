/**
 * Who a Kustomization is in a shared cluster, pure. Its inventory, its lock and the owner labels on
 * its objects are named after it, so two Kustomizations that end up with one name delete each
 * other's objects. Names derived here never collide by normalisation (a hash of the exact
 * repository and path is part of them) and always fit Kubernetes' limits; every inventory records
 * the repository it was written from, and a run refuses one recorded by another repository.
 */
import { createHash } from 'node:crypto';
import type { InventoryStatus } from './codec.js';

/** Label values: at most 63 characters, alphanumeric at both ends, `-_.` inside. */
export const MAX_LABEL_VALUE = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const HASH_LENGTH = 10;

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);

/** A readable DNS-1123 fragment: lower case, runs of anything else folded to one `-`, cut to `max`. */
function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
}

/**
 * `value` when it is a valid label value; otherwise a readable prefix of it and a hash of the whole,
 * so that two long values that share a prefix still get two label values.
 */
export function labelValue(value: string): string {
  if (value.length <= MAX_LABEL_VALUE && LABEL_VALUE.test(value)) return value;
  const prefix = value
    .slice(0, MAX_LABEL_VALUE - HASH_LENGTH - 1)
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return prefix === '' ? digest(value) : `${prefix}-${digest(value)}`;
}

/**
 * The Kustomization name for the `path` input when no `name` is given: the repository's own name
 * and the path, readable, then a hash of the exact repository and path (`acme/app1` and `deploy`
 * give `app1-deploy-<hash>`). `apps/web` and `apps-web`, `Team` and `team`, or the same folder in
 * two repositories differ in the hash. At most 63 characters, as Flux puts the name in a label.
 */
export function derivedName(source: string, path: string): string {
  const repo = source.replace(/\/+$/, '').split(/[/:]/).pop() ?? '';
  const readable = [slug(repo, 40), path === '.' ? 'root' : slug(path, 63)].filter((s) => s !== '').join('-');
  const room = MAX_LABEL_VALUE - HASH_LENGTH - 1;
  const prefix = readable.slice(0, room).replace(/-+$/g, '');
  const hash = digest(`${source}\n${path}`);
  return prefix === '' ? `ks-${hash}` : `${prefix}-${hash}`;
}

/**
 * The name path-mode Kustomizations had before names were derived from the repository too (the
 * path alone, folded). Used only to find and adopt such an inventory when its source matches.
 */
export function legacyName(path: string): string {
  if (path === '.') return 'root';
  const name = slug(path, 63);
  return name === '' ? 'root' : name;
}

/**
 * A repository as one comparable string: `owner/repo` on github.com (as GITHUB_REPOSITORY says it),
 * `host/owner/repo` elsewhere. Takes https and ssh remote URLs (`git@host:owner/repo.git`,
 * `ssh://git@host/owner/repo`), drops credentials, a `.git` suffix and trailing slashes.
 */
export function repositoryId(url: string): string {
  let text = url.trim();
  const scp = /^[^/@\s]+@([^/:\s]+):(.+)$/.exec(text);
  if (scp) text = `${scp[1]}/${scp[2]}`;
  else text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^[^@/]*@/, '');
  const [host = '', ...rest] = text.split('/');
  const path = rest
    .join('/')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const bareHost = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (path === '') return bareHost;
  return bareHost === 'github.com' || bareHost === 'www.github.com' ? path : `${bareHost}/${path}`;
}

/** The source a GitHub Actions run records: `owner/repo`, with the host when it is not github.com. */
export function actionSource(serverUrl: string | undefined, repository: string): string {
  return repositoryId(`${serverUrl || 'https://github.com'}/${repository}`);
}

/** Two recorded sources name one repository (GitHub's owner/repo are case-insensitive). */
export function sameSource(a: string, b: string): boolean {
  const norm = (s: string) => (s.startsWith('local:') ? s : s.toLowerCase());
  return norm(a) === norm(b);
}

/**
 * Whether an inventory's recorded source is this run's repository. Inventories written before this
 * version recorded GITHUB_REPOSITORY as it was (`owner/repo`, no host, and no `origin` beside it):
 * on GitHub Enterprise Server, where this version records `host/owner/repo`, such a record is
 * the same repository when the owner and name match.
 */
export function recordedBy(recorded: { source: string; origin?: string | undefined }, source: string): boolean {
  if (sameSource(recorded.source, source)) return true;
  const legacy = recorded.origin === undefined && /^[^/:.]+\/[^/]+$/.test(recorded.source);
  return legacy && !source.startsWith('local:') && source.toLowerCase().endsWith(`/${recorded.source.toLowerCase()}`);
}

/** What this run is, as an inventory records it. */
export interface Claim {
  /** `namespace/name` of the Kustomization. */
  kustomization: string;
  source: string;
  /** The Kustomization file, or the `path` input's directory. */
  origin: string;
}

/**
 * Why this run may not take over the inventory `recorded` (undefined when it may). An inventory
 * written from another repository is never taken over or pruned. Nor is one that records no
 * repository: every version writes one (since fb2fe83, 2026-12-03, before any release), so such an
 * inventory was written by hand, by another tool, or by a development build older than that;
 * its entries prove nothing, and adopting them would let whoever wrote it choose what this run
 * prunes. The migration rule is to delete it (its objects stay; the next run records what it
 * applies). An inventory written from a directory without a git remote is taken over by a run from
 * another such directory: a directory is not a repository, and the same files copied elsewhere are
 * the same Kustomization. (Path-mode names include the directory, so only Kustomization files can
 * meet this way.) Problems name both sides and what to do.
 */
export function ownershipProblem(
  recorded: Pick<InventoryStatus, 'source' | 'kustomization' | 'origin'> | undefined,
  inventory: string,
  claim: Claim,
): string | undefined {
  if (recorded === undefined) return undefined;
  if (recorded.source === undefined || recorded.source === '') return unprovenProblem(inventory, claim);
  if (recordedBy({ ...recorded, source: recorded.source }, claim.source)) return undefined;
  if (recorded.source.startsWith('local:') && claim.source.startsWith('local:')) return undefined;
  const theirs = recorded.origin ? `${recorded.source} (${recorded.origin})` : recorded.source;
  return (
    `inventory ${inventory} belongs to Kustomization ${recorded.kustomization} of repository ${theirs}, ` +
    `not to this run's repository ${claim.source} (${claim.origin}): nothing was applied or pruned. ` +
    'Two repositories (or folders) must not share a Kustomization name in one cluster: give this one another ' +
    'name (input name, or metadata.name in the Kustomization file), or delete that inventory if the other ' +
    'repository no longer deploys it'
  );
}

/** The refusal of an inventory that records no repository, with the way out (the migration rule). */
function unprovenProblem(inventory: string, claim: Claim): string {
  const slash = inventory.indexOf('/');
  const [namespace, name] = slash > 0 ? [inventory.slice(0, slash), inventory.slice(slash + 1)] : ['', inventory];
  const command = `kubectl${namespace ? ` -n ${namespace}` : ''} delete configmap ${name}`;
  return (
    `inventory ${inventory} records no repository, so nothing proves it was written by kustomize-reconcile for ` +
    `this Kustomization (${claim.kustomization} of ${claim.source}, ${claim.origin}): kustomize-reconcile ` +
    'records the repository in every inventory it writes, so this one was written by hand, by another tool or ' +
    'by a development build. ' +
    'Nothing was applied or pruned. If this Kustomization is yours, delete that inventory ' +
    `(\`${command}\`; its objects stay in the cluster, the next run records what it applies, and objects ` +
    'removed from Git meanwhile must be deleted by hand), then run again'
  );
}
