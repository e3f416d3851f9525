/**
 * What of a kubeconfig is secret, for masking. The runner hides every registered value in every
 * later step of the job, so a kubeconfig is masked by its credentials and as a whole, never line by
 * line: its lines are mostly structure (`apiVersion: v1`, `kind: Config`, `- name: admin`), and a
 * mask of `kind: Config` turns every `kind: ConfigMap` of the job into `***Map`. Pure.
 */
import { MIN_SECRET_LENGTH } from '../objects/secret.js';
import { parseYamlValue } from '../objects/yaml.js';

/**
 * The fields whose value is a credential, wherever they sit (users[].user, an auth-provider's
 * config): a bearer token, a basic-auth password, the client key and certificate (the certificate
 * is public, but it names the user and is masked by the runtime registry too), OIDC tokens and
 * client secret. `username`, `token-file`, `client-key` (paths) and certificate-authority-data
 * (public) are not secret.
 */
export const CREDENTIAL_FIELDS: ReadonlySet<string> = new Set([
  'token',
  'password',
  'client-key-data',
  'client-certificate-data',
  'access-token',
  'refresh-token',
  'id-token',
  'client-secret',
]);

/** Fields holding a URL whose user info may carry a password. */
const URL_FIELDS = new Set(['server', 'proxy-url']);

/**
 * The credentials of a parsed kubeconfig: every CREDENTIAL_FIELDS value, every value of an exec
 * plugin's `env` list (AWS keys and the like), and the password of a server or proxy URL. Walks
 * the whole value (a kubeconfig of an odd shape is covered too), each object once (an alias makes
 * the parsed value circular).
 */
export function credentialsOf(doc: unknown): string[] {
  const out = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v !== 'string') return;
    for (const form of [v, v.trim()]) if (form.length >= MIN_SECRET_LENGTH) out.add(form);
  };
  const seen = new Set<object>();
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (CREDENTIAL_FIELDS.has(key)) add(value);
      else if (key === 'env' && Array.isArray(value)) {
        for (const e of value as unknown[]) add((e as { value?: unknown } | null)?.value);
      } else if (URL_FIELDS.has(key) && typeof value === 'string') add(urlPassword(value));
      stack.push(value);
    }
  }
  return [...out];
}

function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

/**
 * A kubeconfig's text as a value, or undefined when it is not one: it does not parse (with the
 * bounded parser), or it is not a mapping with a clusters, contexts or users list.
 */
function parseKubeconfig(text: string): object | undefined {
  let doc: unknown;
  try {
    doc = parseYamlValue(text, 'kubeconfig');
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const d = doc as Record<string, unknown>;
  return ['clusters', 'contexts', 'users'].some((k) => Array.isArray(d[k])) ? d : undefined;
}

/**
 * The credentials of a multi-line value that is a kubeconfig document, or undefined for any other
 * value (a scrubber takes those line by line). A quick look first: only a text naming one of the
 * lists is parsed.
 */
export function kubeconfigDocumentCredentials(value: string): string[] | undefined {
  if (!/\n/.test(value.trim()) || !/\b(clusters|contexts|users)\b/.test(value)) return undefined;
  const doc = parseKubeconfig(value);
  return doc === undefined ? undefined : credentialsOf(doc);
}

/** A line that is `key:` or `key: value` (or `- key: value`, or JSON's `"key": "value",`). */
const KEY_VALUE = /^(?:-\s+)?(["']?)[A-Za-z0-9_.-]+\1\s*:(?:\s.*)?$/;

/** A credential field and its value anywhere in a line (block, flow or JSON style). */
const CREDENTIAL = new RegExp(
  `(?:^|[\\s{,"'])(?:${[...CREDENTIAL_FIELDS].join('|')})["']?\\s*:\\s*(?:"([^"]*)"|'([^']*)'|([^\\s,{}[\\]"']+))`,
  'g',
);

/**
 * What to mask of a kubeconfig text that does not parse: its credential fields' values and every
 * line that is not a `key:` or `key: value` line of another field (a broken multi-line token, a
 * list item), but no line that is structure by its key. Such a kubeconfig fails the run before it
 * reaches a cluster; what can echo a part of it is the loader's error.
 */
function unparsedSecrets(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line === '---' || line === '...') continue;
    for (const m of line.matchAll(CREDENTIAL)) {
      const value = m[1] ?? m[2] ?? m[3] ?? '';
      if (value.length >= MIN_SECRET_LENGTH) out.push(value);
    }
    if (KEY_VALUE.test(line)) continue;
    const item = line.replace(/^-\s+/, '');
    if (item.length >= MIN_SECRET_LENGTH && /[A-Za-z0-9]/.test(item)) out.push(item);
  }
  return out;
}

/**
 * The values to mask for the kubeconfig input's content: the document whole (one value, never line
 * by line), the text as given when it came base64-encoded (as given and without its line breaks),
 * and each credential (see credentialsOf). A text that does not parse as a kubeconfig is masked
 * whole and by unparsedSecrets. None shorter than MIN_SECRET_LENGTH.
 */
export function kubeconfigMasks(content: string, given?: string): string[] {
  const out = new Set<string>();
  const add = (v: string) => {
    if (v.length >= MIN_SECRET_LENGTH) out.add(v);
  };
  add(content.trim());
  if (given !== undefined && given.trim() !== content.trim()) {
    add(given.trim());
    add(given.replace(/\s+/g, ''));
  }
  const doc = parseKubeconfig(content);
  for (const v of doc === undefined ? unparsedSecrets(content) : credentialsOf(doc)) add(v);
  return [...out];
}
