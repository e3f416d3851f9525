/**
 * The action's edge for mode: plan: no cluster; the Kustomization files in, the outputs matrix,
 * levels, affected, clusters and count out (src/plan/), and a job summary.
 */
import * as core from './core.js';
import { planRun, type Change } from '../plan/run.js';
import { planOutputs, planSummary, planText } from '../plan/render.js';
import type { Settings } from '../options/settings.js';

type Payload = {
  before?: string;
  after?: string;
  pull_request?: { base?: { sha?: string }; head?: { sha?: string } };
};

/**
 * The change to plan for: the inputs base and head, else the event's (a pull request's base and
 * head commits, a push's before and after); none outside those events (every Kustomization runs).
 */
export function changeOf(
  event: unknown,
  given: { base?: string; head?: string },
  env: NodeJS.ProcessEnv,
): Change | undefined {
  const p = (typeof event === 'object' && event !== null ? event : {}) as Payload;
  const base = given.base ?? p.pull_request?.base?.sha ?? p.before;
  const head = given.head ?? p.pull_request?.head?.sha ?? p.after ?? env['GITHUB_SHA'] ?? 'HEAD';
  return base ? { base, head } : undefined;
}

export async function run(event: unknown, settings: Settings): Promise<number> {
  if (settings.kustomizations.length === 0) {
    throw new Error('mode: plan needs kustomizations: the Flux Kustomization files (or globs) to fan out over');
  }
  const plan = await planRun(settings, changeOf(event, settings, process.env), (l) => {
    core.info(l);
  });
  core.info(planText(plan).trimEnd());
  for (const [name, value] of Object.entries(planOutputs(plan))) core.setOutput(name, value);
  if (process.env['GITHUB_STEP_SUMMARY']) await core.summary.addRaw(planSummary(plan)).write();
  return 0;
}
