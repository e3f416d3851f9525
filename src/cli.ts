#!/usr/bin/env node
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { parseArgs, promisify } from 'node:util';
import { stringify } from 'yaml';
import type { KubeObject } from './objects/kube.js';
import { ClusterClient } from './cluster/client.js';
import { loadKubeConfig } from './cluster/kubeconfig.js';
import { checkSupported, reconcile, renderSpec, resolveSpecs } from './reconcile.js';
import { exitCode } from './report/model.js';
import { closingLines } from './report/render.js';
import { Scrubber, scrubReport } from './report/scrub.js';
import { maskSecretFields } from './substitute/provenance.js';
import { buildOutput } from './build-output.js';
import { normalize, runInfo, type Mode, type Settings } from './settings.js';
import { splitPatterns } from './flux/load.js';
import { parseVarFlags } from './substitute/variables.js';
import { renderDiff } from './ssa/diff.js';
import { applyOrder } from './objects/order.js';

const USAGE = `usage: kustomize-reconcile <command> [flags]

commands:
  build   build with kustomize and print the objects as YAML, in apply order, with the owner labels
          the apply sets (no cluster needed); as flux build, SOPS-encrypted Secret values are
          masked (**SOPS**), and so are fields written from substituteFrom Secrets (***),
          unless --show-secrets
  diff    plan against the cluster (server-side dry-run) and print what would change;
          exit 0 = no change, 1 = changes (objects prune would delete too), 2 = error
  apply   server-side apply --path to the cluster and print the change set; exit 0 = ok, 2 = error

flags:
  --path DIR             directory to build, relative to --root (default .)
  --name NAME            the Kustomization's name for --path (inventory, lock and owner labels);
                         default: derived from the repository (git remote, else the root) and the path
  --kustomizations GLOB  Flux Kustomization files or globs (repeatable, or comma-separated);
                         build prints every Kustomization found, apply and diff take one
  --target-namespace NS  spec.targetNamespace for --path
  --source NS/NAME       the GitRepository that is this checkout; Kustomizations of other sources
                         fail (default: GitRepositories in the repository are matched by URL)
  --allow-remote-bases   let kustomize fetch remote resources and components
  --show-secrets         build: decrypt SOPS and print secret values instead of masks
  --var NAME=VALUE       a variable for postBuild substitution (repeatable; below substituteFrom
                         and postBuild.substitute in precedence); with --path it enables substitution
  --no-strict-substitute unset variables without a default become "" instead of failing
  --sops-age-key FILE    age identities for SOPS decryption
  --sops-pgp-key FILE    armoured OpenPGP private keys for SOPS decryption
  --no-sops-verify-mac   skip SOPS MAC checks (Flux skips them)
                         build decrypts only with --show-secrets
  --sops-vault-addresses URL
                         Vault base URLs that SOPS files' hc_vault keys may name (repeatable, or
                         comma-separated); no other Vault is contacted or sent the token
  --root DIR             source root; --path may not leave it (default: current directory)
  --kubeconfig FILE      kubeconfig file (default: $KUBECONFIG or ~/.kube/config)
  --context NAME         kubeconfig context (default: the file's current context)
  --field-manager NAME   server-side apply field manager (default kustomize-controller)
  --kustomize-path BIN   kustomize binary (default: kustomize on PATH)
  --concurrency N        dry-runs in flight at once (default 8)
  --always-dry-run       dry-run every object, also those whose managed fields show them unchanged
  --prune                spec.prune for --path: delete what left Git (diff shows what would go)
  --force                spec.force for --path: recreate objects whose immutable fields changed
  --inventory-namespace NS  where inventories and locks live (default: the Kustomization's namespace)
  --prune-max-share P    refuse a prune of more than P of an inventory (default 50%)
  --allow-large-prune    lift the prune guards for this run (also: pruning a Namespace that
                         holds objects of other Kustomizations or of none)
  --removed-kustomizations report|delete
                         a Kustomization file that is gone: report its objects as orphaned, or
                         apply its deletionPolicy (default report)
  --lock-timeout D       how long to wait for another run's lock (default 10m)
  --connect-timeout D    how long connecting to the cluster may take (default 10s)
  --request-timeout D    how long one request may take, retries included; also bounds an exec
                         credential plugin (default 60s)
  --build-timeout D      stop kustomize (and what it starts) after D (default 5m)
  --build-memory-limit M stop kustomize when it and what it starts use more than M (default 2Gi)
  --output text|json     json prints the report value (default text)
  -h, --help             show this help`;

