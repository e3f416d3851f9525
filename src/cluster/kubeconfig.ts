// KubeConfig alone: the package's index also loads its API client, watch, exec, cp and the rest.
import type { ConfigOptions } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { installExecCredentials, type ExecClusterInfo } from './exec-credential.js';
import { impersonationOf, oidcIdToken, tokenFileOf, type Impersonation } from './kubeconfig-auth.js';
import { credentialsOf } from './kubeconfig-secrets.js';
import { kubeconfigProblem } from './kubeconfig-check.js';
import { proxyFromEnvironment } from './proxy-env.js';
import { installTokenFiles } from './token-file.js';
import { DEFAULT_TIMEOUTS } from './timeouts.js';
import { parseYamlValue, YamlError } from '../objects/yaml.js';
import { UserError } from '../util/user-error.js';

/** Where the kubeconfig comes from: a file, the file's text (as an action input), or KUBECONFIG / ~/.kube/config. */
export type KubeconfigSource =
  { kind: 'path'; path: string } | { kind: 'content'; content: string } | { kind: 'default' };

/** Entries that client-node cannot read are left out: only the ones the context uses matter, and they are checked. */
const FILTER: ConfigOptions = { onInvalidEntry: 'filter' };

type Fields = Record<string, unknown>;

/** What client-node's KubeConfig does not keep of a kubeconfig: impersonation beyond `as`, token files' tokens. */
interface Extras {
  impersonation: Map<string, Impersonation>;
  secrets: string[];
}
const EXTRAS = new WeakMap<KubeConfig, Extras>();

/**
 * Loads a kubeconfig. The text is parsed with the `yaml` package (alias limit on) and handed to
 * client-node as JSON, so client-node's own YAML loader never sees user input. Relative file
 * references resolve against the kubeconfig's directory, as kubectl resolves them. The context in
 * use, its cluster and its user are checked first (see kubeconfigProblem; what client-go refuses is
 * refused, naming the field); entries the context does not use may be broken. What client-node
 * would do differently from client-go is done here: `tokenFile` (read as client-go reads it, see
 * token-file.ts), impersonation (`as-groups`, `as-uid`, `as-user-extra`), an oidc auth provider's
 * id-token, and the environment's HTTPS_PROXY / NO_PROXY when the cluster has no proxy-url. Exec
 * credential plugins run at most `execTimeoutMs`.
 */
export async function loadKubeConfig(
  source: KubeconfigSource,
  context?: string,
  opts: { execTimeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<KubeConfig> {
  const env = opts.env ?? process.env;
  const file = source.kind === 'path' ? source.path : source.kind === 'default' ? defaultFile(env) : undefined;
  let doc: unknown;
  let where: string;
  let baseDir: string | undefined;
  if (source.kind === 'default' && file === undefined) {
    // Several files in KUBECONFIG, or none at all (in a pod: its ServiceAccount): client-node merges them.
    const merged = new KubeConfig();
    merged.loadFromDefault(FILTER);
    doc = mergedTokenFiles(inClusterTokenFile(JSON.parse(merged.exportConfig()) as Fields), env);
    where = 'from $KUBECONFIG or ~/.kube/config';
  } else {
    const text =
      file !== undefined
        ? await readFile(file, 'utf8').catch((e: unknown) => {
            const code = (e as NodeJS.ErrnoException).code ?? String(e);
            throw new UserError(`kubeconfig: cannot read ${file}: ${code}`, { cause: e });
          })
        : (source as { content: string }).content;
    where = file ?? 'the kubeconfig input';
    try {
      doc = parseYamlValue(text, where);
    } catch (e) {
      const reason = e instanceof YamlError ? e.problem : (e as Error).message;
      throw new UserError(`kubeconfig: ${where} is not valid YAML: ${reason}`, { cause: e });
    }
    if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { clusters?: unknown }).clusters)) {
      throw new UserError(
        `kubeconfig: ${where} has no clusters list; expected a kubeconfig file (apiVersion: v1, kind: Config)`,
      );
    }
    if (file !== undefined) baseDir = dirname(resolve(file));
  }
  const dir = baseDir;
  const abs = (p: string) => (dir ? resolve(dir, p) : p);
  const problem = kubeconfigProblem(doc, where, context, (p) => readFileSync(abs(p)));
  if (problem) throw new UserError(problem);
  const current = currentEntries(doc as Fields, context);
  const proxy = current.cluster ? environmentProxy(current.cluster, env, where) : undefined;
  const prepared = forClientNode(doc as Fields, abs, current.clusterName, proxy);
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(prepared.doc), FILTER);
  } catch (e) {
    // client-node's messages name the entry ("clusters[0].cluster is missing") but not the file.
    const reason = ((e as Error).message.split('\n')[0] ?? '').slice(0, 300);
    throw new UserError(`kubeconfig: ${where} is not a valid kubeconfig: ${reason}`, { cause: e });
  }
  if (baseDir) kc.makePathsAbsolute(baseDir);
  if (context) kc.setCurrentContext(context);
  EXTRAS.set(kc, { impersonation: prepared.impersonation, secrets: prepared.secrets });
  // A token file's token comes before an exec plugin's, as client-go's bearer token does.
  installTokenFiles(kc, prepared.tokenFiles);
  installExecCredentials(
    kc,
    opts.execTimeoutMs ?? DEFAULT_TIMEOUTS.requestMs,
    baseDir,
    current.cluster ? execClusterInfo(current.cluster, proxy, abs) : undefined,
  );
  return kc;
}

