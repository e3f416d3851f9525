/**
 * The CLI (kustomize-reconcile build|diff|apply|drift): flags in, report on stdout, progress on
 * stderr, exit code out. Importable: src/bin/cli.ts runs main() (dist/cli.js).
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { KubeObject } from './objects/kube.js';
import { ClusterClient } from './cluster/client.js';
import { loadKubeConfig } from './cluster/kubeconfig.js';
import { checkSources, childrenOf, checkSupported, renderSpec, resolveSpecs } from './reconcile/index.js';
import { reconcileScrubbed, writeReportFile } from './reconcile/finish.js';
import { builtFrom } from './reconcile/built-from.js';
import { describeSpec } from './flux/support.js';
import { runSources } from './source/fetched.js';
import { secretReader } from './source/secret.js';
import { untrustedTreeOf } from './source/trust.js';
import { readEventFile } from './github/event.js';
import { exitCode } from './report/model.js';
import { closingLines } from './report/render.js';
import { Scrubber } from './report/scrub.js';
import { maskSecretFields } from './substitute/provenance.js';
import { buildOutput } from './build-output.js';
import { parseFlags, rawFromFlags, type FlagValues } from './options/flags.js';
import { splitPatterns } from './flux/load.js';
import { COMMANDS, usage } from './options/usage.js';
import { knownSecrets, settingsOf, runInfo, type Settings } from './options/settings.js';
import { renderDiff } from './ssa/diff.js';
import { MAX_MATRIX_BYTES, parseMatrix, type ExpectedJob } from './fanout/matrix.js';
import { planRun } from './plan/run.js';
import { planJson, planText } from './plan/render.js';
import { applyOrder } from './objects/order.js';
import { timingsFromEnv } from './util/timings.js';
import { mapLimit } from './util/concurrency.js';
import type { KustomizationSpec } from './flux/types.js';

/** The terminal edge: flags in; report on stdout, progress on stderr, exit code out. */
export async function main(argv: string[]): Promise<number> {
  // KR_TIMINGS=<file>: wall-time marks of the run for the benchmark's profile (bench/profile.ts).
  const timings = timingsFromEnv(process.env);
  timings?.mark('main');
  const USAGE = usage();
  let parsed;
  try {
    parsed = parseFlags(argv);
  } catch (err) {
    process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  const command = positionals[0];
  const mode = COMMANDS.find((c) => c.name === command)?.mode;
  if (!mode || positionals.length > 1) {
    process.stderr.write(
      `kustomize-reconcile: ${command ? `unknown command "${positionals.join(' ')}"` : 'missing command'}\n\n${USAGE}\n`,
    );
    return 2;
  }
  const output = values['output'] ?? 'text';
  if (output !== 'text' && output !== 'json') {
    process.stderr.write(`kustomize-reconcile: --output must be text or json; got "${String(output)}"\n`);
    return 2;
  }
  const json = output === 'json';
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
    const root = text(values, 'root') ?? process.cwd();
    const raw = await rawFromFlags(values, (path) => readFile(path, 'utf8'));
    for (const secret of knownSecrets({ secretVars: raw.secretVars ?? {}, masked: raw.masked })) scrubber.add(secret);
    settings = settingsOf({
      ...raw,
      // build has no mode of its own: it renders what a diff would apply.
      mode: mode === 'build' ? 'preview' : mode,
      kubeconfig: raw.kubeconfig ?? { kind: 'default' },
      root,
      env: process.env,
      run: runInfo(process.env, { root, ...(await gitCheckout(root)) }),
    });
    // In a workflow run for a pull request, the tree is the pull request's (source/trust.ts).
    const untrusted = untrustedTreeOf({
      eventName: process.env['GITHUB_EVENT_NAME'],
      event: (await readEventFile(process.env['GITHUB_EVENT_PATH'])).event,
      ...(settings.base ? { base: settings.base } : {}),
      root: settings.root,
    });
    if (untrusted) settings = { ...settings, untrustedTree: untrusted };
  } catch (err) {
    return fail(err);
  }

  if (mode === 'plan') {
    try {
      if (settings.kustomizations.length === 0)
        throw new Error('plan needs --kustomizations: the Flux Kustomization files to fan out over');
      const { base, head = 'HEAD' } = settings;
      const plan = await planRun(settings, base ? { base, head } : undefined, (l) => process.stderr.write(`${l}\n`));
      process.stdout.write(json ? planJson(plan) : planText(plan));
      return 0;
    } catch (err) {
      return fail(err);
    }
  }

  if (mode === 'build') {
    try {
      const showSecrets = values['show-secrets'] === true;
      process.stdout.write(await buildCommand(settings, { json, showSecrets }, scrubber));
      return 0;
    } catch (err) {
      return fail(err);
    }
  }

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
      return fail(new Error(`--report-file ${settings.reportFile}: ${(err as Error).message}`));
    }
  }
  if (json) {
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  } else {
    // What would change, field by field (Secret values masked), for each configured object.
    for (const e of report.changeset) {
      if (e.diff?.length) process.stdout.write(`\n${e.subject}:\n${indent(renderDiff(e.diff))}\n`);
    }
    // Each applied and pruned object had its line in the progress log above.
    process.stdout.write(closingLines(report).join('\n') + '\n');
  }
  timings?.mark('reported');
  return exitCode(report, mode === 'preview');
}

/**
 * `build`: every Kustomization's objects after kustomize, substitution and commonMetadata, in apply order, as
 * multi-document YAML (a comment line names each Kustomization when there are several) or JSON.
 */
