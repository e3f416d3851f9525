// Benchmarks the bundled CLI (dist/cli.js) side by side with the tools users would pick instead
// (kubectl ApplySet, kapp, and Flux's kustomize-controller at its defaults and at QPS 500), on the same
// tier-a test cluster that it starts and stops itself. Prints figures; asserts nothing about time.
//   node_modules/.bin/node bench/run.ts [--shapes plain,overlay,monorepo,real,realrepo] [--objects 100,1000]
//     [--large] [--runs 5] [--repo80] [--run-timeout 300] [--concurrency-sweep 1,8,32]
// repo80 also times the CLI's `plan` of that tree (bench/run/plan.ts). KR_BENCH_DIST=DIR runs the bundle
// in DIR instead of dist/ (bench/paths.ts).
// Its parts are in bench/run/ (the tree, the tools, one size's run, the tables). See bench/README.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ACTION, CLI, KUSTOMIZE, REPO, RESULTS, stamp, TIME } from './paths.ts';
import { OURS, type SizeResult } from './run/model.ts';
import { benchPlan, planTables, type PlanResult } from './run/plan.ts';
import { setRunTimeout } from './run/measure.ts';
import { buildPeers } from './run/peers.ts';
import { benchSize } from './run/size.ts';
import { SHAPE_NAMES, SHAPES, type Shape } from './run/tree.ts';
import { sizeTables } from './run/tables.ts';

