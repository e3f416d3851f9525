// Times the CLI's `plan` on the repo80 tree alone (no cluster): the whole tree, then three changes with
// --base (bench/run/plan.ts); bench/run.ts runs the same steps with repo80. Prints the table and writes
// bench/results/plan-<UTC date and time>.md and .json. Asserts nothing.
//   [KR_BENCH_DIST=DIR] node_modules/.bin/node bench/plan.ts [--runs 3]
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, RESULTS, stamp } from './paths.ts';
import { benchPlan, planTables } from './run/plan.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
  const rounds = Number(values.runs);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new Error('--runs takes a whole number from 1 to 20');
  if (!existsSync(CLI))
    throw new Error(
      `${CLI} is missing: bundle first (npm run bundle, or node scripts/bundle.mjs DIR with KR_BENCH_DIST=DIR)`,
    );
  const started = stamp();
  const plan = await benchPlan(rounds);
  const cpus = os.cpus();
  const machine = `${String(cpus.length)} cores (${cpus[0]?.model ?? 'unknown'}), Node ${process.version}`;
  const out = `## kustomize-reconcile plan\n\n${machine}.\n\n${planTables(plan)}`;
  process.stdout.write(out + '\n');
  await mkdir(RESULTS, { recursive: true });
  const base = join(RESULTS, `plan-${started}`);
  await writeFile(`${base}.md`, out);
  await writeFile(
    `${base}.json`,
    JSON.stringify({ date: new Date().toISOString(), cli: CLI, machine, plan }, null, 2) + '\n',
  );
  process.stderr.write(`results written to ${base}.md and .json\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