async function buildCommand(
  settings: Settings,
  opts: { json: boolean; showSecrets: boolean },
  scrubber: Scrubber,
): Promise<string> {
  const note = (line: string) => process.stderr.write(`${scrubber.text(line)}\n`);
  const specs = await resolveSpecs(settings, note);
  checkSupported(specs, 'build');
  // A kubeconfig is optional for build: it is only read for postBuild.substituteFrom.
  const client =
    settings.kubeconfig.kind === 'default'
      ? undefined
      : new ClusterClient(
          await loadKubeConfig(settings.kubeconfig, settings.context, {
            execTimeoutMs: settings.clusterTimeouts.requestMs,
          }),
          { timeouts: settings.clusterTimeouts },
        );
  // As in apply: a Kustomization of another GitRepository is built from that repository, fetched;
  // one whose source cannot be had fails the build, never built from this checkout instead.
  const sources = await checkSources(settings, specs, note);
  // What fetching a source says goes with the Kustomization that needs it first (see below).
  let logTo: (line: string) => void = note;
  const fetched = runSources(settings, {
    secret: (value) => scrubber.add(value),
    ...(client ? { readSecret: secretReader(client) } : {}),
    log: (line) => {
      logTo(line);
    },
  });
  // A child whose parent is among the files is built as the parent's build produces it (children.ts).
  const children = childrenOf(settings, specs, client, sources, (value) => scrubber.add(value));
  // Each Kustomization is prepared in the order of the files (its parent's build, its source fetched),
  // then rendered a few at a time (most of a build is kustomize's process and the file copy it runs
  // on). Every note is kept with its Kustomization and printed in the order of the files, as they
  // were when the builds ran one after the other.
  const notes = specs.map((): string[] => []);
  let printed = 0;
  const done = specs.map(() => false);
  const flush = () => {
    while (printed < specs.length && done[printed]) for (const line of notes[printed++]!) note(line);
  };
  let results: { kustomization: string; objects: KubeObject[] }[];
  try {
    const prepared: Prepared[] = [];
    for (const [i, file] of specs.entries()) {
      logTo = (line) => notes[i]!.push(line);
      prepared.push(await prepareOne(settings, file, { children, sources, fetched, note: logTo }));
    }
    logTo = note;
    results = await mapLimit(
      prepared.map((p, i) => ({ p, i })),
      Math.min(settings.concurrency, Math.max(2, availableParallelism())),
      async ({ p, i }) => {
        try {
          return await renderOne(p, opts.showSecrets, scrubber, client, (line) => notes[i]!.push(line));
        } finally {
          done[i] = true;
          flush();
        }
      },
    );
  } finally {
    for (let i = printed; i < specs.length; i++) for (const line of notes[i]!) note(line);
    client?.close();
    await fetched.cleanup();
  }
  if (opts.json) {
    return JSON.stringify(specs.length === 1 ? results[0]!.objects : results, null, 2) + '\n';
  }
  return results
    .map((r) => {
      const header = results.length > 1 ? `# Kustomization ${r.kustomization}\n` : '';
      return header + r.objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
    })
    .join('---\n');
}

/** A Kustomization of `build` as it is rendered: its spec as its parent's build gives it, with its source's settings. */
interface Prepared {
  spec: KustomizationSpec;
  settings: Settings;
}

/** One Kustomization of `build`, as its parent's build produces it, with its source fetched when it is not this checkout. */
async function prepareOne(
  settings: Settings,
  file: KustomizationSpec,
  run: {
    children: ReturnType<typeof childrenOf>;
    sources: Awaited<ReturnType<typeof checkSources>>;
    fetched: ReturnType<typeof runSources>;
    note: (line: string) => void;
  },
): Promise<Prepared> {
  const { note } = run;
  const asBuilt = await run.children.asBuilt(file).catch((err: unknown) => {
    throw new Error(`Kustomization ${file.namespace}/${file.name}: ${(err as Error).message}`, { cause: err });
  });
  const spec = asBuilt.spec;
  if (asBuilt.unbuilt !== undefined) note(`${describeSpec(spec)}: ${asBuilt.unbuilt}; built from its file as written`);
  if (asBuilt.parent !== undefined)
    note(`${describeSpec(spec)}: built as its parent Kustomization ${asBuilt.parent} produces it`);
  const from = await builtFrom(settings, spec, run.sources, run.fetched);
  if (from.kind === 'other') throw new Error(`${describeSpec(spec)}: ${from.problem}`);
  if (from.kind === 'fetched') note(`${describeSpec(spec)}: built from ${from.ref} at ${from.tree.revision}`);
  return { spec, settings: from.settings };
}

/** A prepared Kustomization rendered, its secret values masked unless they are to be shown. */
async function renderOne(
  { spec, settings }: Prepared,
  showSecrets: boolean,
  scrubber: Scrubber,
  client: ClusterClient | undefined,
  note: (line: string) => void,
): Promise<{ kustomization: string; objects: KubeObject[] }> {
  // Decrypted values are shown only on request: without --show-secrets nothing is decrypted.
  const built = await renderSpec(
    settings,
    spec,
    client,
    { secret: (value) => scrubber.add(value), note },
    showSecrets,
  ).catch((err: unknown) => {
    // Name the Kustomization, as apply's report does: build prints several.
    throw new Error(`Kustomization ${spec.namespace}/${spec.name}: ${(err as Error).message}`, { cause: err });
  });
  // Without --show-secrets, every field written from a secret source is masked, and buildOutput
  // masks SOPS-encrypted Secret values as `flux build` does; it adds the owner labels the apply sets.
  const shown = showSecrets ? built.objects : maskSecretFields(built.objects, built.secretPaths);
  return {
    kustomization: `${spec.namespace}/${spec.name}`,
    objects: buildOutput(applyOrder(shown), spec, showSecrets),
  };
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
    return exitCode(report, report.mode !== 'apply');
  } catch (err) {
    process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n`);
    return 2;
  }
}
