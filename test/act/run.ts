// The workflow runs of `npm run workflows`: the README's workflows and .github/workflows/ under act
// (test/act/bin/act, built by test/act/build.sh) on this machine, against two test clusters and the
// GitHub emulator. One line per workflow run, with its jobs and outcome; a failed run's problems and
// the end of its log follow it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startFakeGitHub, type GitHubAccess, type GitHubPermission } from '../../__tests__/helpers/github-server.ts';
import { ACT, actionCopy, REPO, runAct, startCluster, type Cluster, type RunOptions } from './act.ts';
import { cloudRuns } from './cloud-runs.ts';
import { forkRuns } from './fork-runs.ts';
import { hostileRuns, hostileSecretRuns } from './hostile-runs.ts';
import { ownRuns } from './own-runs.ts';
import { readmeRuns, readmeWorkflows, type Checked } from './readme-runs.ts';
import { jobSummary, permissionsOf } from './results.ts';

/**
 * Runs them all, or only `only` ('readme', 'cloud': the README's cloud recipes alone, or 'own'); each
 * run's whole act log is written to
 * `logs/NN.log` when `logs` is set (npm run workflows: reports/workflows/).
 */
export async function runWorkflows(
  print: (line: string) => void,
  opts: { only?: string; logs?: string } = {},
): Promise<{ passed: number; failed: number }> {
  if (!existsSync(ACT)) {
    print(`workflows: ${relative(REPO, ACT)} is missing: run bash test/act/build.sh`);
    return { passed: 0, failed: 1 };
  }
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 24) {
    print(
      `workflows: the runs need Node 24 first on PATH (the action is node24); this is Node ${process.versions.node}`,
    );
    return { passed: 0, failed: 1 };
  }
  const root = mkdtempSync(join(tmpdir(), 'kr-workflows-'));
  const clusters: Cluster[] = [];
  const tokens: Record<string, Partial<Record<GitHubPermission, GitHubAccess>>> = {};
  const fake = await startFakeGitHub({ tokens });
  let passed = 0;
  let failed = 0;
  if (opts.logs) {
    rmSync(opts.logs, { recursive: true, force: true });
    mkdirSync(opts.logs, { recursive: true });
  }
  // The clusters' private keys (a workflow gets them as a secret, which act masks, or in the fork
  // route from a file on the runner, which nothing masks) and the Secret values the runs put in the
  // clusters (the action reads them): no run may print them.
  const keys: string[] = [];
  const done = (c: Checked) => {
    // `::add-mask::VALUE` is how a step tells the runner what to hide; the runner shows no such line.
    const shown = c.run.log
      .split('\n')
      .filter((l) => !l.includes('"command":"add-mask"'))
      .join('\n');
    for (const k of keys)
      if (shown.includes(k)) c.problems.push('the log has a secret in it (a private key or a Secret value)');
    // Nor may what the runs posted: a Secret's data is shown as changed or unchanged, never as values.
    const posted = JSON.stringify([
      fake.comments.map((m) => m.body),
      fake.checkRuns.map((r) => [r.output, r.annotations]),
    ]);
    for (const k of keys)
      if (posted.includes(k)) c.problems.push('a comment or check run posted so far has a secret in it');
    const ok = c.problems.length === 0;
    const n = String(passed + failed + 1).padStart(2, '0');
    if (opts.logs) writeFileSync(join(opts.logs, `${n}.log`), `${c.what}\n${c.run.log}`);
    if (ok) passed++;
    else failed++;
    const secs = ` in ${c.run.seconds}s`;
    print(`workflows: ${c.what}: ${jobSummary(c.run.jobs)}${secs}: ${ok ? 'passed' : 'FAILED'}`);
    if (ok) return;
    for (const p of c.problems) print(`  ${p}`);
    const tail = c.run.log.split('\n').slice(-60);
    print(`  act exited ${c.run.exitCode}; the last lines of its log:`);
    for (const l of tail) print(`    ${l}`);
  };
  try {
    clusters.push(await startCluster('one'), await startCluster('two'));
    for (const c of clusters) {
      const key = /client-key-data: (\S+)/.exec(readFileSync(c.kubeconfig, 'utf8'))?.[1];
      if (key) keys.push(key, Buffer.from(key, 'base64').toString('utf8').split('\n')[1] ?? key);
    }
    let runId = 1000;
    let tokenN = 0;
    const actionDir = actionCopy(root);
    const artifacts = join(root, 'artifacts');
    const env = {
      root,
      fake,
      clusters,
      // One Actions cache for every run, as the runs of one repository share it on GitHub.
      act: (o: RunOptions) =>
        runAct({ ...o, githubApi: fake.url, artifacts, actionDir, cacheServer: join(root, 'actions-cache') }),
      nextRunId: () => ++runId,
      neverLogged: (value: string) => {
        keys.push(value);
      },
      tokenFor: (workflow: string) => {
        const token = `ghs_act${++tokenN}`;
        tokens[token] = permissionsOf(workflow);
        return token;
      },
    };
    if (opts.only === 'cloud') await cloudRuns(env, done);
    else if (opts.only !== 'own') {
      await readmeRuns(env, done);
      await cloudRuns(env, done);
      await forkRuns(env, done);
      await hostileRuns(env, readmeWorkflows().preview, done);
      await hostileSecretRuns(env, readmeWorkflows().preview, done);
    }
    if (opts.only !== 'readme' && opts.only !== 'cloud') await ownRuns(env, done);
  } catch (e) {
    failed++;
    print(`workflows: the runs stopped: ${(e as Error).stack ?? String(e)}`);
  } finally {
    await fake.close();
    for (const c of clusters) await c.stop();
    rmSync(root, { recursive: true, force: true });
  }
  return { passed, failed };
}
