// KubeConfig alone: the package's index also loads its API client, watch, exec, cp and the rest.
import type { ConfigOptions } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { installExecCredentials } from './exec-credential.js';
import { credentialsOf } from './kubeconfig-secrets.js';
import { kubeconfigProblem } from './kubeconfig-check.js';
import { DEFAULT_TIMEOUTS } from './timeouts.js';
import { parseYamlValue, YamlError } from '../objects/yaml.js';

/** Where the kubeconfig comes from: a file, the file's text (as an action input), or KUBECONFIG / ~/.kube/config. */
export type KubeconfigSource =
  { kind: 'path'; path: string } | { kind: 'content'; content: string } | { kind: 'default' };

/** Entries that client-node cannot read are left out: only the ones the context uses matter, and they are checked. */
const FILTER: ConfigOptions = { onInvalidEntry: 'filter' };

/**
 * Loads a kubeconfig. The text is parsed with the `yaml` package (alias limit on) and handed to
 * client-node as JSON, so client-node's own YAML loader never sees user input. Relative file
 * references resolve against the kubeconfig's directory, as kubectl resolves them. The context in
 * use, its cluster and its user are checked first (see kubeconfigProblem); entries the context does
 * not use may be broken. Exec credential plugins run at most `execTimeoutMs`.
 */
export async function loadKubeConfig(
  source: KubeconfigSource,
  context?: string,
  opts: { execTimeoutMs?: number } = {},
): Promise<KubeConfig> {
  const kc = new KubeConfig();
  let baseDir: string | undefined;
  if (source.kind === 'default') {
    kc.loadFromDefault(FILTER);
    const problem = kubeconfigProblem(JSON.parse(kc.exportConfig()), 'from $KUBECONFIG or ~/.kube/config', context);
    if (problem) throw new Error(problem);
  } else {
    const text =
      source.kind === 'path'
        ? await readFile(source.path, 'utf8').catch((e: unknown) => {
            const code = (e as NodeJS.ErrnoException).code ?? String(e);
            throw new Error(`kubeconfig: cannot read ${source.path}: ${code}`, { cause: e });
          })
        : source.content;
    const where = source.kind === 'path' ? source.path : 'the kubeconfig input';
    let doc: unknown;
    try {
      doc = parseYamlValue(text, where);
    } catch (e) {
      const reason = e instanceof YamlError ? e.problem : (e as Error).message;
      throw new Error(`kubeconfig: ${where} is not valid YAML: ${reason}`, { cause: e });
    }
    if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { clusters?: unknown }).clusters)) {
      throw new Error(
        `kubeconfig: ${where} has no clusters list; expected a kubeconfig file (apiVersion: v1, kind: Config)`,
      );
    }
    if (source.kind === 'path') {
      baseDir = dirname(resolve(source.path));
      absoluteTokenFiles(doc, baseDir);
    }
    const dir = baseDir;
    const problem = kubeconfigProblem(doc, where, context, (p) => readFileSync(dir ? resolve(dir, p) : p));
    if (problem) throw new Error(problem);
    try {
      kc.loadFromString(JSON.stringify(doc), FILTER);
    } catch (e) {
      // client-node's messages name the entry ("clusters[0].cluster is missing") but not the file.
      const reason = ((e as Error).message.split('\n')[0] ?? '').slice(0, 300);
      throw new Error(`kubeconfig: ${where} is not a valid kubeconfig: ${reason}`, { cause: e });
    }
    if (baseDir) kc.makePathsAbsolute(baseDir);
  }
  if (context) kc.setCurrentContext(context);
  installExecCredentials(kc, opts.execTimeoutMs ?? DEFAULT_TIMEOUTS.requestMs, baseDir);
  return kc;
}

/** client-node reads token-file relative to the working directory; kubectl, relative to the kubeconfig. */
function absoluteTokenFiles(doc: object, dir: string): void {
  const users = (doc as { users?: unknown }).users;
  if (!Array.isArray(users)) return;
  for (const u of users as unknown[]) {
    const user = typeof u === 'object' && u !== null ? (u as { user?: unknown }).user : undefined;
    if (typeof user !== 'object' || user === null) continue;
    const fields = user as Record<string, unknown>;
    if (typeof fields['token-file'] === 'string' && fields['token-file'] !== '') {
      fields['token-file'] = resolve(dir, fields['token-file']);
    }
  }
}

/**
 * The credential values in a kubeconfig, to be masked in logs before anything else runs: as the
 * input's masks find them (kubeconfig-secrets.ts), in the configuration client-node loaded (a
 * token-file's token is in `token` there).
 */
export function kubeconfigSecrets(kc: KubeConfig): string[] {
  return credentialsOf(JSON.parse(kc.exportConfig()));
}
