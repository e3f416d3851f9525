// One size of bench/run.ts: a tier-a test cluster and counting proxy of its own, each tool on its own
// tree running the scenarios in order (rows measured with the apiserver's and etcd's CPU; the CLI
// tools interleaved, in --runs rounds), the --concurrency sweep of our no-op re-run, and the action's
// start-up to its first API request.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { cpuMsOf, startCluster, startProxy, type Cluster, type CountingProxy } from '../common.ts';
import { ACTION, KUSTOMIZE, NODE, REPO } from '../paths.ts';
import { startProfiler, type ScenarioProfile } from '../profile.ts';
import { fluxTool } from './flux.ts';
import { runMeasured, type ProcRun } from './measure.ts';
import { SCENARIOS, type Row, type Scenario, type SizeResult, type Tool } from './model.ts';
import { oursTool } from './ours.ts';
import { kappTool, kubectlTool, type Peer } from './peers.ts';
import { fmt } from './tables.ts';
import { CLUSTER_IPS, objectFor, writeTree, type Shape, type Tree } from './tree.ts';

export async function benchSize(
  shape: Shape,
  n: number,
  peers: Peer[],
  concurrency: number,
  sweep: number[],
  profilesDir: string | undefined,
  /** Rounds of every scenario (--runs): the CLI tools run each R times, interleaved; the controllers once. */
  runs = 1,
): Promise<SizeResult> {
  const workDir = await mkdtemp(join(os.tmpdir(), 'kr-bench-'));
  let cluster: Cluster | undefined;
  let proxy: CountingProxy | undefined;
  try {
    const t0 = performance.now();
    const loadBefore = os.loadavg();
    process.stderr.write(`\n== ${shape}, ${n} objects: starting a tier-a test cluster...\n`);
    cluster = await startCluster();
    process.stderr.write(`cluster ready in ${fmt((performance.now() - t0) / 1000, 1)} s\n`);
    proxy = await startProxy(cluster);
    const p = proxy;
    const version = await p.upstream('GET', '/version');
    const kubeApiserver = (JSON.parse(version.body) as { gitVersion?: string }).gitVersion ?? 'unknown';

    // The CLI tools are made afresh for each round (kubectl keeps its trees' ApplySet parents); the
    // controllers (Flux) run once, after them, one after the other.
    const profiles: ScenarioProfile[] = [];
    let profiler: Awaited<ReturnType<typeof startProfiler>> | undefined;
    if (profilesDir) {
      process.stderr.write('profile: bundling src/ with a source map...\n');
      profiler = await startProfiler(REPO, join(workDir, 'profile'), KUSTOMIZE, join(profilesDir, String(n)));
    }
    // repo80's parent builds Flux Kustomizations: only ours reconciles it.
    const withPeers = shape !== 'repo80';
    const kubectl = peers.find((x) => x.tool === 'kubectl');
    const kapp = peers.find((x) => x.tool === 'kapp');
    const cliTools = (): Tool[] => [
      oursTool(p, workDir, concurrency),
      ...(profiler ? [oursTool(p, workDir, concurrency, { profiler, profiles })] : []),
      ...(withPeers && kubectl?.bin ? [kubectlTool(p, workDir, kubectl.bin, kubectl.version)] : []),
      ...(withPeers && kapp?.bin ? [kappTool(p, workDir, kapp.bin, kapp.version, KUSTOMIZE)] : []),
    ];
    const flux = peers.find((x) => x.tool === 'kustomize-controller');
    const controllers: Tool[] =
      withPeers && flux?.bin
        ? [
            fluxTool(p, cluster, workDir, { name: 'Flux', prefix: 'fd', version: flux.version }),
            fluxTool(p, cluster, workDir, {
              name: 'Flux QPS 500',
              prefix: 'fq',
              version: flux.version,
              qps: 500,
              burst: 1000,
            }),
          ]
        : [];
    // Every tree on this cluster shares its /24 of service addresses: CLUSTER_IPS each while they fit.
    const trees = cliTools().length * runs + controllers.length;
    const clusterIPs = Math.min(CLUSTER_IPS, Math.floor(240 / trees));
    const treeFor = (tool: Tool, round: number) => {
      const prefix = round === 1 ? tool.prefix : `${tool.prefix}${String(round)}`;
      return writeTree(join(workDir, `tree-${prefix}`), n, prefix, shape, clusterIPs);
    };

    const rows: Row[] = [];
    const cpu = async () => ({
      apiserver: await cpuMsOf(cluster?.pids.apiserver),
      etcd: await cpuMsOf(cluster?.pids.etcd),
    });
    const measure = async (tool: Tool, scenario: string, tree: Tree, as: Scenario, round: number) => {
      if (tool.kustomizeLog) await writeFile(tool.kustomizeLog, '');
      const cpu0 = await cpu();
      let cmd: string;
      let args: string[];
      let env: NodeJS.ProcessEnv = {};
      let okCodes: number[];
      let r: ProcRun;
      if (tool.reconcile) {
        [cmd, args, okCodes] = [tool.name, [as], [0]];
        r = await tool.reconcile(as, tree);
      } else if (tool.command) {
        [cmd, args, env, okCodes] = tool.command(as, tree);
        r = await runMeasured(p, workDir, cmd, args, env);
        await tool.after?.(as, r);
      } else throw new Error(`tool ${tool.name} has neither a command nor a reconcile`);
      let counts = new Map(p.counts);
      let targets = new Map(p.targets);
      let retried = '';
      if (tool.applyTwiceOnFirstApply && as === 'first apply' && !okCodes.includes(r.code)) {
        // kubectl maps every object before it applies any, so custom resources whose CRD is in the same
        // apply fail the first time ("ensure CRDs are installed first"): users run it again. Both count.
        retried = `2 invocations (the first: ${tool.describe(r)}); `;
        const again = await runMeasured(p, workDir, cmd, args, env);
        for (const [k, v] of counts) p.counts.set(k, (p.counts.get(k) ?? 0) + v);
        for (const [k, v] of targets) p.targets.set(k, (p.targets.get(k) ?? 0) + v);
        counts = new Map(p.counts);
        targets = new Map(p.targets);
        r = {
          ...again,
          wallMs: r.wallMs + again.wallMs,
          firstRequestMs: r.firstRequestMs,
          peakRssKiB: Math.max(r.peakRssKiB ?? 0, again.peakRssKiB ?? 0) || undefined,
          cpuMs: r.cpuMs === undefined || again.cpuMs === undefined ? undefined : r.cpuMs + again.cpuMs,
        };
      }
      const cpu1 = await cpu();
      const delta = (a: number | undefined, b: number | undefined) =>
        a === undefined || b === undefined ? undefined : Math.round(b - a);
      const row: Row = {
        objects: n,
        tool: tool.name,
        scenario,
        command: [cmd === NODE ? 'node' : cmd.split('/').pop(), ...args.slice(cmd === NODE ? 1 : 0, 3)].join(' '),
        exitCode: r.code,
        ok: okCodes.includes(r.code),
        wallMs: Math.round(r.wallMs),
        firstRequestMs: r.firstRequestMs === undefined ? undefined : Math.round(r.firstRequestMs),
        requests: p.total(),
        requestsByKind: Object.fromEntries([...counts].sort()),
        requestsByTarget: Object.fromEntries([...targets].sort()),
        peakRssMiB: r.peakRssKiB === undefined ? undefined : Math.round((r.peakRssKiB / 1024) * 10) / 10,
        toolCpuMs: r.cpuMs === undefined ? undefined : Math.round(r.cpuMs),
        apiserverCpuMs: delta(cpu0.apiserver, cpu1.apiserver),
        etcdCpuMs: delta(cpu0.etcd, cpu1.etcd),
        note: retried + tool.describe(r),
        round,
      };
      if (tool.kustomizeLog) {
        const log = await readFile(tool.kustomizeLog, 'utf8').catch(() => '');
        row.kustomizeBuilds = log.split('\n').filter((l) => l === 'build').length;
      }
      rows.push(row);
      process.stderr.write(
        `${tool.name} / ${scenario}: exit ${row.exitCode}, ${row.wallMs} ms, ${row.requests} requests` +
          `${row.ok ? '' : ` FAILED: ${row.note ?? ''}`}\n`,
      );
      return row;
    };

    // Each round: every CLI tool on a fresh tree of its own (its own namespaces, CRD group, inventory,
    // ApplySet or app), the tools interleaved scenario by scenario, in an order that turns each round.
    let oursTree: Tree | undefined;
    let tools: Tool[] = [];
    for (let round = 1; round <= runs; round++) {
      tools = cliTools();
      const order = [...tools.slice((round - 1) % tools.length), ...tools.slice(0, (round - 1) % tools.length)];
      const treeOf = new Map<Tool, Tree>();
      try {
        for (const tool of tools) {
          const tree = await treeFor(tool, round);
          treeOf.set(tool, tree);
          process.stderr.write(`${tool.name}: preparing (round ${String(round)} of ${String(runs)})...\n`);
          await tool.prepare(tree);
        }
        oursTree = treeOf.get(tools[0]!);
        for (const s of SCENARIOS) {
          const gone = new Map<Tool, number>();
          for (const [tool, tree] of treeOf) {
            if (s === 'preview of a change') await tree.change();
            if (s === '10% removed (prune)') gone.set(tool, await tree.removeTenth());
          }
          for (const tool of order) {
            if (tool.skips?.includes(s)) continue;
            const row = await measure(tool, s, treeOf.get(tool)!, s, round);
            if (gone.has(tool)) row.note = `${String(gone.get(tool))} objects removed; ${row.note ?? ''}`;
          }
        }
      } finally {
        for (const tool of tools) await tool.finish?.();
      }
    }
    for (const tool of controllers) {
      const tree = await treeFor(tool, 1);
      process.stderr.write(`${tool.name}: preparing...\n`);
      await tool.prepare(tree);
      try {
        for (const s of SCENARIOS) {
          if (s === 'preview of a change') await tree.change();
          if (tool.skips?.includes(s)) continue;
          if (s === '10% removed (prune)') {
            const gone = await tree.removeTenth();
            const row = await measure(tool, s, tree, s, 1);
            row.note = `${String(gone)} objects removed; ${row.note ?? ''}`;
            continue;
          }
          await measure(tool, s, tree, s, 1);
        }
      } finally {
        await tool.finish?.();
      }
    }
    const ours = tools[0]!;
    for (const c of sweep) {
      const scenario = `no-op re-run, --concurrency ${String(c)}`;
      await measure(oursTool(p, workDir, c), scenario, oursTree!, 'no-op re-run', runs);
      rows[rows.length - 1]!.tool = ours.name;
    }

    // Action start-up: dist/index.js from process start to its first API request (preview mode), on our
    // tree (the kustomize build comes first) and on a one-object tree (mostly loading the bundle).
    const summary = join(workDir, 'step-summary.md');
    const outputFile = join(workDir, 'github-output');
    await writeFile(summary, '');
    await writeFile(outputFile, '');
    const kubeconfig = await p.kubeconfig(join(workDir, 'ours.kubeconfig'));
    const tiny = join(workDir, 'tree-tiny');
    await mkdir(tiny, { recursive: true });
    await writeFile(join(tiny, 'cm.yaml'), stringify(objectFor('ConfigMap', 'tiny', 'kr-inventory', 1, '')));
    // No name input: the Kustomization's name is derived from the directory (no git remote) and the
    // path, as the CLI runs above derive it, so the preview reads the inventory they wrote.
    const startAction = async (dir: string) => {
      const action = await runMeasured(p, workDir, NODE, [ACTION], {
        GITHUB_WORKSPACE: dir,
        GITHUB_STEP_SUMMARY: summary,
        GITHUB_OUTPUT: outputFile,
        INPUT_KUBECONFIG: kubeconfig,
        ...(dir === tiny || oursTree?.kustomizations === undefined
          ? { INPUT_PATH: dir === tiny ? '.' : oursTree!.units[0]!.path, INPUT_PRUNE: 'true' }
          : { INPUT_KUSTOMIZATIONS: oursTree.kustomizations }),
        INPUT_MODE: 'preview',
        'INPUT_KUSTOMIZE-PATH': KUSTOMIZE,
        'INPUT_INVENTORY-NAMESPACE': 'kr-inventory',
        INPUT_COMMENT: 'false',
        'INPUT_CHECK-RUN': 'false',
      });
      return {
        firstRequestMs: action.firstRequestMs === undefined ? undefined : Math.round(action.firstRequestMs),
        wallMs: Math.round(action.wallMs),
        exitCode: action.code,
        requests: p.total(),
      };
    };
    const startup = await startAction(oursTree!.dir);
    const startupTiny = await startAction(tiny);
    process.stderr.write(
      `action start-up: first API request after ${fmt(startup.firstRequestMs)} ms (exit ${startup.exitCode}, ${startup.wallMs} ms); one-object tree: ${fmt(startupTiny.firstRequestMs)} ms\n`,
    );
    return {
      shape,
      objects: oursTree?.objects ?? n,
      runs,
      rows,
      tools: [...tools, ...controllers].map((t) => ({ name: t.name, version: t.version, waits: t.waits })),
      startup,
      startupTiny,
      kubeApiserver,
      loadBefore,
      loadAfter: os.loadavg(),
      ...(profilesDir ? { profiles } : {}),
    };
  } finally {
    await proxy?.close().catch(() => undefined);
    await cluster?.stop().catch(() => undefined);
    await rm(workDir, { recursive: true, force: true });
  }
}
