// Flux's kustomize-controller as a tool of bench/run.ts: the real controller (test/flux) run out of
// cluster against the counting proxy, fed the tree as an ExternalArtifact, each scenario timed from
// its trigger until the Kustomization reports the revision applied.
import { join } from 'node:path';
import {
  applyKustomization,
  ArtifactServer,
  finished,
  FluxController,
  installFluxCrds,
  kustomizationPath,
  publishExternalArtifact,
  requestReconcile,
  testClusterClient,
  type FluxKustomization,
} from '../../test/flux/flux.ts';
import { cpuMsOf, createNamespace, type Cluster, type CountingProxy } from '../common.ts';
import { lastLine, peakRssKiBOf, RUN_TIMEOUT_MS } from './measure.ts';
import type { Tool } from './model.ts';
import type { Unit } from './tree.ts';

const FLUX_NAMESPACE = 'flux-system';

/**
 * Flux's kustomize-controller (test/flux: the real v1.9.6), out of cluster on this machine, its kubeconfig
 * pointing at the counting proxy. Its source is an ExternalArtifact whose status points at a tarball of
 * the tree on a loopback HTTP server (as source-controller would serve it); the Kustomization is Flux's
 * defaults plus prune: true. A scenario is timed from its trigger (publishing a new revision, creating the
 * Kustomization, or asking for a reconcile) until the Kustomization says it is done: Ready=True for its
 * generation, no Reconciling condition, lastAppliedRevision the revision published (and, for a reconcile
 * request, lastHandledReconcileAt the token asked for). The bench's own requests go straight to the
 * apiserver, uncounted; the controller's CPU is its process's during the scenario.
 */
export function fluxTool(
  proxy: CountingProxy,
  cluster: Cluster,
  workDir: string,
  peer: { name: string; prefix: string; version: string; qps?: number; burst?: number },
): Tool {
  const kubeconfig = join(workDir, `${peer.prefix}.kubeconfig`);
  const name = `${peer.prefix}-bench`;
  let client: Awaited<ReturnType<typeof testClusterClient>> | undefined;
  let artifacts: ArtifactServer | undefined;
  let controller: FluxController | undefined;
  let revision = '';
  let units: Unit[] = [];
  const flags =
    peer.qps === undefined
      ? 'its default flags'
      : `--kube-api-qps=${String(peer.qps)} --kube-api-burst=${String(peer.burst)}`;
  return {
    name: peer.name,
    version: `${peer.version}, ${flags}`,
    prefix: peer.prefix,
    waits:
      'for its CRDs and Namespaces to be Current (kstatus, polled every 2 s) before the rest (spec.wait: false, the default: no health checks); timed until the Kustomization reports the revision applied',
    skips: ['preview of a change'],
    prepare: async (tree) => {
      units = tree.units;
      await proxy.kubeconfig(kubeconfig);
      client = await testClusterClient(cluster.kubeconfig);
      await installFluxCrds(client);
      await createNamespace(proxy, FLUX_NAMESPACE);
      artifacts = await ArtifactServer.start(join(workDir, `${peer.prefix}-artifacts`));
      controller = await FluxController.start({
        kubeconfig,
        dir: join(workDir, `${peer.prefix}-flux`),
        ...(peer.qps === undefined ? {} : { qps: peer.qps, burst: peer.burst }),
      });
    },
    finish: async () => {
      // Suspended, so that the next controller started on this cluster leaves them alone.
      for (const u of units) {
        await client
          ?.request('PATCH', kustomizationPath(FLUX_NAMESPACE, u.name), {
            body: { spec: { suspend: true } },
            contentType: 'application/merge-patch+json',
          })
          .catch(() => undefined);
      }
      await controller?.stop();
      await artifacts?.close();
      client?.close();
    },
    reconcile: async (s, tree) => {
      if (!client || !artifacts || !controller) throw new Error(`${peer.name}: reconcile before prepare`);
      // Packing the tree is source-controller's work, before the trigger.
      const artifact = s === 'no-op re-run' ? undefined : await artifacts.publish(name, tree.dir);
      const pid = controller.pid;
      const cpu0 = await cpuMsOf(pid);
      // Counted from the trigger: whatever the controller did while the tree was packed is not this run's.
      proxy.reset();
      const started = performance.now();
      // One Kustomization per unit (the monorepo's in dependsOn levels), all fed by the one artifact.
      const tokens = new Map<string, string>();
      if (artifact) {
        await publishExternalArtifact(client, FLUX_NAMESPACE, name, artifact);
        revision = artifact.revision;
      }
      for (const u of units) {
        if (s === 'first apply') {
          const spec = {
            path: u.path === '.' ? './' : `./${u.path}`,
            prune: true,
            ...(u.dependsOn.length > 0 ? { dependsOn: u.dependsOn.map((d) => ({ name: d })) } : {}),
          };
          await applyKustomization(client, FLUX_NAMESPACE, u.name, spec, name);
        } else if (!artifact) {
          tokens.set(u.name, await requestReconcile(client, FLUX_NAMESPACE, u.name));
        }
      }
      const done = await Promise.all(
        units.map((u) => {
          const token = tokens.get(u.name);
          const want = { revision, ...(token === undefined ? {} : { token }) };
          return proxy.watchUntil<FluxKustomization>(
            kustomizationPath(FLUX_NAMESPACE),
            u.name,
            (obj) => finished(obj, want),
            RUN_TIMEOUT_MS,
          );
        }),
      );
      const wallMs = performance.now() - started;
      const cpu1 = await cpuMsOf(pid);
      const first = proxy.firstRequestAt();
      const readyOf = (k: FluxKustomization | undefined) => k?.status?.conditions?.find((c) => c.type === 'Ready');
      const failed = done.find((k) => readyOf(k)?.status !== 'True' || k?.status?.lastAppliedRevision !== revision);
      const shown = failed ?? done[0];
      const ready = readyOf(shown);
      const many =
        units.length > 1
          ? `${String(done.filter((k) => k !== failed).length)} of ${String(units.length)} Kustomizations; `
          : '';
      return {
        code: failed === undefined && done.every((k) => k !== undefined) ? 0 : 1,
        wallMs,
        firstRequestMs: first === undefined ? undefined : first - started,
        peakRssKiB: await peakRssKiBOf(pid),
        cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
        stdout: shown ? `${many}Ready=${ready?.status ?? '?'} (${ready?.reason ?? ''}): ${ready?.message ?? ''}` : '',
        stderr: done.every((k) => k !== undefined)
          ? ''
          : `not done after ${String(RUN_TIMEOUT_MS / 1000)} s; log: ${controller.logFile}`,
      };
    },
    describe: (r) => lastLine(r.code === 0 ? r.stdout : `${r.stdout} ${r.stderr}`),
  };
}
