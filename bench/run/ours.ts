// Our CLI as a tool of bench/run.ts: `node dist/cli.js apply` (or `diff` for the preview) with prune,
// its own inventory namespace and the given --concurrency, described from its JSON report, kustomize
// behind a wrapper that logs its runs; with a profiler (--profile), the profiled bundle instead, each
// run's profile collected after it.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNamespace, type CountingProxy } from '../common.ts';
import { CLI, KUSTOMIZE, NODE } from '../paths.ts';
import type { Profiler, ScenarioProfile } from '../profile.ts';
import { lastLine, type ProcRun } from './measure.ts';
import { OURS, PROFILED, type Scenario, type Tool } from './model.ts';

/**
 * Our CLI; with a profiler, the same CLI bundled with a source map, run under `node --cpu-prof` with
 * KR_TIMINGS and kustomize behind the profiler's wrapper, on its own tree (bench/profile.ts).
 */
export function oursTool(
  proxy: CountingProxy,
  workDir: string,
  concurrency: number,
  profiler?: { profiler: Profiler; profiles: ScenarioProfile[] },
): Tool {
  const kubeconfig = join(workDir, 'ours.kubeconfig');
  const p = profiler?.profiler;
  // kustomize behind a wrapper that logs each run, so that each row says whether the build ran in
  // process (no line) or ran kustomize; exec leaves the process tree as without it. kustomize gets
  // a reduced environment (src/kustomize/invoke.ts): the paths are written into the script.
  const wrapper = join(workDir, 'kustomize-ours');
  const log = `${wrapper}.log`;
  return {
    name: p ? PROFILED : OURS,
    version: p ? 'src/ bundled with a source map, node --cpu-prof' : 'dist/cli.js',
    prefix: p ? 'kp' : 'kr',
    waits: 'for its CRDs to be Established before their custom resources (wait: false, the default: no health checks)',
    ...(p ? {} : { kustomizeLog: log }),
    prepare: async () => {
      await writeFile(wrapper, `#!/bin/sh\necho "$1" >> '${log}'\nexec '${KUSTOMIZE}' "$@"\n`);
      await chmod(wrapper, 0o755);
      await proxy.kubeconfig(kubeconfig);
      await createNamespace(proxy, 'kr-inventory');
    },
    command: (s, tree) => [
      NODE,
      [
        ...(p ? [...p.run(s).nodeArgs, p.cli] : [CLI]),
        s === 'preview of a change' ? 'diff' : 'apply',
        '--root',
        tree.dir,
        // The monorepo's Flux Kustomization files (each with prune: true), or the one directory.
        ...(tree.kustomizations
          ? ['--kustomizations', tree.kustomizations]
          : ['--path', tree.units[0]!.path, '--prune']),
        '--inventory-namespace',
        'kr-inventory',
        '--kubeconfig',
        kubeconfig,
        '--kustomize-path',
        p ? p.kustomize : wrapper,
        '--concurrency',
        String(concurrency),
        '--output',
        'json',
      ],
      p ? p.run(s).env : {},
      s === 'preview of a change' ? [0, 1] : [0],
    ],
    ...(profiler
      ? {
          after: async (s: Scenario, r: ProcRun) => {
            if (r.spawnedAt === undefined || r.exitedAt === undefined) return;
            profiler.profiles.push(
              await profiler.profiler.collect(s, { spawnedAt: r.spawnedAt, exitedAt: r.exitedAt, toolCpuMs: r.cpuMs }),
            );
          },
        }
      : {}),
    describe: (r) => {
      try {
        const report = JSON.parse(r.stdout) as {
          counts?: Record<string, number>;
          pruned?: unknown[];
          error?: string;
        };
        if (report.error) return `error: ${lastLine(report.error)}`;
        const counts = { ...report.counts, pruned: report.pruned?.length ?? 0 };
        return Object.entries(counts)
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
      } catch {
        return `error: ${lastLine(r.stderr)}`;
      }
    },
  };
}
