// Runs of the engine on the shared test cluster with the settings most integration tests use.
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { settingsOf, type OptionValues, type Settings } from '../../src/options/settings.js';
import { freshNamespace, kubeconfigPath, writeTree } from './cluster.js';
import { reconcile, type Hooks } from './engine.js';
import { KUSTOMIZE } from './paths.js';

export { forkHint, reconcile, refuseCrossNamespaceRefs, type Hooks } from './engine.js';

/** Where a run's log lines go: an array collecting them, or a function. */
export type LogSink = string[] | Hooks['log'];

/**
 * The raw settings of a test run of `root`: the shared cluster's kubeconfig, the pinned kustomize, and
 * the Kustomization file ks.yaml unless `raw` names a path or Kustomization files, and sources on
 * loopback allowed; `raw` wins.
 */
export function testRawSettings(root: string, raw: Partial<OptionValues> = {}): OptionValues {
  const named = raw.path !== undefined || raw.kustomizations !== undefined;
  return {
    kubeconfig: { kind: 'path', path: kubeconfigPath() },
    root,
    ...(named ? {} : { kustomizations: ['ks.yaml'] }),
    kustomizeBin: KUSTOMIZE,
    // The tests' git servers, registries and object stores listen on loopback.
    allowPrivateSourceHosts: true,
    ...raw,
  };
}

/** testRawSettings, normalised as the action and the CLI normalise their inputs. */
export function testSettings(root: string, raw: Partial<OptionValues> = {}): Settings {
  return settingsOf(testRawSettings(root, raw));
}

/** Reconciles `root` with testSettings(root, raw): log lines go to `log`, credentials to `secret`. */
export function reconcileTree(
  root: string,
  raw: Partial<OptionValues> = {},
  log: LogSink = [],
  secret: Hooks['secret'] = () => {},
): Promise<Report> {
  const sink = Array.isArray(log) ? (line: string) => void log.push(line) : log;
  return reconcile(testSettings(root, raw), { log: sink, secret });
}

/**
 * Creates a fresh namespace, writes `files(ns)` into a new tree and reconciles it once
 * (reconcileTree): the set-up of a test whose objects live in a namespace of their own.
 */
export async function reconcileIn(
  client: ClusterClient,
  files: (ns: string) => Record<string, string>,
  raw: Partial<OptionValues> = {},
  log: LogSink = [],
): Promise<{ ns: string; root: string; report: Report }> {
  const ns = await freshNamespace(client);
  const root = await writeTree(files(ns));
  return { ns, root, report: await reconcileTree(root, raw, log) };
}
