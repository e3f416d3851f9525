/**
 * Checks the part of a kubeconfig a run uses (its context, that context's cluster and user) before
 * any request is sent, so that a broken kubeconfig is named as such instead of surfacing as a TLS or
 * connection error. Each problem is one sentence naming the kubeconfig, the context, cluster or
 * user, and what to fix; no value that could be a credential is ever quoted.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { clusterAuthProblem, userAuthProblem } from './kubeconfig-auth.js';
import { clip, truncate } from '../util/truncate.js';

/** Reads a file a kubeconfig refers to (an absolute path); throws an error with a `code` when it cannot. */
export type FileReader = (path: string) => Buffer;

type Entry = { name?: unknown } & Record<string, unknown>;

const CONTEXT_HINT = 'the context input / --context flag';
const PATH_HINT = 'fix the path (relative paths are relative to the kubeconfig file)';
const SERVER_HINT = "set its server to the API server's URL, such as https://HOST:6443";

/**
 * The first problem of the kubeconfig `doc` (a parsed kubeconfig) for `context` (default: its
 * current-context), or undefined when the context, its cluster and its user are usable. `where`
 * names the kubeconfig in the message. Only the entries the context uses are checked.
 */
export function kubeconfigProblem(
  doc: unknown,
  where: string,
  context?: string,
  read: FileReader = readFileSync,
  now: number = Date.now(),
): string | undefined {
  const d = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  const contexts = entries(d['contexts']);
  const clusters = entries(d['clusters']);
  const users = entries(d['users']);
  const at = `kubeconfig ${where}`;

  // Which context, and do the names it uses exist?
  const current = d['current-context'];
  const contextName = context || (typeof current === 'string' && current !== '' ? current : undefined);
  if (contextName === undefined) {
    if (contexts.length === 0) {
      return `${at} has no contexts: add a context that names a cluster and a user, and set current-context to it`;
    }
    return `${at} sets no current-context: set current-context to one of its contexts (${names(contexts)}), or choose one with ${CONTEXT_HINT}`;
  }
  const ctxEntry = contexts.find((c) => c.name === contextName);
  if (!ctxEntry) {
    return context
      ? `${at} has no context ${q(contextName)} (has: ${names(contexts)}): choose one of its contexts with ${CONTEXT_HINT}`
      : `${at}: current-context ${q(contextName)} is not one of its contexts (${names(contexts)}): fix current-context, or choose a context with ${CONTEXT_HINT}`;
  }
  const ctx = record(ctxEntry['context']);
  const ofCtx = `context ${q(contextName)}`;
  const clusterName = ctx['cluster'];
  if (typeof clusterName !== 'string' || clusterName === '') {
    return `${at}: ${ofCtx} names no cluster: set its cluster to one of the clusters (${names(clusters)})`;
  }
  const clusterEntry = clusters.find((c) => c.name === clusterName);
  if (!clusterEntry) {
    return `${at}: ${ofCtx} names cluster ${q(clusterName)}, which is not in its clusters list (${names(clusters)}): add the cluster or fix the context's cluster`;
  }
  const userName = ctx['user'];
  const hasUser = typeof userName === 'string' && userName !== '';
  const userEntry = hasUser ? users.find((u) => u.name === userName) : undefined;
  if (hasUser && !userEntry) {
    return `${at}: ${ofCtx} names user ${q(userName)}, which is not in its users list (${names(users)}): add the user or fix the context's user`;
  }

  // The cluster.
  const cluster = record(clusterEntry['cluster']);
  const theCluster = `cluster ${q(clusterName)} (of ${ofCtx})`;
  const server = cluster['server'];
  if (typeof server !== 'string' || server.trim() === '') return `${at}: ${theCluster} has no server: ${SERVER_HINT}`;
  if (!isHttpUrl(server)) {
    return `${at}: ${theCluster} has a server that is not an https:// or http:// URL: ${SERVER_HINT}`;
  }
  if (server.trim().startsWith('http:') && cluster['insecure-skip-tls-verify'] !== true) {
    return `${at}: ${theCluster} has an http:// server, which is used only with insecure-skip-tls-verify: true: use the API server's https:// URL`;
  }
  const ca =
    pemData(
      cluster['certificate-authority-data'],
      'certificate-authority-data',
      'certificate',
      'CA certificate',
      'ca.crt',
    ) ?? pemFile(cluster['certificate-authority'], 'certificate-authority', 'certificate', read);
  if (ca) return `${at}: ${theCluster}: ${ca}`;
  const connection = clusterAuthProblem(cluster);
  if (connection) return `${at}: ${theCluster}: ${connection}`;

  // The user, if the context names one (none is anonymous access).
  if (!userEntry) return undefined;
  const user = record(userEntry['user']);
  const theUser = `user ${q(userName)} (of ${ofCtx})`;
  const problem =
    pemData(
      user['client-certificate-data'],
      'client-certificate-data',
      'certificate',
      'client certificate',
      'client.crt',
    ) ??
    pemFile(user['client-certificate'], 'client-certificate', 'certificate', read) ??
    pemData(user['client-key-data'], 'client-key-data', 'key', 'private key', 'client.key') ??
    pemFile(user['client-key'], 'client-key', 'key', read) ??
    readable(user['token-file'], 'token-file', read);
  if (problem) return `${at}: ${theUser}: ${problem}`;
  const hasCert = given(user['client-certificate-data']) || given(user['client-certificate']);
  const hasKey = given(user['client-key-data']) || given(user['client-key']);
  if (hasCert && !hasKey) {
    return `${at}: ${theUser} has a client certificate but no client key: add client-key-data (or client-key)`;
  }
  if (hasKey && !hasCert) {
    return `${at}: ${theUser} has a client key but no client certificate: add client-certificate-data (or client-certificate)`;
  }
  const exec = user['exec'];
  if (exec !== undefined && exec !== null) {
    const command = record(exec)['command'];
    if (typeof command !== 'string' || command.trim() === '') {
      return `${at}: ${theUser} has an exec section without command: set exec.command to the credential plugin to run`;
    }
    if (record(exec)['interactiveMode'] === 'Always') {
      return `${at}: ${theUser} has an exec plugin with interactiveMode: Always, which needs a terminal, and this run has none: set interactiveMode to IfAvailable or Never, with a plugin that can log in without one`;
    }
  }
  const auth = userAuthProblem(user, read, now);
  return auth ? `${at}: ${theUser}: ${auth}` : undefined;
}

