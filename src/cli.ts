/**
 * The CLI (kustomize-reconcile build|diff|apply|drift|plan|report): flags in, report on stdout,
 * progress on stderr, exit code out. Importable: src/bin/cli.ts runs main() (dist/cli.js).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { buildRun } from './reconcile/build-run.js';
import { reconcileScrubbed, writeReportFile } from './reconcile/finish.js';
import { untrustedTreeOf } from './source/trust.js';
import { readEventFile } from './github/event.js';
import { exitStatusOf } from './report/exit.js';
import type { Report } from './report/model.js';
import { closingLines } from './report/render.js';
import { Scrubber } from './report/scrub.js';
import { maskSecretFields } from './substitute/provenance.js';
import { buildOutput } from './build-output.js';
import { parseFlags, rawFromFlags, type FlagValues } from './options/flags.js';
import { splitPatterns } from './flux/load.js';
import { COMMANDS, usage, type Command } from './options/usage.js';
import { knownSecrets, settingsOf, runInfo, type Mode, type Settings } from './options/settings.js';
import { renderDiff } from './ssa/diff.js';
import { MAX_MATRIX_BYTES, parseMatrix, type ExpectedJob } from './fanout/matrix.js';
import { planRun } from './plan/run.js';
import { planJson, planText } from './plan/render.js';
import { applyOrder } from './objects/order.js';
import { timingsFromEnv, type Timings } from './util/timings.js';

/** The terminal edge: flags in; report on stdout, progress on stderr, exit code out. */
export async function main(argv: string[]): Promise<number> {
  // KR_TIMINGS=<file>: wall-time marks of the run for the benchmark's profile (bench/profile.ts).
  const timings = timingsFromEnv(process.env);
  timings?.mark('main');
  const line = readCommandLine(argv);
  if ('exit' in line) return line.exit;
  const { values, mode, json } = line;
  if (mode === 'report') return reportCommand(values, json);
  // Secret values (key files, --secret-var, and those the run meets) become *** in every line and in
  // the report, as in the action.
  const scrubber = new Scrubber();
  const fail = (err: unknown) => {
    process.stderr.write(`kustomize-reconcile: ${scrubber.text((err as Error).message)}\n`);
    return 2;
  };
  let settings: Settings;
  try {
    settings = await settingsFromFlags(values, mode, scrubber);
  } catch (err) {
    return fail(err);
  }
  if (mode === 'plan') return planCommand(settings, json).catch(fail);
  if (mode === 'build') {
    try {
      const showSecrets = values['show-secrets'] === true;
      process.stdout.write(await buildCommand(settings, { json, showSecrets }, scrubber));
      return 0;
    } catch (err) {
      return fail(err);
    }
  }
  return reconcileCommand(settings, mode, { json, scrubber, fail, timings });
}

/** The command line read: the command's mode, its flags and the output; or the exit code of --help or a mistake. */
type CommandLine = { values: FlagValues; mode: Command['mode']; json: boolean } | { exit: 0 | 2 };

