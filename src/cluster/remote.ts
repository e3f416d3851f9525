/**
 * spec.kubeConfig.secretRef: a Kustomization reconciled into a remote cluster whose kubeconfig is a
 * Secret in the cluster the action was given (the management cluster), as Flux does it. The
 * kubeconfig is sanitised as Flux sanitises it: only the server, its CA, TLS server name, proxy and
 * the static credentials (client certificate and key, bearer token, basic auth) are kept; exec
 * plugins, auth providers, file references and insecure-skip-tls-verify are dropped.
 */
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { parse } from 'yaml';
import { yamlShapeProblem } from '../util/yaml-shape.js';
import type { ClusterClient } from './client.js';
import { isNotFound } from './errors.js';
import { kubeconfigProblem } from './kubeconfig-check.js';

const CLUSTER_KEYS = ['server', 'certificate-authority-data', 'tls-server-name', 'proxy-url'] as const;
const USER_KEYS = ['client-certificate-data', 'client-key-data', 'token', 'username', 'password'] as const;

type Named<T> = { name?: unknown } & T;
type Doc = {
  'current-context'?: unknown;
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: unknown; user?: unknown } }>[];
};

export interface Sanitized {
  /** A kubeconfig with one context, `remote`, holding only what is kept. */
  config: {
    apiVersion: 'v1';
    kind: 'Config';
    'current-context': 'remote';
    clusters: { name: 'remote'; cluster: Record<string, unknown> }[];
    users: { name: 'remote'; user: Record<string, unknown> }[];
    contexts: { name: 'remote'; context: { cluster: 'remote'; user: 'remote' } }[];
  };
  /** The fields that were dropped, for a note. */
  dropped: string[];
}

/** The current context's cluster and user, reduced to what Flux keeps. Pure; `where` names the source. */
export function sanitizeKubeconfig(text: string, where: string): Sanitized {
  let parsed: unknown;
  // A Secret a tenant can write: its shape is bounded before the parse (util/yaml-shape.ts).
  const shape = yamlShapeProblem(text, where);
  if (shape !== undefined) throw new Error(shape);
  try {
    parsed = parse(text, { maxAliasCount: 100, logLevel: 'error' });
  } catch (e) {
    throw new Error(`${where} is not valid YAML: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  const doc = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Doc;
  if (!Array.isArray(doc.clusters)) throw new Error(`${where} is not a kubeconfig (no clusters list)`);
  const contexts = doc.contexts ?? [];
  const contextName = doc['current-context'] ?? (contexts.length === 1 ? contexts[0]?.name : undefined);
  const context = contexts.find((c) => c.name === contextName)?.context;
  const clusterName = context?.cluster ?? (doc.clusters.length === 1 ? doc.clusters[0]?.name : undefined);
  const cluster = doc.clusters.find((c) => c.name === clusterName)?.cluster;
  if (!cluster) throw new Error(`${where}: its current context names no cluster`);
  const userName = context?.user ?? (doc.users?.length === 1 ? doc.users[0]?.name : undefined);
  const user = doc.users?.find((u) => u.name === userName)?.user ?? {};
  if (typeof cluster['server'] !== 'string' || cluster['server'] === '') {
    throw new Error(`${where}: the cluster has no server`);
  }
  const dropped = [
    ...Object.keys(cluster)
      .filter((k) => !(CLUSTER_KEYS as readonly string[]).includes(k))
      .map((k) => `cluster.${k}`),
    ...Object.keys(user)
      .filter((k) => !(USER_KEYS as readonly string[]).includes(k))
      .map((k) => `user.${k}`),
  ];
  const keep = (from: Record<string, unknown>, keys: readonly string[]) =>
    Object.fromEntries(keys.flatMap((k) => (typeof from[k] === 'string' ? [[k, from[k]]] : [])));
  return {
    config: {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'remote',
      clusters: [{ name: 'remote', cluster: keep(cluster, CLUSTER_KEYS) }],
      users: [{ name: 'remote', user: keep(user, USER_KEYS) }],
      contexts: [{ name: 'remote', context: { cluster: 'remote', user: 'remote' } }],
    },
    dropped,
  };
}

/** The key of the kubeconfig in the Secret, as Flux picks it: `key`, else `value`, else `value.yaml`. */
export function kubeconfigKey(data: Record<string, string>, key: string | undefined): string | undefined {
  if (key !== undefined) return key in data ? key : undefined;
  return ['value', 'value.yaml'].find((k) => k in data);
}

/** Reads the Secret (with the action's identity, in the management cluster) and returns the remote kubeconfig. */
export async function remoteKubeConfig(
  management: ClusterClient,
  namespace: string,
  ref: { name: string; key?: string },
  note: (line: string) => void,
): Promise<KubeConfig> {
  const where = `spec.kubeConfig.secretRef: Secret ${namespace}/${ref.name}`;
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(ref.name)) {
    throw new Error(`${where}: the name is not a Secret name (DNS-1123 subdomain)`);
  }
  let secret: { data?: Record<string, string> };
  try {
    secret = await management.request(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(ref.name)}`,
    );
  } catch (err) {
    if (isNotFound(err)) throw new Error(`${where} not found`, { cause: err });
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  const data = secret.data ?? {};
  const key = kubeconfigKey(data, ref.key);
  if (key === undefined) {
    const wanted = ref.key !== undefined ? `key '${ref.key}'` : "key 'value' or 'value.yaml'";
    throw new Error(`${where} has no ${wanted} (has: ${Object.keys(data).join(', ') || 'nothing'})`);
  }
  const text = Buffer.from(data[key] ?? '', 'base64').toString('utf8');
  const { config, dropped } = sanitizeKubeconfig(text, `${where}, key '${key}'`);
  if (dropped.length > 0) {
    note(`Ignored in the kubeconfig of ${where}: ${dropped.join(', ')} (only static credentials are used, as in Flux)`);
  }
  const problem = kubeconfigProblem(config, `of ${where}, key '${key}'`);
  if (problem) throw new Error(problem);
  const kc = new KubeConfig();
  kc.loadFromString(JSON.stringify(config));
  return kc;
}