/** client-node's in-cluster user (an auth provider "tokenFile", its ServiceAccount token) as client-go's tokenFile. */
function inClusterTokenFile(doc: Fields): Fields {
  const users = list(doc['users']).map((entry) => {
    const user = record(entry['user']);
    const provider = record(user['auth-provider']);
    if (provider['name'] !== 'tokenFile') return entry;
    const { 'auth-provider': _, ...rest } = user;
    return { ...entry, user: { ...rest, tokenFile: record(provider['config'])['tokenFile'] } };
  });
  return { ...doc, users };
}

/**
 * client-node's merge of several KUBECONFIG files drops client-go's `tokenFile`: each user that has
 * none gets the one of the first file that names that user with one (kubectl's merge: the first file
 * wins), made absolute against that file's directory.
 */
function mergedTokenFiles(doc: Fields, env: NodeJS.ProcessEnv): Fields {
  const found = new Map<string, string>();
  for (const file of (env['KUBECONFIG'] ?? '').split(delimiter).filter((f) => f !== '')) {
    let parsed: unknown;
    try {
      parsed = parseYamlValue(readFileSync(file, 'utf8'), file);
    } catch {
      continue;
    }
    for (const entry of list(record(parsed)['users'])) {
      const name = entry['name'];
      const tokenFile = record(entry['user'])['tokenFile'];
      if (typeof name === 'string' && typeof tokenFile === 'string' && tokenFile !== '' && !found.has(name)) {
        found.set(name, resolve(dirname(resolve(file)), tokenFile));
      }
    }
  }
  if (found.size === 0) return doc;
  const users = list(doc['users']).map((entry) => {
    const path = typeof entry['name'] === 'string' ? found.get(entry['name']) : undefined;
    return path === undefined ? entry : { ...entry, user: { ...record(entry['user']), tokenFile: path } };
  });
  return { ...doc, users };
}

/** The one file the default kubeconfig is: KUBECONFIG's only path, or ~/.kube/config; undefined for client-node's merge. */
function defaultFile(env: NodeJS.ProcessEnv): string | undefined {
  const files = (env['KUBECONFIG'] ?? '').split(delimiter).filter((f) => f !== '');
  if (files.length > 1) return undefined;
  const file = files[0] ?? join(homedir(), '.kube', 'config');
  return existsSync(file) ? file : undefined;
}

/** The current context's cluster entry (its name and fields); kubeconfigProblem has checked they exist. */
function currentEntries(doc: Fields, context?: string): { clusterName?: string; cluster?: Fields } {
  const name = context || doc['current-context'];
  const ctx = list(doc['contexts']).find((c) => c['name'] === name);
  const clusterName = record(ctx?.['context'])['cluster'];
  const entry = list(doc['clusters']).find((c) => c['name'] === clusterName);
  return entry ? { clusterName: clusterName as string, cluster: record(entry['cluster']) } : {};
}

/** The environment's proxy for a cluster without proxy-url (as client-go), or undefined. */
function environmentProxy(cluster: Fields, env: NodeJS.ProcessEnv, where: string): string | undefined {
  if (typeof cluster['proxy-url'] === 'string' && cluster['proxy-url'] !== '') return undefined;
  const proxy = proxyFromEnvironment(String(cluster['server']).trim(), env);
  if (typeof proxy === 'object') throw new UserError(`kubeconfig ${where}: ${proxy.problem}`);
  return proxy;
}

/**
 * The kubeconfig as client-node is to load it: token files (client-go's `tokenFile`, client-node's
 * `token-file`) taken out for token-file.ts, with the static `token` they fall back to; an oidc
 * auth provider's valid id-token as the token; the other auth providers dropped (client-node would
 * run their commands; kubeconfigProblem refused the one in use); impersonation taken out for the
 * client; the environment's proxy set on the current cluster.
 */
