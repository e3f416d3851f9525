import { KubeConfig } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseYamlValue } from '../kustomize/yaml.js';

/** Where the kubeconfig comes from: a file, the file's text (as an action input), or KUBECONFIG / ~/.kube/config. */
export type KubeconfigSource =
  { kind: 'path'; path: string } | { kind: 'content'; content: string } | { kind: 'default' };

/**
 * Loads a kubeconfig. The text is parsed with the `yaml` package (alias limit on) and handed to
 * client-node as JSON, so client-node's own YAML loader never sees user input. Relative file
 * references resolve against the kubeconfig's directory, as kubectl resolves them.
 */
export async function loadKubeConfig(source: KubeconfigSource, context?: string): Promise<KubeConfig> {
  const kc = new KubeConfig();
  if (source.kind === 'default') {
    kc.loadFromDefault();
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
      const reason = (e as Error).message.slice(where.length).replace(/^(, document \d+)?: /, '');
      throw new Error(`kubeconfig: ${where} is not valid YAML: ${reason}`, { cause: e });
    }
    if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { clusters?: unknown }).clusters)) {
      throw new Error(
        `kubeconfig: ${where} has no clusters list; expected a kubeconfig file (apiVersion: v1, kind: Config)`,
      );
    }
    try {
      kc.loadFromString(JSON.stringify(doc));
    } catch (e) {
      // client-node's messages name the entry ("clusters[0].cluster is missing") but not the file.
      const reason = ((e as Error).message.split('\n')[0] ?? '').slice(0, 300);
      throw new Error(`kubeconfig: ${where} is not a valid kubeconfig: ${reason}`, { cause: e });
    }
    if (source.kind === 'path') kc.makePathsAbsolute(dirname(resolve(source.path)));
  }
  if (context) {
    if (!kc.getContextObject(context)) {
      throw new Error(
        `kubeconfig: context "${context}" not found (has: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    }
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) {
    const current = (kc.getCurrentContext() as string | null | undefined) ?? '';
    const shown = current.length > 100 ? `${current.slice(0, 100)}…` : current;
    throw new Error(`kubeconfig: current context "${shown}" names no cluster`);
  }
  return kc;
}

/** The credential values in a kubeconfig, to be masked in logs before anything else runs. */
export function kubeconfigSecrets(kc: KubeConfig): string[] {
  const out: string[] = [];
  for (const user of kc.getUsers()) {
    for (const v of [user.token, user.password, user.keyData, user.certData]) {
      if (typeof v === 'string' && v.length >= 6) out.push(v);
    }
    const authToken = (user.authProvider as { config?: Record<string, unknown> } | undefined)?.config;
    for (const key of ['access-token', 'id-token', 'refresh-token', 'client-secret']) {
      const v = authToken?.[key];
      if (typeof v === 'string' && v.length >= 6) out.push(v);
    }
  }
  return out;
}
