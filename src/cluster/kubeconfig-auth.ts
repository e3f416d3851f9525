/**
 * The ways a kubeconfig's cluster and user authenticate, checked as client-go checks them (its
 * clientcmd validation and transport rules) before any request: what client-go refuses is refused
 * here, naming the kubeconfig field (`clusters[].cluster.X`, `users[].user.X`); what client-go
 * removed (the gcp and azure auth providers) is refused with the exec plugin that replaced it. No
 * value that could be a credential (a token, a proxy URL's password) is ever quoted. Pure.
 */

type Fields = Record<string, unknown>;

/** The exec credential API versions client-go still speaks (v1alpha1 was removed in Kubernetes 1.24). */
export const EXEC_API_VERSIONS: readonly string[] = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
];

/** The proxy schemes client-go accepts for proxy-url (clientcmd's parseProxyURL). */
const PROXY_SCHEMES = ['http:', 'https:', 'socks5:'];

/** The exec plugin that replaced each auth provider client-go removed, for the refusal. */
const REMOVED_PROVIDERS: Readonly<Record<string, string>> = {
  gcp:
    'use the exec plugin gke-gcloud-auth-plugin instead (`gcloud container clusters get-credentials` writes it; ' +
    'in a workflow, google-github-actions/get-gke-credentials)',
  azure:
    'use the exec plugin kubelogin instead (https://github.com/Azure/kubelogin: `kubelogin convert-kubeconfig -l azurecli` ' +
    'or `-l workloadidentity` writes it; in a workflow, azure/aks-set-context)',
};

/**
 * The first problem of a cluster entry's connection fields, or undefined. The sentence starts with
 * the field (`clusters[].cluster.proxy-url …`); the caller names the kubeconfig and the cluster.
 */
export function clusterAuthProblem(cluster: Fields): string | undefined {
  const proxy = cluster['proxy-url'];
  if (given(proxy)) {
    const problem = proxyUrlProblem(proxy);
    if (problem) return `clusters[].cluster.proxy-url ${problem}`;
  }
  const name = cluster['tls-server-name'];
  if (given(name) && typeof name !== 'string') {
    return 'clusters[].cluster.tls-server-name is not a string: set it to the host name the server certificate is for';
  }
  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure !== undefined && insecure !== null && typeof insecure !== 'boolean') {
    return 'clusters[].cluster.insecure-skip-tls-verify is not a boolean: set it to true or false';
  }
  const caData = given(cluster['certificate-authority-data']);
  const caFile = given(cluster['certificate-authority']);
  if (caData && caFile) {
    return 'clusters[].cluster.certificate-authority-data and certificate-authority are both set, which client-go refuses: keep one';
  }
  if (insecure === true && (caData || caFile)) {
    return `clusters[].cluster.insecure-skip-tls-verify is true and ${caData ? 'certificate-authority-data' : 'certificate-authority'} is set too, which client-go refuses (a root certificate with the insecure flag): remove one of them`;
  }
  return undefined;
}

/** What is wrong with a proxy URL (the end of a sentence), or undefined. The URL is not quoted: it may hold a password. */
export function proxyUrlProblem(value: unknown): string | undefined {
  const schemes = 'http://, https:// or socks5://';
  if (typeof value !== 'string') return `is not a string: set it to the proxy's URL (${schemes})`;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return `is not a URL: set it to the proxy's URL, such as http://proxy.example:3128 (${schemes})`;
  }
  if (!PROXY_SCHEMES.includes(url.protocol)) {
    return `has the scheme ${JSON.stringify(url.protocol.slice(0, 20))}, which client-go does not support: use ${schemes}`;
  }
  if (url.hostname === '') return `names no host: set it to the proxy's URL, such as http://proxy.example:3128`;
  return undefined;
}

/**
 * The first problem of a user entry's authentication fields, or undefined. `read` reads a file the
 * user names (tokenFile), resolved as the kubeconfig's other paths are; `now` is for an OIDC
 * id-token's expiry.
 */