function forClientNode(
  doc: Fields,
  abs: (p: string) => string,
  clusterName: string | undefined,
  proxy: string | undefined,
): {
  doc: Fields;
  tokenFiles: Map<string, { path: string; token?: string }>;
  impersonation: Map<string, Impersonation>;
  secrets: string[];
} {
  const tokenFiles = new Map<string, { path: string; token?: string }>();
  const impersonation = new Map<string, Impersonation>();
  const secrets: string[] = [];
  const users = list(doc['users']).map((entry) => {
    const name = entry['name'];
    const user: Fields = { ...record(entry['user']) };
    if (typeof name !== 'string') return entry;
    const tokenFile = tokenFileOf(user);
    if (tokenFile && typeof tokenFile.path === 'string') {
      const path = abs(tokenFile.path);
      const token = typeof user['token'] === 'string' && user['token'] !== '' ? user['token'] : undefined;
      tokenFiles.set(name, { path, ...(token !== undefined ? { token } : {}) });
      try {
        secrets.push(readFileSync(path, 'utf8').trim());
      } catch {
        // Not the context's user (that one was checked): never used.
      }
      delete user['token'];
    }
    delete user['tokenFile'];
    delete user['token-file'];
    const provider = record(user['auth-provider']);
    if (user['auth-provider'] !== undefined) {
      delete user['auth-provider'];
      const token = provider['name'] === 'oidc' ? oidcIdToken(record(provider['config']), Date.now()) : undefined;
      if (typeof token === 'string') user['token'] = token;
    }
    const who = impersonationOf(user);
    if (who) impersonation.set(name, who);
    const { as: _as, 'as-uid': _uid, 'as-groups': _groups, 'as-user-extra': _extra, ...rest } = user;
    return { ...entry, user: rest };
  });
  const clusters = list(doc['clusters']).map((entry) =>
    proxy !== undefined && entry['name'] === clusterName
      ? { ...entry, cluster: { ...record(entry['cluster']), 'proxy-url': proxy } }
      : entry,
  );
  return { doc: { ...doc, users, clusters }, tokenFiles, impersonation, secrets };
}

/** What an exec plugin with provideClusterInfo is told of the cluster (client-go's ExecCredential spec.cluster). */
function execClusterInfo(cluster: Fields, proxy: string | undefined, abs: (p: string) => string): ExecClusterInfo {
  const caFile = cluster['certificate-authority'];
  let caData = typeof cluster['certificate-authority-data'] === 'string' ? cluster['certificate-authority-data'] : '';
  if (caData === '' && typeof caFile === 'string' && caFile !== '') {
    try {
      caData = readFileSync(abs(caFile)).toString('base64');
    } catch {
      caData = '';
    }
  }
  const extension = list(cluster['extensions']).find((e) => e['name'] === 'client.authentication.k8s.io/exec');
  const str = (k: string): string | undefined => {
    const v = cluster[k];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const proxyUrl = str('proxy-url') ?? proxy;
  return {
    server: String(cluster['server']).trim(),
    ...(str('tls-server-name') ? { 'tls-server-name': str('tls-server-name') } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { 'insecure-skip-tls-verify': true } : {}),
    ...(caData !== '' ? { 'certificate-authority-data': caData.replace(/\s+/g, '') } : {}),
    ...(proxyUrl ? { 'proxy-url': proxyUrl } : {}),
    ...(extension?.['extension'] !== undefined ? { config: extension['extension'] } : {}),
  };
}

/** The impersonation the kubeconfig's current user asks for (as, as-uid, as-groups, as-user-extra), if any. */
export function kubeconfigImpersonation(kc: KubeConfig): Impersonation | undefined {
  const name = kc.getCurrentUser()?.name;
  return name === undefined ? undefined : EXTRAS.get(kc)?.impersonation.get(name);
}

/**
 * The credential values in a kubeconfig, to be masked in logs before anything else runs: as the
 * input's masks find them (kubeconfig-secrets.ts), in the configuration client-node loaded, and
 * the tokens its token files held when it was loaded.
 */
export function kubeconfigSecrets(kc: KubeConfig): string[] {
  return [...credentialsOf(JSON.parse(kc.exportConfig())), ...(EXTRAS.get(kc)?.secrets ?? [])];
}

function list(v: unknown): Fields[] {
  return Array.isArray(v) ? v.filter((e): e is Fields => typeof e === 'object' && e !== null) : [];
}

function record(v: unknown): Fields {
  return typeof v === 'object' && v !== null ? (v as Fields) : {};
}