/** The flags, the command and --output; --help prints the usage, a mistake says what it is above it. */
function readCommandLine(argv: string[]): CommandLine {
  const USAGE = usage();
  let parsed;
  try {
    parsed = parseFlags(argv);
  } catch (err) {
    process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n\n${USAGE}\n`);
    return { exit: 2 };
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return { exit: 0 };
  }
  const command = positionals[0];
  const mode = COMMANDS.find((c) => c.name === command)?.mode;
  if (!mode || positionals.length > 1) {
    process.stderr.write(
      `kustomize-reconcile: ${command ? `unknown command "${positionals.join(' ')}"` : 'missing command'}\n\n${USAGE}\n`,
    );
    return { exit: 2 };
  }
  const output = values['output'] ?? 'text';
  if (output !== 'text' && output !== 'json') {
    process.stderr.write(`kustomize-reconcile: --output must be text or json; got "${String(output)}"\n`);
    return { exit: 2 };
  }
  return { values, mode, json: output === 'json' };
}

/**
 * The settings of a command that reads the tree (all but report): the flags with the checkout's
 * git facts, every secret among them added to `scrubber`; in a workflow run for a pull request, the
 * tree is the pull request's (source/trust.ts).
 */
async function settingsFromFlags(
  values: FlagValues,
  mode: Exclude<Command['mode'], 'report'>,
  scrubber: Scrubber,
): Promise<Settings> {
  const root = text(values, 'root') ?? process.cwd();
  const raw = await rawFromFlags(values, (path) => readFile(path, 'utf8'));
  for (const secret of knownSecrets({ secretVars: raw.secretVars ?? {}, masked: raw.masked })) scrubber.add(secret);
  const settings = settingsOf({
    ...raw,
    // build has no mode of its own: it renders what a diff would apply.
    mode: mode === 'build' ? 'preview' : mode,
    kubeconfig: raw.kubeconfig ?? { kind: 'default' },
    root,
    env: process.env,
    run: runInfo(process.env, { root, ...(await gitCheckout(root)) }),
  });
  const untrusted = untrustedTreeOf({
    eventName: process.env['GITHUB_EVENT_NAME'],
    event: (await readEventFile(process.env['GITHUB_EVENT_PATH'])).event,
    ...(settings.base ? { base: settings.base } : {}),
    root: settings.root,
  });
  return untrusted ? { ...settings, untrustedTree: untrusted } : settings;
}

/** `plan`: the fan-out of --kustomizations (src/plan/), with --base only what a change affects. */
async function planCommand(settings: Settings, json: boolean): Promise<number> {
  if (settings.kustomizations.length === 0)
    throw new Error('plan needs --kustomizations: the Flux Kustomization files to fan out over');
  const { base, head = 'HEAD' } = settings;
  const plan = await planRun(settings, base ? { base, head } : undefined, (l) => process.stderr.write(`${l}\n`));
  process.stdout.write(json ? planJson(plan) : planText(plan));
  return 0;
}

/**
 * `diff`, `apply`, `drift`: the run (its progress on stdout, or nothing there with --output json),
 * its report file, the report printed; the exit status of its mode (report/exit.ts).
 */
async function reconcileCommand(
  settings: Settings,
  mode: Mode,
  out: { json: boolean; scrubber: Scrubber; fail: (err: unknown) => number; timings: Timings | undefined },
): Promise<number> {
  const { json, scrubber, timings } = out;
  process.stderr.write(`Repository ${settings.run.source} (from ${settings.run.sourceFrom ?? 'the environment'})\n`);
  timings?.mark('reconcile');
  const report = await reconcileScrubbed(
    settings,
    {
      log: (line) => {
        if (!json) process.stdout.write(scrubber.text(line) + '\n');
      },
      ...(timings ? { group: timings.span } : {}),
    },
    scrubber,
  );
  timings?.mark('reconciled');
  if (settings.reportFile !== undefined) {
    try {
      await writeReportFile(report, settings);
    } catch (err) {
      return out.fail(new Error(`--report-file ${settings.reportFile}: ${(err as Error).message}`));
    }
  }
  process.stdout.write(json ? JSON.stringify(report, null, 2) + '\n' : reportText(report));
  timings?.mark('reported');
  return exitStatusOf('cli', mode, report);
}

/** The report as text: what would change, field by field (Secret values masked), then the closing lines. */
function reportText(report: Report): string {
  // Each applied and pruned object had its line in the progress log above.
  const diffs = report.changeset.flatMap((e) =>
    e.diff?.length ? [`\n${e.subject}:\n${indent(renderDiff(e.diff))}\n`] : [],
  );
  return diffs.join('') + closingLines(report).join('\n') + '\n';
}

/**
 * `build`: every Kustomization's objects after kustomize, substitution and commonMetadata, in apply order, as
 * multi-document YAML (a comment line names each Kustomization when there are several) or JSON. The
 * run's pipeline stopped after render (reconcile/build-run.ts); secret values masked unless they are to be shown.
 */
async function buildCommand(
  settings: Settings,
  opts: { json: boolean; showSecrets: boolean },
  scrubber: Scrubber,
): Promise<string> {
  // Decrypted values are shown only on request: without --show-secrets nothing is decrypted.
  const built = await buildRun(settings, {
    decrypt: opts.showSecrets,
    note: (line) => process.stderr.write(`${scrubber.text(line)}\n`),
    secret: (value) => scrubber.add(value),
  });
  // Without --show-secrets, every field written from a secret source is masked, and buildOutput
  // masks SOPS-encrypted Secret values as `flux build` does; it adds the owner labels the apply sets.
  const results = built.map(({ spec, rendered }) => {
    const shown = opts.showSecrets ? rendered.objects : maskSecretFields(rendered.objects, rendered.secretPaths);
    return {
      kustomization: `${spec.namespace}/${spec.name}`,
      objects: buildOutput(applyOrder(shown), spec, opts.showSecrets),
    };
  });
  if (opts.json) {
    return JSON.stringify(built.length === 1 ? results[0]!.objects : results, null, 2) + '\n';
  }
  return results
    .map((r) => {
      const header = results.length > 1 ? `# Kustomization ${r.kustomization}\n` : '';
      return header + r.objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
    })
    .join('---\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/**
 * The URL of the checkout's `origin` remote (the repository a CLI run records in inventories), the
 * branch checked out and the commit (HEAD); each left out when the root is not a git checkout, has no origin, is
 * detached, or git is not installed.
 */
async function gitCheckout(root: string): Promise<{ remote?: string; branch?: string; commit?: string }> {
  const git = async (...args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)('git', ['-C', root, ...args], { timeout: 5_000 });
      return stdout.trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const [remote, branch, commit] = await Promise.all([
    git('remote', 'get-url', 'origin'),
    git('symbolic-ref', '--short', '-q', 'HEAD'),
    git('rev-parse', '-q', '--verify', 'HEAD'),
  ]);
  return { ...(remote ? { remote } : {}), ...(branch ? { branch } : {}), ...(commit ? { commit } : {}) };
}

/** A flag's text value, when given. */
function text(values: FlagValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** `report --matrix FILE`: the plan's matrix, the jobs whose reports are expected; undefined without the flag. */
async function matrixFlag(path: string | undefined): Promise<ExpectedJob[] | undefined> {
  if (path === undefined || path === '') return undefined;
  const info = await stat(path).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`--matrix ${path}: cannot read it: ${code ?? String(err)}`, { cause: err });
  });
  if (info.size > MAX_MATRIX_BYTES) throw new Error(`--matrix ${path}: over ${MAX_MATRIX_BYTES / 1024 / 1024} MiB`);
  return parseMatrix(await readFile(path, 'utf8'), `--matrix ${path}`);
}

/** `report`: the --report-file files of several runs (--reports) as one report; exit code as the runs'. */
async function reportCommand(values: FlagValues, json: boolean): Promise<number> {
  try {
    const patterns = ((values['reports'] as string[] | undefined) ?? []).flatMap(splitPatterns);
    if (patterns.length === 0) throw new Error('report needs --reports: the report files (globs) to merge');
    const { readReportFiles } = await import('./report/merge-files.js');
    const { mergeReports } = await import('./report/merge.js');
    const expected = await matrixFlag(text(values, 'matrix'));
    const report = mergeReports(await readReportFiles(patterns, text(values, 'root') ?? process.cwd()), expected);
    process.stdout.write(json ? JSON.stringify(report, null, 2) + '\n' : closingLines(report).join('\n') + '\n');
    return exitStatusOf('cli', report.mode, report);
  } catch (err) {
    process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n`);
    return 2;
  }
}
