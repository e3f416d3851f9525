/**
 * Starts the real Flux kustomize-controller against a cluster, out of cluster, and keeps it running until
 * SIGTERM / Ctrl-C:
 *
 *   node_modules/.bin/node test/flux/up.ts --kubeconfig FILE [--dir DIR] [--qps N --burst N]
 *
 * It installs the Flux CRDs (Kustomization, and the sources it watches), starts the controller with the
 * ExternalArtifact feature gate, and an artifact server on loopback; then prints where everything is, the
 * last line being `FLUX_LOG=<path>`. Give a Kustomization an ExternalArtifact source whose status points
 * at an artifact of that server (see test/flux/flux.ts: ArtifactServer.publish, publishExternalArtifact).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ArtifactServer, ensureNamespace, FluxController, installFluxCrds, testClusterClient } from './flux.ts';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    dir: { type: 'string' },
    qps: { type: 'string' },
    burst: { type: 'string' },
  },
});
const kubeconfig = values.kubeconfig ?? process.env['KUBECONFIG'];
if (!kubeconfig) {
  console.error('test/flux/up.ts: give --kubeconfig FILE (or set KUBECONFIG)');
  process.exit(2);
}
const dir = values.dir ?? (await mkdtemp(join(tmpdir(), 'kr-flux-')));
const client = await testClusterClient(kubeconfig);
await installFluxCrds(client);
await ensureNamespace(client, 'flux-system');
const artifacts = await ArtifactServer.start(join(dir, 'artifacts'));
const flux = await FluxController.start({
  kubeconfig,
  dir,
  ...(values.qps ? { qps: Number(values.qps) } : {}),
  ...(values.burst ? { burst: Number(values.burst) } : {}),
});
console.log(`FLUX_PID=${flux.pid}`);
console.log(`FLUX_ARGS=${flux.args.join(' ')}`);
console.log(`ARTIFACTS=${artifacts.base} (files in ${artifacts.dir})`);
console.log(`FLUX_LOG=${flux.logFile}`);

const stop = async (): Promise<void> => {
  await flux.stop();
  await artifacts.close();
  client.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
flux.child.on('exit', (code) => {
  console.error(`kustomize-controller exited with ${code}; log: ${flux.logFile}`);
  process.exit(1);
});
