// Starts one real test cluster (tier b: etcd, kube-apiserver, controller-manager, scheduler and
// kwok) for the whole integration run, and stops it afterwards. Set KR_TEST_KUBECONFIG to reuse a
// cluster that is already running (for example one from `npm run cluster:up`).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestProject } from 'vitest/node';
import { REPO, TESTCLUSTER } from './paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}

let child: ChildProcess | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const reuse = process.env['KR_TEST_KUBECONFIG'];
  if (reuse) {
    project.provide('kubeconfig', reuse);
    return async () => {};
  }
  const bin = TESTCLUSTER;
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: run "npm run cluster:build" (or "bash .ci/run") first`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'kr-testcluster-'));
  const started = Date.now();
  child = spawn(bin, ['up', '--tier', 'b', '--dir', dir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child!.stdout! });
    lines.on('line', (line) => {
      if (line.startsWith('KUBECONFIG=')) resolve(line.slice('KUBECONFIG='.length));
    });
    child!.on('exit', (code) => {
      reject(new Error(`test cluster exited with ${code} before it was ready:\n${stderr.join('')}`));
    });
  });
  console.log(`test cluster (tier b) ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${kubeconfig}`);
  project.provide('kubeconfig', kubeconfig);
  return async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.on('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
}
