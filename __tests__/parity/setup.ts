// The parity suite's world: two identical tier-b test clusters, one for real Flux (kustomize-controller
// v1.10.1, out of cluster, fed by a loopback artifact server) and one for ours, each with the Flux CRDs.
// Two clusters, because both tools apply the very same trees (same namespaces, same cluster-scoped
// names, same Kustomization names) and must each find a cluster where nothing else owns them.
// At the end it prints `parity: M/N identical` from the per-case results in reports/parity/.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestProject } from 'vitest/node';
import {
  ArtifactServer,
  ensureNamespace,
  FluxController,
  installFluxCrds,
  testClusterClient,
} from '../../test/flux/flux.ts';
import { REPO, TOOLS } from '../helpers/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    parity: {
      fluxKubeconfig: string;
      oursKubeconfig: string;
      artifacts: string;
      artifactBase: string;
      fluxLog: string;
      work: string;
    };
  }
}

export const RESULTS = join(REPO, 'reports', 'parity');

async function startCluster(dir: string): Promise<{ kubeconfig: string; child: ChildProcess }> {
  const child = spawn(join(TOOLS, 'testcluster'), ['up', '--tier', 'b', '--dir', dir], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('KUBECONFIG=')) resolve(line.slice('KUBECONFIG='.length));
    });
    child.on('exit', (code) => {
      reject(new Error(`test cluster exited with ${code} before it was ready:\n${stderr.join('')}`));
    });
  });
  return { kubeconfig, child };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  for (const bin of [join(TOOLS, 'testcluster'), join(REPO, 'test/flux/bin/kustomize-controller')]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run "bash scripts/setup.sh" (or "bash .ci/run") first`);
  }
  await rm(RESULTS, { recursive: true, force: true });
  await mkdir(RESULTS, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'kr-parity-'));
  const started = Date.now();
  const [fluxCluster, oursCluster] = await Promise.all([
    startCluster(join(work, 'cluster-flux')),
    startCluster(join(work, 'cluster-ours')),
  ]);
  const fluxApi = await testClusterClient(fluxCluster.kubeconfig);
  const oursApi = await testClusterClient(oursCluster.kubeconfig);
  await Promise.all([installFluxCrds(fluxApi), installFluxCrds(oursApi)]);
  for (const api of [fluxApi, oursApi]) await ensureNamespace(api, 'flux-system', 'kr-parity-setup');
  const artifacts = await ArtifactServer.start(join(work, 'artifacts'));
  const flux = await FluxController.start({
    kubeconfig: fluxCluster.kubeconfig,
    dir: join(work, 'flux'),
    requeueDependency: '2s',
  });
  console.log(
    `parity: two test clusters, kustomize-controller (pid ${flux.pid}) and the artifact server ready in ${((Date.now() - started) / 1000).toFixed(1)}s (${work})`,
  );
  project.provide('parity', {
    fluxKubeconfig: fluxCluster.kubeconfig,
    oursKubeconfig: oursCluster.kubeconfig,
    artifacts: artifacts.dir,
    artifactBase: artifacts.base,
    fluxLog: flux.logFile,
    work,
  });
  return async () => {
    await flux.stop();
    await artifacts.close();
    fluxApi.close();
    oursApi.close();
    await Promise.all([stop(fluxCluster.child), stop(oursCluster.child)]);
    await summarise();
    if (!process.env['KR_PARITY_KEEP']) await rm(work, { recursive: true, force: true });
  };
}

/** Prints `parity: M/N identical` and writes reports/parity.md from the cases' result files. */
async function summarise(): Promise<void> {
  const files = (await readdir(RESULTS).catch(() => [])).filter((f) => f.endsWith('.json')).sort();
  const results = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(RESULTS, f), 'utf8')) as CaseResult),
  );
  if (results.length === 0) return;
  const identical = results.filter((r) => r.differences.length === 0).length;
  const listed = results.reduce((n, r) => n + r.differences.filter((d) => d.listedAs).length, 0);
  const unlisted = results.reduce((n, r) => n + r.differences.filter((d) => !d.listedAs).length, 0);
  const lines = [
    `# Parity with Flux kustomize-controller v1.10.1`,
    '',
    `parity: ${identical}/${results.length} identical; ${listed} differences listed in docs/flux-differences.md, ${unlisted} unlisted`,
    '',
    ...results.flatMap((r) => [
      `## ${r.case}: ${r.differences.length === 0 ? 'identical' : `${r.differences.length} differences`}`,
      ...r.differences.map(
        (d) =>
          `- ${d.step} ${d.aspect} ${d.subject}: ${d.message}${d.listedAs ? ` (listed: ${d.listedAs})` : ' (NOT LISTED)'}`,
      ),
      '',
    ]),
  ];
  await writeFile(join(REPO, 'reports', 'parity.md'), lines.join('\n'));
  console.log(
    `parity: ${identical}/${results.length} identical (${listed} listed differences, ${unlisted} unlisted; details in reports/parity.md)`,
  );
}

export interface CaseResult {
  case: string;
  /** Wall time of each side per step (the two run at once). */
  timings: { step: string; fluxMs: number; oursMs: number }[];
  differences: { step: string; aspect: string; subject: string; detail: string; message: string; listedAs?: string }[];
  /**
   * What each side said of its Kustomizations in a step with a difference (why each failed): a
   * difference seen once, on a busy machine, can then be read after the run.
   */
  said?: { step: string; flux: Record<string, string>; ours: Record<string, string> }[];
}
