/**
 * How a Kustomization and the repository it comes from are named, pure. Its inventory, its lock and
 * the owner labels on its objects are named after it, so two Kustomizations that end up with one
 * name delete each other's objects: names derived here never collide by normalisation (a hash of
 * the exact repository and path is part of them) and always fit Kubernetes' limits. What an
 * inventory's recorded repository proves is src/inventory/identity.ts's.
 */
import { createHash } from 'node:crypto';

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
