import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, type RunResult } from './cluster.js';
import { TOOLS } from './paths.js';

/** Reads a GITHUB_OUTPUT file (`name<<delimiter` blocks) into a map. */
export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<]+)<<(.+)$/.exec(lines[i]!);
    if (!m) continue;
    const [, name, delim] = m;
    const value: string[] = [];
    for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
    out[name!] = value.join('\n');
  }
  return out;
}

export interface ActionResult extends RunResult {
  outputs: Record<string, string>;
  summary: string;
}

/**
 * Runs the bundled dist/index.js the way GitHub runs the action: inputs as `INPUT_*` variables
 * (names upper-cased, dashes kept), `GITHUB_WORKSPACE`, `GITHUB_OUTPUT` and (unless `summary` is
 * false) `GITHUB_STEP_SUMMARY` files, with the pinned kustomize on PATH; optionally an event payload.
 */
export async function runAction(
  workspace: string,
  inputs: Record<string, string>,
  opts: {
    summary?: boolean;
    /** More environment, e.g. GITHUB_REPOSITORY and GITHUB_API_URL pointing at the fake GitHub. */
    env?: NodeJS.ProcessEnv;
    /** The event: GITHUB_EVENT_NAME and a GITHUB_EVENT_PATH file holding the payload. */
    event?: { name: string; payload: unknown };
    /** The bundle to run instead of dist/index.js (e.g. a fresh bundle of src/). */
    script?: string;
    /** Kill the action (SIGKILL) after this long; the result then says `timedOut`. */
    timeoutMs?: number;
    /** Called with the action's process once it is started. */
    onStart?: (child: ChildProcess) => void;
  } = {},
): Promise<ActionResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-gha-'));
  const outputFile = join(dir, 'output');
  const summaryFile = join(dir, 'summary');
  await writeFile(outputFile, '');
  await writeFile(summaryFile, '');
  const env: NodeJS.ProcessEnv = {
    PATH: `${TOOLS}:${process.env['PATH'] ?? ''}`,
    HOME: process.env['HOME'],
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: outputFile,
    RUNNER_TEMP: dir,
    ...(opts.summary === false ? {} : { GITHUB_STEP_SUMMARY: summaryFile }),
    ...opts.env,
  };
  if (opts.event) {
    const eventFile = join(dir, 'event.json');
    await writeFile(eventFile, JSON.stringify(opts.event.payload));
    env['GITHUB_EVENT_NAME'] = opts.event.name;
    env['GITHUB_EVENT_PATH'] = eventFile;
  }
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase()}`] = v;
  // KR_ACTION_SCRIPT: a bundle of the working tree made elsewhere (`node scripts/bundle.mjs DIR`),
  // so that a change can be tried through the hostile-PR suite before dist/ is rebuilt.
  const script = opts.script ?? process.env['KR_ACTION_SCRIPT'] ?? 'dist/index.js';
  const result = await runNode(script, [], {
    env,
    cwd: workspace,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.onStart ? { onStart: opts.onStart } : {}),
  });
  return {
    ...result,
    outputs: parseOutputs(await readFile(outputFile, 'utf8')),
    summary: await readFile(summaryFile, 'utf8'),
  };
}