const COMMANDS: Record<string, Mode | 'build'> = { build: 'build', diff: 'preview', apply: 'apply' };

/** The terminal edge: flags in; report on stdout, progress on stderr, exit code out. */
export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      allowNegative: true,
      options: {
        path: { type: 'string' },
        name: { type: 'string' },
        source: { type: 'string' },
        kustomizations: { type: 'string', multiple: true },
        'target-namespace': { type: 'string' },
        'allow-remote-bases': { type: 'boolean' },
        'show-secrets': { type: 'boolean' },
        var: { type: 'string', multiple: true },
        'strict-substitute': { type: 'boolean', default: true },
        'sops-age-key': { type: 'string' },
        'sops-pgp-key': { type: 'string' },
        'sops-verify-mac': { type: 'boolean', default: true },
        'sops-vault-addresses': { type: 'string', multiple: true },
        root: { type: 'string' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'field-manager': { type: 'string' },
        'kustomize-path': { type: 'string' },
        concurrency: { type: 'string' },
        'always-dry-run': { type: 'boolean' },
        prune: { type: 'boolean' },
        force: { type: 'boolean' },
        'inventory-namespace': { type: 'string' },
        'prune-max-share': { type: 'string' },
        'allow-large-prune': { type: 'boolean' },
        'lock-timeout': { type: 'string' },
        'connect-timeout': { type: 'string' },
        'request-timeout': { type: 'string' },
        'build-timeout': { type: 'string' },
        'build-memory-limit': { type: 'string' },
        'removed-kustomizations': { type: 'string' },
        output: { type: 'string', default: 'text' },
        help: { type: 'boolean', short: 'h' },
      },
    });
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
  const mode = command ? COMMANDS[command] : undefined;
  if (!mode || positionals.length > 1) {
    process.stderr.write(
      `kustomize-reconcile: ${command ? `unknown command "${positionals.join(' ')}"` : 'missing command'}\n\n${USAGE}\n`,
    );
    return 2;
  }
  if (values.output !== 'text' && values.output !== 'json') {
    process.stderr.write(`kustomize-reconcile: --output must be text or json; got "${values.output}"\n`);
    return 2;
  }
  let settings: Settings;
  try {
    const root = values.root ?? process.cwd();
    settings = normalize({
      mode: mode === 'build' ? 'preview' : mode,
      kubeconfig: values.kubeconfig ? { kind: 'path', path: values.kubeconfig } : { kind: 'default' },
      context: values.context,
      root,
      path: values.path,
      name: values.name,
      source: values.source,
      kustomizations: (values.kustomizations ?? []).flatMap(splitPatterns),
      targetNamespace: values['target-namespace'],
      allowRemoteBases: values['allow-remote-bases'] ?? false,
      vars: parseVarFlags(values.var ?? []),
      strictSubstitute: values['strict-substitute'],
      ...(values['sops-age-key'] ? { sopsAgeKey: await readKeyFile(values['sops-age-key'], '--sops-age-key') } : {}),
      ...(values['sops-pgp-key'] ? { sopsPgpKey: await readKeyFile(values['sops-pgp-key'], '--sops-pgp-key') } : {}),
      sopsVerifyMac: values['sops-verify-mac'],
      sopsVaultAddresses: values['sops-vault-addresses'] ?? [],
      env: process.env,
      fieldManager: values['field-manager'],
      kustomizeBin: values['kustomize-path'],
      concurrency: values.concurrency,
      alwaysDryRun: values['always-dry-run'] ?? false,
      prune: values.prune ?? false,
      force: values.force ?? false,
      inventoryNamespace: values['inventory-namespace'],
      pruneMaxShare: values['prune-max-share'],
      allowLargePrune: values['allow-large-prune'] ?? false,
      lockTimeout: values['lock-timeout'],
      connectTimeout: values['connect-timeout'],
      requestTimeout: values['request-timeout'],
      buildTimeout: values['build-timeout'],
      buildMemoryLimit: values['build-memory-limit'],
      removedKustomizations: values['removed-kustomizations'],
      run: runInfo(process.env, { root, ...(await gitCheckout(root)) }),
    });
  } catch (err) {
    process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n`);
    return 2;
  }

  if (mode === 'build') {
    try {
      const json = values.output === 'json';
      process.stdout.write(await buildCommand(settings, { json, showSecrets: values['show-secrets'] ?? false }));
      return 0;
    } catch (err) {
      process.stderr.write(`kustomize-reconcile: ${(err as Error).message}\n`);
      return 2;
    }
  }

  const json = values.output === 'json';
  process.stderr.write(`Repository ${settings.run.source} (from ${settings.run.sourceFrom ?? 'the environment'})\n`);
  // Secret values seen during the run are replaced by *** in every line and in the report.
  const scrubber = new Scrubber();
  const report = scrubReport(
    await reconcile(settings, {
      log: (line) => {
        if (!json) process.stdout.write(scrubber.text(line) + '\n');
      },
      secret: (value) => scrubber.add(value),
    }),
    scrubber.known,
  );
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
  return exitCode(report, mode === 'preview');
}

/**
 * `build`: every Kustomization's objects after kustomize, substitution and commonMetadata, in apply order, as
 * multi-document YAML (a comment line names each Kustomization when there are several) or JSON.
 */
async function buildCommand(settings: Settings, opts: { json: boolean; showSecrets: boolean }): Promise<string> {
  const specs = await resolveSpecs(settings);
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
  const results: { kustomization: string; objects: KubeObject[] }[] = [];
  try {
    for (const spec of specs) {
      // Decrypted values are shown only on request: without --show-secrets nothing is decrypted.
      const built = await renderSpec(
        settings,
        spec,
        client,
        { secret: () => {}, note: (line) => process.stderr.write(`${line}\n`) },
        opts.showSecrets,
      );
      // Without --show-secrets, every field written from a secret source is masked, and buildOutput
      // masks SOPS-encrypted Secret values as `flux build` does; it adds the owner labels the apply sets.
      const shown = opts.showSecrets ? built.objects : maskSecretFields(built.objects, built.secretPaths);
      results.push({
        kustomization: `${spec.namespace}/${spec.name}`,
        objects: buildOutput(applyOrder(shown), spec, opts.showSecrets),
      });
    }
  } finally {
    client?.close();
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

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/**
 * The URL of the checkout's `origin` remote (the repository a CLI run records in inventories) and
 * the branch checked out; each left out when the root is not a git checkout, has no origin, is
 * detached, or git is not installed.
 */
async function gitCheckout(root: string): Promise<{ remote?: string; branch?: string }> {
  const git = async (...args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)('git', ['-C', root, ...args], { timeout: 5_000 });
      return stdout.trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const [remote, branch] = await Promise.all([
    git('remote', 'get-url', 'origin'),
    git('symbolic-ref', '--short', '-q', 'HEAD'),
  ]);
  return { ...(remote ? { remote } : {}), ...(branch ? { branch } : {}) };
}

async function readKeyFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      cause: err,
    });
  }
}

process.exitCode = await main(process.argv.slice(2));