export function userAuthProblem(user: Fields, read: (path: string) => Buffer, now: number): string | undefined {
  for (const [data, file] of [
    ['client-certificate-data', 'client-certificate'],
    ['client-key-data', 'client-key'],
  ] as const) {
    if (given(user[data]) && given(user[file])) {
      return `users[].user.${data} and ${file} are both set, which client-go refuses: keep one`;
    }
  }
  const tokenFile = tokenFileOf(user);
  if (tokenFile !== undefined) {
    if (typeof tokenFile.path !== 'string') {
      return `users[].user.${tokenFile.field} is not a string: set it to the path of a file that holds the token`;
    }
    let text: string;
    try {
      text = read(tokenFile.path).toString('utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      return `users[].user.${tokenFile.field} ${tokenFile.path} cannot be read (${code}): fix the path (relative paths are relative to the kubeconfig file)`;
    }
    if (text.trim() === '' && !given(user['token'])) {
      return `users[].user.${tokenFile.field} ${tokenFile.path} is empty: it should hold the bearer token`;
    }
  }
  const basic = given(user['username']) || given(user['password']);
  if (basic && (given(user['token']) || tokenFile !== undefined)) {
    return `users[].user.username/password and ${given(user['token']) ? 'token' : tokenFile!.field} are both set, which client-go refuses (basic auth or a bearer token, not both): keep one`;
  }
  for (const field of ['token', 'username', 'password'] as const) {
    if (given(user[field]) && typeof user[field] !== 'string') return `users[].user.${field} is not a string`;
  }
  const provider = user['auth-provider'];
  const exec = user['exec'];
  if (given(provider) && given(exec)) {
    return 'users[].user.auth-provider and exec are both set, which client-go refuses: keep the exec plugin';
  }
  if (given(provider)) {
    const problem = authProviderProblem(record(provider), now);
    if (problem) return problem;
  }
  if (given(exec)) {
    const problem = execProblem(record(exec));
    if (problem) return problem;
  }
  return impersonationProblem(user);
}

/** The user's token file field, client-go's `tokenFile` or client-node's `token-file`, if set. */
export function tokenFileOf(user: Fields): { field: 'tokenFile' | 'token-file'; path: unknown } | undefined {
  if (given(user['tokenFile'])) return { field: 'tokenFile', path: user['tokenFile'] };
  if (given(user['token-file'])) return { field: 'token-file', path: user['token-file'] };
  return undefined;
}

function authProviderProblem(provider: Fields, now: number): string | undefined {
  const name = provider['name'];
  const quoted = JSON.stringify(String(name).slice(0, 40));
  const replacement = typeof name === 'string' ? REMOVED_PROVIDERS[name] : undefined;
  if (replacement) {
    return `users[].user.auth-provider ${quoted} was removed from client-go and kubectl (Kubernetes 1.26): ${replacement}`;
  }
  if (name !== 'oidc') {
    return `users[].user.auth-provider ${quoted} is not an auth provider client-go knows (only oidc remains; gcp and azure were removed): use an exec plugin (users[].user.exec)`;
  }
  const token = oidcIdToken(record(provider['config']), now);
  return typeof token === 'string' ? undefined : token.problem;
}

/**
 * The id-token of an oidc auth provider's config while it is valid (its JWT `exp` more than a
 * minute away), as client-go uses it; or the problem. Refreshing an expired one (refresh-token at
 * the issuer, written back into the kubeconfig by client-go) is not done here.
 */
export function oidcIdToken(config: Fields, now: number): string | { problem: string } {
  const where = 'users[].user.auth-provider "oidc"';
  const replace =
    'use an exec plugin instead, such as kubelogin (https://github.com/int128/kubelogin: `kubectl oidc-login get-token`), or a token';
  const token = config['id-token'];
  if (typeof token !== 'string' || token === '') {
    return { problem: `${where} has no config.id-token, and a token is not refreshed here: ${replace}` };
  }
  const exp = jwtExpiry(token);
  if (exp === undefined) {
    return { problem: `${where}: config.id-token is not a JWT with an exp claim: ${replace}` };
  }
  if (exp * 1000 <= now + 60_000) {
    return {
      problem: `${where}: config.id-token has expired, and refreshing it (refresh-token) is not done here: ${replace}`,
    };
  }
  return token;
}

function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp : undefined;
  } catch {
    return undefined;
  }
}

