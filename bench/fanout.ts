// Benchmarks the fan-out (plan → one process per Kustomization with --select → report) against one
// job that reconciles every Kustomization, on a tier-a test cluster that it starts and stops itself,
// and models wall time against runner count for many clusters. Prints figures; asserts nothing about
// time, but exits 1 when the fan-out's results differ from the one job's (a correctness check).
//   node_modules/.bin/node bench/fanout.ts [--kustomizations 100] [--objects 50] [--runners 2,4,8] [--overhead 20]
// Its parts are in bench/fanout/ (the repository, the processes, the scenarios, the model, the tables).
// See bench/README.md.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster, startProxy, type Cluster, type CountingProxy } from './common.ts';
import { children, lastLine, run } from './fanout/proc.ts';
import { git, GLOB, graphFor, writeRepo } from './fanout/repo.ts';
import { clusterState, type Plan, type PlanEntry } from './fanout/report.ts';
import { compare, fanOut, oneJob, planOf, type Ctx, type ScenarioResult } from './fanout/scenarios.ts';
import { levelMajor, simJobs, simulate } from './fanout/simulate.ts';
import { int, jobTable, label, mmss, quantile, requestTable, s1, s2, scenarioTable, table } from './fanout/tables.ts';
import { CLI, NODE, REPO, RESULTS, stamp } from './paths.ts';

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kustomizations: { type: 'string', default: '100' },
      objects: { type: 'string', default: '50' },
      runners: { type: 'string', default: '2,4,8' },
      overhead: { type: 'string', default: '20' },
      clusters: { type: 'string', default: '20' },
      'model-runners': { type: 'string', default: '1,2,4,8,16,20,40,64' },
      'model-from': { type: 'string' },
      rerun: { type: 'boolean', default: true },
      'no-rerun': { type: 'boolean', default: false },
    },
  });
  const n = Number(values.kustomizations);
  const m = Number(values.objects);
  const runnerList = values.runners.split(',').map((x) => Number(x.trim()));
  const overheadMs = Number(values.overhead) * 1000;
  const clusters = Number(values.clusters);
  const modelRunners = values['model-runners'].split(',').map((x) => Number(x.trim()));
  const rerun = values.rerun && !values['no-rerun'];
  if (!Number.isInteger(n) || n < 2 || n > 1000)
    throw new Error('--kustomizations takes a whole number from 2 to 1000');
  if (!Number.isInteger(m) || m < 1 || m > 2000) throw new Error('--objects takes a whole number from 1 to 2000');
  if (runnerList.some((r) => !Number.isInteger(r) || r < 1 || r > 64))
    throw new Error('--runners takes whole numbers from 1 to 64, comma-separated');
  if (!Number.isFinite(overheadMs) || overheadMs < 0) throw new Error('--overhead takes seconds, 0 or more');
  if (!Number.isInteger(clusters) || clusters < 1 || clusters > 200)
    throw new Error('--clusters takes a whole number from 1 to 200');
  if (modelRunners.some((r) => !Number.isInteger(r) || r < 1))
    throw new Error('--model-runners takes whole numbers of at least 1');
  const modelFrom = values['model-from'] === undefined ? Math.min(...runnerList) : Number(values['model-from']);
  if (!runnerList.includes(modelFrom)) throw new Error('--model-from must be one of --runners');
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run bundle" first`);
  const help = spawnSync(NODE, [CLI, '--help'], { encoding: 'utf8' }).stdout;
  if (!help.includes('--select')) throw new Error(`${CLI} has no --select (plan, report): run "npm run bundle" first`);

  const state = { stopping: false };
  const stopping = () => state.stopping;
  const onSignal = (sig: NodeJS.Signals) => {
    if (state.stopping) process.exit(130);
    state.stopping = true;
    process.stderr.write(`\n${sig}: stopping the running processes and the cluster (again to exit now)\n`);
    process.exitCode = 130;
    for (const c of children) c.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const graph = graphFor(n);
  const work = await mkdtemp(join(os.tmpdir(), 'kr-fanout-'));
  let cluster: Cluster | undefined;
  let proxy: CountingProxy | undefined;
  const results: ScenarioResult[] = [];
  let planMs = 0;
  const info = { modelPlanMs: 0, kubeApiserver: 'unknown' };
  let modelPlan: Plan | undefined;
  const plans = new Map<string, Plan>();
  const loadStart = os.loadavg();
  try {
    process.stderr.write(`starting the test cluster ...\n`);
    cluster = await startCluster();
    proxy = await startProxy(cluster);
    const version = await proxy.upstream('GET', '/version');
    info.kubeApiserver = (JSON.parse(version.body) as { gitVersion?: string }).gitVersion ?? 'unknown';
    const ctx: Ctx = {
      proxy,
      cluster,
      kubeconfig: await proxy.kubeconfig(join(work, 'kubeconfig')),
      work,
      graph,
      objects: m,
    };

    // The model's tree first (no cluster needed): clusters × n Kustomization files, planned by the CLI.
    const modelRepo = join(work, 'model');
    await writeRepo(
      modelRepo,
      graph,
      1,
      'flux-system',
      Array.from({ length: clusters }, (_, c) => `clusters/c${String(c + 1).padStart(2, '0')}`),
    );
    const mp = await run(
      NODE,
      [CLI, 'plan', '--kustomizations', 'clusters/*/*.yaml', '--output', 'json'],
      modelRepo,
      join(work, 'plan.rss'),
    );
    if (mp.code !== 0)
      throw new Error(`plan of the ${String(clusters)}-cluster tree failed (exit ${mp.code}): ${lastLine(mp)}`);
    modelPlan = JSON.parse(mp.stdout) as Plan;
    info.modelPlanMs = mp.endedAt - mp.startedAt;

    const scenarios: { name: string; runners: number | 'one job' }[] = [
      { name: 'one', runners: 'one job' },
      ...runnerList.map((r) => ({ name: `r${String(r)}`, runners: r })),
    ];
    const repos = new Map<string, { repo: string; namespace: string; plan?: Plan }>();
    for (const sc of scenarios) {
      if (stopping()) break;
      const namespace = `fo-${sc.name}`;
      const repo = join(work, sc.name, 'repo');
      await writeRepo(repo, graph, m, namespace);
      let plan: Plan | undefined;
      if (sc.runners !== 'one job') {
        const p = await planOf(repo, work);
        plan = p.plan;
        planMs = p.ms;
        plans.set(sc.name, plan);
        if (plan.count !== n) throw new Error(`the plan has ${String(plan.count)} entries, not ${String(n)}`);
      }
      repos.set(sc.name, { repo, namespace, ...(plan ? { plan } : {}) });
      const res =
        sc.runners === 'one job'
          ? await oneJob(ctx, sc.name, repo, namespace, 'first apply')
          : await fanOut(ctx, sc.name, repo, namespace, sc.runners, 'first apply', plan!);
      res.state = await clusterState(proxy, namespace, repo);
      results.push(res);
    }
    if (rerun && !stopping()) {
      // A no-op re-run at a new commit (an empty one), so that the fan-out's jobs wait for their
      // dependencies' runs of this commit rather than take the first run's as ready.
      const maxN = Math.max(...runnerList);
      for (const name of ['one', `r${String(maxN)}`]) {
        if (stopping()) break;
        const r = repos.get(name)!;
        git(r.repo, 'commit', '-q', '--allow-empty', '-m', 'no-op');
        const res =
          name === 'one'
            ? await oneJob(ctx, `${name}-rerun`, r.repo, r.namespace, 'no-op re-run')
            : await fanOut(ctx, `${name}-rerun`, r.repo, r.namespace, maxN, 'no-op re-run', r.plan!);
        res.state = await clusterState(proxy, r.namespace, r.repo);
        results.push(res);
      }
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await proxy?.close();
    await cluster?.stop();
    await rm(work, { recursive: true, force: true });
  }
  const loadEnd = os.loadavg();
  if (results.length === 0) throw new Error('no scenario ran');

  // Same results: each fan-out against the one job of its pass.
  for (const pass of ['first apply', 'no-op re-run'] as const) {
    const one = results.find((s) => s.pass === pass && s.runners === 'one job');
    if (!one) continue;
    for (const s of results.filter((x) => x.pass === pass && x.runners !== 'one job')) compare(one, s);
  }
  const firstPass = results.filter((s) => s.pass === 'first apply');
  const rerunPass = results.filter((s) => s.pass === 'no-op re-run');

  // The model.
  const source = firstPass.find((s) => s.runners === modelFrom);
  const oneJobWall = firstPass.find((s) => s.runners === 'one job')?.wallMs ?? 0;
  const works = source?.jobs.map((j) => j.workMs) ?? [];
  const median = quantile(works, 0.5);
  const p90 = quantile(works, 0.9);
  const entries = modelPlan.matrix.include;
  const byLevel = levelMajor(entries);
  const oneCluster = entries.filter((e) => e.cluster === entries[0]?.cluster);
  const modelRows = [...modelRunners, Number.POSITIVE_INFINITY].map((r) => {
    const R = Number.isFinite(r) ? r : entries.length;
    const sim = (list: PlanEntry[], d: number) =>
      simulate(
        simJobs(list, () => d),
        R,
        overheadMs,
      );
    const a = sim(entries, median);
    const b = sim(entries, p90);
    const c = sim(byLevel, median);
    const d = sim(byLevel, p90);
    const single = sim(oneCluster, median);
    const waves = Math.ceil(clusters / Math.min(R, clusters));
    const perCluster = waves * (oneJobWall + overheadMs);
    return {
      runners: Number.isFinite(r) ? r : 'unlimited',
      matrixMedianMs: a.wallMs,
      matrixP90Ms: b.wallMs,
      levelMedianMs: c.wallMs,
      levelP90Ms: d.wallMs,
      oneClusterMedianMs: single.wallMs,
      runnerMinutesMedian: a.billedMin,
      perClusterJobMs: perCluster,
      perClusterRunnerMinutes: clusters * Math.ceil((oneJobWall + overheadMs) / 60_000),
    };
  });
  // The model against the measurements: each run's own per-job work, its N, no overhead.
  const modelCheck = firstPass.flatMap((s) => {
    const plan = plans.get(s.name);
    if (s.runners === 'one job' || !plan) return [];
    const work = new Map(s.jobs.map((j) => [j.id, j.workMs]));
    const sim = simulate(
      simJobs(plan.matrix.include, (e) => work.get(e.id) ?? 0),
      s.runners,
      0,
    );
    return [{ runners: s.runners, measuredMs: s.wallMs, modelledMs: sim.wallMs }];
  });

  const cpus = os.cpus();
  const machine = {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    os: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    kubeApiserver: info.kubeApiserver,
    git: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim(),
  };
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const matched = results.every(
    (s) => s.same === undefined || (s.same.verdicts && s.same.objects && s.same.inventories),
  );
  const allOk = results.every((s) => s.ok);

  const out = [
    `## Fan-out: one job against N processes standing in for runners`,
    '',
    `${String(machine.cores)} cores (${machine.cpuModel}), ${String(machine.memoryMiB)} MiB, Node ${machine.node}, kube-apiserver ${info.kubeApiserver} (tier a: etcd + apiserver, no controllers), dist/cli.js at commit ${machine.git} (plus any uncommitted changes bundled). Load average (1, 5, 15 min) at the start ${la(loadStart)}, at the end ${la(loadEnd)}.`,
    '',
    `Tree: ${String(n)} Kustomizations (\`kustomize.toolkit.fluxcd.io/v1\`, prune: true, each a plain directory of ${String(m)} objects: ${String(m - Math.floor((m + 1) / 5))} ConfigMaps and ${String(Math.floor((m + 1) / 5))} Secrets), ${String(graph.levels)} dependsOn levels of ${String(graph.width)}; each Kustomization of level L > 0 depends on one (even columns) or two (odd columns) of level L − 1. The known critical path is column 0 (${graph.chain[0] ?? ''} → … → ${graph.chain.at(-1) ?? ''}, ${String(graph.chain.length)} Kustomizations). Each run has its own namespace (Kustomizations, inventories and objects) and its own git repository with one commit.`,
    '',
    `- **one job**: \`node dist/cli.js apply --kustomizations '${GLOB}' --output json\` (four Kustomizations at once, in dependsOn order); per-Kustomization figures are its report's \`durationMs\`.`,
    `- **N processes**: \`plan --output json\` (${s2(planMs)} s), then a pool of N workers taking the matrix entries in matrix order (level order), each entry one \`node dist/cli.js apply --kustomizations '${GLOB}' --select NS/NAME --report-file reports/ID.json --dependency-timeout 30m\`; a job whose dependency another process reconciles polls its inventory every 2 s and holds its worker meanwhile, as a job holds its runner under \`max-parallel: N\`. Then \`report --reports 'reports/*.json' --output json\` merges them. "Wall" is the first job's start to the last job's end (the merge is apart).`,
    `- **requests**: every request the processes made to the apiserver, through the counting proxy (the dependency polls included). **CLI CPU**: user + system of every process (\`/usr/bin/time\`). **work**: a job's wall time less its wait for dependencies (from its "waiting for" line to its last "is ready" line): Node start-up, reading the ${String(n)} Kustomization files, discovery, build, apply, inventory. **checked / slept**: the jobs that read a dependency's inventory (one that another job reconciles) / that found one not ready at the first read and slept at least one 2 s poll.`,
    `- **critical path**: the sum of the work of the Kustomizations along column 0 / along the dependsOn chain with the largest sum. **same results**: each Kustomization's verdict, counts and changeset (subject and action) from the merged report against the one job's report, the ConfigMaps and Secrets in the namespace (names, labels, data) and every inventory (entries, result, the recorded set and origin), the namespace and repository path normalised.`,
    '',
    `### First apply`,
    '',
    scenarioTable(firstPass, n),
    '',
    jobTable(firstPass),
    '',
    ...(rerunPass.length > 0
      ? [
          `### No-op re-run (a new, empty commit; the same objects)`,
          '',
          scenarioTable(rerunPass, n),
          '',
          jobTable(rerunPass),
          '',
        ]
      : []),
    `### Requests by method and target`,
    '',
    requestTable(results),
    '',
    ...results
      .filter((s) => s.same && s.same.differences.length > 0)
      .flatMap((s) => [`**${label(s)}, ${s.pass}: differences**`, '', ...s.same!.differences.map((d) => `- ${d}`), '']),
    `### Model: wall time against runners, ${String(clusters)} clusters × ${String(n)} Kustomizations`,
    '',
    `The matrix is the CLI's own plan of a \`clusters/<name>/\` tree of ${String(clusters)} clusters with the graph above (${String(entries.length)} entries, planned in ${s2(info.modelPlanMs)} s). Per-job work: the ${String(modelFrom)}-process run's, median ${s2(median)} s, p90 ${s2(p90)} s; start-up overhead ${s1(overheadMs)} s per job (\`--overhead\`). One job per cluster: ${String(clusters)} jobs of the one-job run's wall time (${s1(oneJobWall)} s) plus the overhead. Times are m:ss; runner-minutes are the sum over jobs of each job's minutes rounded up (GitHub bills per started minute).`,
    '',
    table(
      [
        'runners',
        'matrix order, median',
        'matrix order, p90',
        'level order, median',
        'level order, p90',
        'runner-minutes (matrix, median)',
        'one job per cluster',
        'runner-minutes (one per cluster)',
        '1 cluster, median',
      ],
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      modelRows.map((r) => [
        String(r.runners),
        mmss(r.matrixMedianMs),
        mmss(r.matrixP90Ms),
        mmss(r.levelMedianMs),
        mmss(r.levelP90Ms),
        int(r.runnerMinutesMedian),
        mmss(r.perClusterJobMs),
        int(r.perClusterRunnerMinutes),
        mmss(r.oneClusterMedianMs),
      ]),
    ),
    '',
    `Model check (one cluster, each run's own per-job work, overhead 0, against its measured wall): ${modelCheck.map((c) => `${String(c.runners)} processes ${s1(c.modelledMs)} s modelled / ${s1(c.measuredMs)} s measured`).join('; ')}.`,
    '',
    `Assumptions of the model:`,
    '',
    `- list scheduling: GitHub starts matrix jobs in matrix order as runners free up (\`max-parallel\` or a pool of self-hosted runners); "matrix order" is the plan's (cluster by cluster, each in level order), "level order" the same entries sorted by level across clusters (the plan's \`levels\` output), which the plan does not write;`,
    `- a job holds its runner from its start, through the start-up overhead and any wait for its dependencies, to its end; it starts polling its dependencies' inventories when the overhead ends and sees a dependency done at the first 2 s poll at or after that dependency's end;`,
    `- every job's work takes the same time (the median, or the p90 as a pessimistic case), whatever else runs: each runner has its own CPUs and each cluster its own apiserver, which the jobs of ${String(clusters)} clusters do not saturate. Measured here, the N processes share 2 cores with the cluster, which is why the model takes its per-job time from the ${String(modelFrom)}-process run (the least contended) — the larger N's work times are inflated by CPU contention (see the job table);`,
    `- the work includes Node start-up and reading every Kustomization file of the cluster, which a job does before it waits; the model puts it after the wait;`,
    `- the overhead (runner start-up, checkout, setup-node, the action's download) is the same for every job and is not spent waiting on anything else; the plan job before and the report job after the matrix are not counted; nothing fails.`,
    '',
    `Correctness: ${matched ? 'the fan-out runs matched the one job (verdicts, objects, inventories).' : '**the fan-out runs did not match the one job** (see the differences above).'}${allOk ? '' : ' **Some runs failed** (✗).'}`,
    '',
  ].join('\n');
  process.stdout.write(out + '\n');

  const base = join(RESULTS, `fanout-${stamp()}`);
  await mkdir(RESULTS, { recursive: true });
  await writeFile(`${base}.md`, out);
  await writeFile(
    `${base}.json`,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        parameters: {
          kustomizations: n,
          objects: m,
          runners: runnerList,
          overheadS: overheadMs / 1000,
          clusters,
          modelRunners,
          modelFrom,
        },
        machine,
        load: { start: loadStart, end: loadEnd },
        graph: { width: graph.width, levels: graph.levels, chain: graph.chain, deps: Object.fromEntries(graph.deps) },
        planMs,
        modelPlanMs: info.modelPlanMs,
        results: results.map(({ report: _report, state: _state, ...rest }) => rest),
        model: {
          perJobMedianMs: median,
          perJobP90Ms: p90,
          oneJobWallMs: oneJobWall,
          rows: modelRows,
          check: modelCheck,
        },
        matched,
        allOk,
      },
      null,
      2,
    ) + '\n',
  );
  process.stderr.write(`results written to ${base}.md and .json\n`);
  if (!matched || !allOk) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`fanout: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