function toolVersion(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return (r.stdout || r.stderr || 'unknown').trim().split('\n')[0] ?? 'unknown';
}
// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string' },
      shapes: { type: 'string', default: SHAPES.join(',') },
      large: { type: 'boolean', default: false },
      concurrency: { type: 'string', default: '8' },
      'concurrency-sweep': { type: 'string', default: '' },
      peers: { type: 'string', default: 'kubectl,kapp,flux' },
      profile: { type: 'boolean', default: false },
      runs: { type: 'string', default: '1' },
      repo80: { type: 'boolean', default: false },
      'run-timeout': { type: 'string', default: '300' },
    },
  });
  const started = stamp();
  const profilesDir = values.profile ? join(RESULTS, `profile-${started}`) : undefined;
  const sizes = (values.objects ?? (values.large ? '100,1000,5000' : '100,1000'))
    .split(',')
    .map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 30)) {
    throw new Error(`--objects takes whole numbers of at least 30, comma-separated; got ${values.objects ?? ''}`);
  }
  const shapes = values.shapes
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '') as Shape[];
  if (shapes.some((x) => !SHAPE_NAMES.includes(x))) {
    throw new Error(`--shapes takes a comma-separated list of ${SHAPE_NAMES.join(', ')}; got ${values.shapes}`);
  }
  if (values.repo80 && !shapes.includes('repo80')) shapes.push('repo80');
  const runTimeout = Number(values['run-timeout']);
  if (!Number.isInteger(runTimeout) || runTimeout < 1) throw new Error('--run-timeout takes whole seconds');
  setRunTimeout(runTimeout * 1000);
  const rounds = Number(values.runs);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new Error('--runs takes a whole number from 1 to 20');
  // The plain directory at every size; the overlays and the monorepos at the sizes from 1,000 (a
  // monorepo: MONOREPO_UNITS Kustomizations of a twentieth each; the first, at 1,000 only), or at
  // every size given by --objects; repo80 once, at its own size (about 500 objects).
  const runs = shapes.flatMap((shape): { shape: Shape; n: number }[] =>
    shape === 'repo80'
      ? [{ shape, n: 500 }]
      : (shape === 'plain' || values.objects !== undefined ? sizes : sizes.filter((n) => n >= 1000))
          .filter((n) => shape !== 'monorepo' || values.objects !== undefined || n === 1000)
          .map((n) => ({ shape, n })),
  );
  const concurrency = Number(values.concurrency);
  const sweep = values['concurrency-sweep']
    .split(',')
    .filter((s) => s.trim() !== '')
    .map((s) => Number(s.trim()));
  if ([concurrency, ...sweep].some((c) => !Number.isInteger(c) || c < 1 || c > 64)) {
    throw new Error('--concurrency and --concurrency-sweep take whole numbers from 1 to 64');
  }
  for (const f of [CLI, ACTION]) if (!existsSync(f)) throw new Error(`${f} is missing: run "npm run bundle" first`);

  const state = { stopping: false };
  const onSignal = (sig: NodeJS.Signals) => {
    // benchSize's finally blocks stop the cluster once the running child is killed by the timeout;
    // a second signal exits at once.
    if (state.stopping) process.exit(130);
    state.stopping = true;
    process.stderr.write(`\n${sig}: stopping after the current run (again to exit now)\n`);
    process.exitCode = 130;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const wanted = values.peers
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
  const known = ['kubectl', 'kapp', 'flux'];
  if (wanted.some((x) => x !== '' && !known.includes(x))) {
    throw new Error(`--peers takes a comma-separated list of ${known.join(', ')}; got ${values.peers}`);
  }
  // bench/peers.sh builds every peer the first time: not when none is wanted (--peers '').
  const peers = (wanted.length === 0 ? [] : buildPeers()).filter((p) =>
    wanted.includes(p.tool === 'kustomize-controller' ? 'flux' : p.tool),
  );
  for (const p of peers) process.stderr.write(`peer ${p.tool}: ${p.bin ? `${p.bin} (${p.version})` : p.version}\n`);

  // repo80 also times `plan` (no cluster): the whole tree, then three changes with --base.
  const plan: PlanResult | undefined = shapes.includes('repo80') ? await benchPlan(rounds) : undefined;
  const results: SizeResult[] = [];
  for (const { shape, n } of runs) {
    if (state.stopping) break;
    results.push(await benchSize(shape, n, peers, concurrency, sweep, profilesDir, rounds));
  }
  // Every tool of any size (repo80 runs ours alone), in the order they first ran.
  const tools = [...new Map(results.flatMap((r) => r.tools).map((t) => [t.name, t])).values()];
  const peerNames = tools.map((t) => t.name).filter((t) => t !== OURS);

  const bundle = await readFile(ACTION);
  const cliSize = (await stat(CLI)).size;
  const cpus = os.cpus();
  const machine = {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    os: `${os.platform()} ${os.release()} ${os.arch()}`,
    osRelease: (await readFile('/etc/os-release', 'utf8').catch(() => '')).match(/^PRETTY_NAME="?([^"\n]*)/m)?.[1],
    node: process.version,
    go: toolVersion('go', ['version']),
    kustomize: toolVersion(KUSTOMIZE, ['version']),
    kubeApiserver: results[0]?.kubeApiserver ?? 'unknown',
    peakRss: existsSync(TIME) ? '/usr/bin/time %M' : 'unavailable',
  };
  const bundleInfo = {
    indexJsBytes: bundle.length,
    indexJsGzipBytes: gzipSync(bundle, { level: 9 }).length,
    cliJsBytes: cliSize,
  };

  const out = [
    `## kustomize-reconcile vs peers`,
    '',
    `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryMiB} MiB, ${machine.osRelease ?? machine.os}, Node ${machine.node}, ${machine.go}, kube-apiserver ${machine.kubeApiserver} (tier a: etcd + apiserver, no controllers), kustomize ${machine.kustomize}.`,
    '',
    `Tools: kustomize-reconcile ${CLI.replace(REPO, '')} (--concurrency ${concurrency}); ${peers
      .map((p) => `${p.tool}: ${p.bin ? p.version : `not run: ${p.version}`}`)
      .join('; ')}.`,
    '',
    'What each waits for before it is done:',
    '',
    ...tools.map((t) => `- **${t.name}**: ${t.waits}.`),
    '',
    'One cluster per size; each tool gets its own tree, namespaces and CRD group on it, and runs the scenarios in order' +
      (rounds > 1
        ? ` (the CLI tools in ${String(rounds)} rounds, each on a fresh tree, interleaved scenario by scenario in an order that turns each round; the tables show medians; the Flux controllers run one round)`
        : ' (the CLI tools interleaved scenario by scenario)') +
      '. Every tool talks to the apiserver through the same counting TLS proxy. Wall time is process start to exit (Flux: from the trigger, a new artifact revision or a reconcile request, to the Kustomization reporting it done). CPU is utime + stime from /proc (the apiserver and etcd processes, and the Flux controller) or `/usr/bin/time` (a CLI), so it includes whatever else the apiserver did meanwhile: the machine is shared, see the load averages. "1st req" is process start (Flux: the trigger) to the first request the proxy sees; RSS is the peak resident set of the process (`/usr/bin/time %M`; Flux: the controller VmHWM, its peak since it started). ✗ marks a run that failed (see the details); n/a, a scenario a tool has no equivalent for.',
    '',
    ...results.map((r) => sizeTables(r, peerNames)),
    ...(plan ? [planTables(plan)] : []),
    `Bundle: ${ACTION.replace(REPO, '')} ${bundleInfo.indexJsBytes} bytes (${bundleInfo.indexJsGzipBytes} gzip -9); ${CLI.replace(REPO, '')} ${bundleInfo.cliJsBytes} bytes.`,
    '',
  ].join('\n');
  process.stdout.write(out + '\n');

  await mkdir(RESULTS, { recursive: true });
  const base = join(RESULTS, `bench-${started}`);
  await writeFile(`${base}.md`, out);
  await writeFile(
    `${base}.json`,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        concurrency,
        machine,
        bundle: bundleInfo,
        peers,
        results,
        ...(plan ? { plan } : {}),
      },
      null,
      2,
    ) + '\n',
  );
  process.stderr.write(`results written to ${base}.md and .json\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
