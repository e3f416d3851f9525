import { ClusterClient } from './cluster/client.js';
import { Discovery } from './cluster/discovery.js';
import { kubeconfigSecrets, loadKubeConfig } from './cluster/kubeconfig.js';
import { build } from './kustomize/build.js';
import type { Report } from './report/model.js';
import type { Settings } from './settings.js';
import { applyAll, ApplyError } from './ssa/apply.js';
import { countActions, type ChangeSetEntry } from './ssa/changeset.js';

export interface Hooks {
  /** Progress lines (one per applied object). */
  log: (line: string) => void;
  /** Called with every credential as soon as it is known, so the caller can mask it. */
  secret: (value: string) => void;
}

/** One Kustomization end to end: build, plan, apply (unless previewing). Failures land in the report. */
export async function reconcile(settings: Settings, hooks: Hooks): Promise<Report> {
  const started = Date.now();
  let changeset: ChangeSetEntry[] = [];
  let server = '';
  let client: ClusterClient | undefined;
  const finish = (error?: string): Report => ({
    mode: settings.mode,
    path: settings.path,
    server,
    ok: error === undefined,
    changeset,
    counts: countActions(changeset),
    durationMs: Date.now() - started,
    ...(error !== undefined ? { error } : {}),
  });
  try {
    const kc = await loadKubeConfig(settings.kubeconfig, settings.context);
    kubeconfigSecrets(kc).forEach(hooks.secret);
    client = new ClusterClient(kc);
    server = client.server;
    const built = await build({ root: settings.root, path: settings.path, kustomizeBin: settings.kustomizeBin });
    if (built.skipped.length > 0) {
      hooks.log(`Skipped ${built.skipped.length} YAML file(s) without Kubernetes objects: ${built.skipped.join(', ')}`);
    }
    changeset = await applyAll(client, new Discovery(client), built.objects, {
      fieldManager: settings.fieldManager,
      dryRunOnly: settings.mode !== 'apply',
      concurrency: settings.concurrency,
      log: hooks.log,
    });
    return finish();
  } catch (err) {
    if (err instanceof ApplyError) changeset = err.changeset;
    return finish(err instanceof Error ? err.message : String(err));
  } finally {
    client?.close();
  }
}