const WHAT = { certificate: 'certificate', key: 'private key' } as const;
const MARKER = { certificate: '-----BEGIN CERTIFICATE-----', key: '-----BEGIN … PRIVATE KEY-----' } as const;

/** A problem with a base64 PEM field (`*-data`), or undefined when it is absent or good. */
function pemData(
  value: unknown,
  field: string,
  kind: 'certificate' | 'key',
  label: string,
  example: string,
): string | undefined {
  if (!given(value)) return undefined;
  const whose = `the ${label}'s PEM file, base64-encoded`;
  if (typeof value !== 'string') return `${field} is not a string: it should be ${whose}`;
  if (value.trimStart().startsWith('-----BEGIN')) {
    const fileField = field.replace(/-data$/, '');
    return `${field} holds PEM text, not its base64: base64-encode it (base64 -w0 ${example}) or use ${fileField} with the file's path`;
  }
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    return `${field} is not valid base64: it should be ${whose} (base64 -w0 ${example})`;
  }
  const pem = Buffer.from(compact, 'base64').toString('latin1');
  const problem = pemProblem(pem, kind);
  if (problem === 'no-pem')
    return `${field} does not decode to a PEM ${WHAT[kind]} (${MARKER[kind]}): it should be ${whose}`;
  if (problem === 'bad-pem') {
    return `${field} holds a PEM block that is not a valid ${kind === 'key' ? 'private key' : 'X.509 certificate'}: replace it with ${whose}`;
  }
  return undefined;
}

/** A problem with a PEM file field (`certificate-authority`, `client-key`, …), or undefined. */
function pemFile(value: unknown, field: string, kind: 'certificate' | 'key', read: FileReader): string | undefined {
  if (!given(value)) return undefined;
  if (typeof value !== 'string') return `${field} is not a string: it should be a file path`;
  let data: Buffer;
  try {
    data = read(value);
  } catch (err) {
    return `${field} ${value} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${PATH_HINT}`;
  }
  const problem = pemProblem(data.toString('latin1'), kind);
  if (problem === 'no-pem') return `${field} ${value} is not a PEM ${WHAT[kind]} (${MARKER[kind]})`;
  if (problem === 'bad-pem') {
    return `${field} ${value} holds a PEM block that is not a valid ${kind === 'key' ? 'private key' : 'X.509 certificate'}`;
  }
  return undefined;
}

function readable(value: unknown, field: string, read: FileReader): string | undefined {
  if (!given(value)) return undefined;
  if (typeof value !== 'string') return `${field} is not a string: it should be a file path`;
  try {
    read(value);
    return undefined;
  } catch (err) {
    return `${field} ${value} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): ${PATH_HINT}`;
  }
}

/** Whether `pem` holds parseable PEM of the kind: every certificate block must parse; a key must. */
function pemProblem(pem: string, kind: 'certificate' | 'key'): 'no-pem' | 'bad-pem' | undefined {
  if (kind === 'key') {
    if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem)) return 'no-pem';
    try {
      createPrivateKey(pem);
      return undefined;
    } catch {
      return 'bad-pem';
    }
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  if (!blocks) return 'no-pem';
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch {
      return 'bad-pem';
    }
  }
  return undefined;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function entries(v: unknown): Entry[] {
  return Array.isArray(v) ? v.filter((e): e is Entry => typeof e === 'object' && e !== null) : [];
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
}

function given(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** A name quoted for a message; a name of a hostile length is cut (it is a kubeconfig's text). */
function q(name: unknown): string {
  return JSON.stringify(clip(String(name), 100));
}

/** The entries' names, quoted, for a message (cut when there are many). */
function names(list: Entry[]): string {
  const all = list.map((e) => q(e.name)).join(', ');
  return all === '' ? 'none' : truncate(all, { chars: 200, lines: 1 });
}