function execProblem(exec: Fields): string | undefined {
  const apiVersion = exec['apiVersion'];
  if (!given(apiVersion)) {
    return `users[].user.exec.apiVersion is not set, which client-go requires: set it to the version the plugin speaks (${EXEC_API_VERSIONS.join(' or ')})`;
  }
  if (typeof apiVersion !== 'string' || !EXEC_API_VERSIONS.includes(apiVersion)) {
    const removed = apiVersion === 'client.authentication.k8s.io/v1alpha1' ? ' (removed in Kubernetes 1.24)' : '';
    return `users[].user.exec.apiVersion ${JSON.stringify(String(apiVersion).slice(0, 60))} is not one client-go speaks${removed}: use ${EXEC_API_VERSIONS.join(' or ')}, with a plugin that prints it`;
  }
  const mode = exec['interactiveMode'];
  if (given(mode) && !['Never', 'IfAvailable', 'Always'].includes(mode as string)) {
    return `users[].user.exec.interactiveMode ${JSON.stringify(String(mode).slice(0, 40))} is not Never, IfAvailable or Always`;
  }
  const args = exec['args'];
  if (given(args) && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) {
    return 'users[].user.exec.args is not a list of strings';
  }
  const env = exec['env'];
  if (given(env)) {
    if (!Array.isArray(env)) return 'users[].user.exec.env is not a list of {name, value}';
    for (const e of env as unknown[]) {
      const name = record(e)['name'];
      if (typeof name !== 'string' || name === '') {
        return 'users[].user.exec.env has an entry without name, which client-go refuses: give each entry a name';
      }
    }
  }
  return undefined;
}

function impersonationProblem(user: Fields): string | undefined {
  const as = user['as'];
  if (given(as) && typeof as !== 'string') return 'users[].user.as is not a string: set it to the user name to act as';
  const groups = user['as-groups'];
  if (given(groups) && !(Array.isArray(groups) && groups.every((g) => typeof g === 'string'))) {
    return 'users[].user.as-groups is not a list of group names';
  }
  const extra = user['as-user-extra'];
  if (
    given(extra) &&
    !(
      typeof extra === 'object' &&
      !Array.isArray(extra) &&
      Object.values(extra as object).every((v) => Array.isArray(v) && v.every((s) => typeof s === 'string'))
    )
  ) {
    return 'users[].user.as-user-extra is not a map of names to lists of strings';
  }
  const uid = user['as-uid'];
  if (given(uid) && typeof uid !== 'string') return 'users[].user.as-uid is not a string';
  const more = (['as-uid', 'as-groups', 'as-user-extra'] as const).filter((f) => given(user[f]) && !empty(user[f]));
  if (more.length > 0 && !given(as)) {
    return `users[].user.${more[0]} is set without users[].user.as, which client-go refuses (groups, uid or extra are requested for an impersonated user): set as too`;
  }
  return undefined;
}

/** The impersonation a kubeconfig user asks for (as, as-uid, as-groups, as-user-extra), if any. */
export interface Impersonation {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The user's impersonation fields as headers' values; undefined without `as`. Expects a user userAuthProblem passed. */
export function impersonationOf(user: Fields): Impersonation | undefined {
  const as = user['as'];
  if (typeof as !== 'string' || as === '') return undefined;
  const groups = user['as-groups'];
  const extra = user['as-user-extra'];
  const uid = user['as-uid'];
  return {
    user: as,
    ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
    ...(Array.isArray(groups) && groups.length > 0 ? { groups: groups as string[] } : {}),
    ...(typeof extra === 'object' && extra !== null && Object.keys(extra).length > 0
      ? { extra: extra as Record<string, string[]> }
      : {}),
  };
}

/** The impersonation headers for `who`, as client-go sends them (extra keys percent-encoded). */
export function impersonationHeaders(who: Impersonation): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'impersonate-user': who.user };
  if (who.uid) headers['impersonate-uid'] = who.uid;
  if (who.groups?.length) headers['impersonate-group'] = who.groups;
  for (const [key, values] of Object.entries(who.extra ?? {})) {
    if (values.length > 0) headers[`impersonate-extra-${encodeURIComponent(key)}`] = values;
  }
  return headers;
}

function record(v: unknown): Fields {
  return typeof v === 'object' && v !== null ? (v as Fields) : {};
}

function given(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

function empty(v: unknown): boolean {
  return (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
}
