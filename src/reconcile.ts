import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClusterClient } from './cluster/client.js';
import { isUnreachable } from './cluster/failure.js';
import { Discovery } from './cluster/discovery.js';
import { kubeconfigSecrets, loadKubeConfig } from './cluster/kubeconfig.js';
import { remoteKubeConfig } from './cluster/remote.js';
import { build, type BuildResult } from './kustomize/build.js';
import { applyCommonMetadata } from './kustomize/metadata.js';
import { objectKey, subjectOf, type KubeObject } from './objects/kube.js';
import { locateObject, type Problem } from './report/problems.js';
import { countReport, driftFound, type Report } from './report/model.js';
import { scrubText } from './report/scrub.js';
import type { Settings } from './settings.js';
import { specFromInputs } from './flux/from-inputs.js';
import { loadKustomizations } from './flux/load.js';
import { findGitRepositories, sourceVerdict, type SourceVerdict } from './flux/checkout.js';
import { dependencyOrder, runInDependencyOrder } from './flux/graph.js';
import { describeSpec, impersonatedUser, unsupportedFields } from './flux/support.js';
import type { KustomizationSpec } from './flux/types.js';
import { applyAll, ApplyError } from './ssa/apply.js';
import { prevalidate } from './ssa/prevalidate.js';
import { ApiError } from './cluster/errors.js';
import { namespacePruneRefusal } from './ssa/contents.js';
import { deleteStale, PruneStopped, type PruneResult } from './ssa/delete.js';
import { entryOf, minus, staleEntries, subjectOfEntry, union, type Entry } from './inventory/entries.js';
import type { InventoryRecord, InventoryStatus } from './inventory/codec.js';
import { normalizeForApply } from './ssa/normalize.js';
import { legacyName, ownershipProblem, recordedBy, type Claim } from './inventory/identity.js';
import { Lock } from './inventory/lock.js';
import { entriesAfter, mergeConcurrent, pruneRefusal, type RunOutcome } from './inventory/plan.js';
import { lostRunPending, pendingAfter } from './inventory/lease.js';
import { lostLockMessage, stillThere, written } from './inventory/lost-run.js';
import { InventoryStore } from './inventory/store.js';
import { fluxConflict, fluxConflictNote, fluxImport } from './inventory/flux.js';
import { readFluxKustomization, type FluxLookup } from './inventory/flux-object.js';
import { setIdentity } from './inventory/removal.js';
import { handleRemoved, type RemovalReport } from './removed.js';
import type { ChangeSetEntry } from './ssa/changeset.js';
import { celStatusReader, evalReadyExpr } from './kstatus/cel.js';
import { kustomizationObject, type Outcome } from './flux/object.js';
import {
  formatDuration,
  healthFailure,
  healthTable,
  waitForHealth,
  type HealthResult,
  type HealthTarget,
} from './kstatus/wait.js';
import { adoptPaths, ignoredPaths, stripPaths } from './ssa/ignore.js';
import { setOwnerLabels } from './ssa/policy.js';
import { selectorFor } from './ssa/live.js';
import { decryptResources, refuseCiphertext, stillEncrypted } from './sops/resources.js';
import { keyServices, readDecryptionSecret, type SecretKeys } from './sops/keys.js';
import { decryptSources } from './sops/sources.js';
import { SopsError, type DecryptOptions } from './sops/types.js';
import { substituteObjects } from './substitute/objects.js';
import { readSubstituteFrom } from './substitute/sources.js';
import { mergeVariables, secretNames, type VariableLayer } from './substitute/variables.js';
import {
  collectSecretPaths,
  mergeSecretPaths,
  recordSecretPaths,
  secretPathsId,
  type SecretPaths,
} from './substitute/provenance.js';

/** Kustomizations reconciled at once, as kustomize-controller's default `--concurrent=4`. */
const KUSTOMIZATION_CONCURRENCY = 4;

export interface Hooks {
  /** Progress lines (one per applied object). */
  log: (line: string) => void;
  /** Called with every credential as soon as it is known, so the caller can mask it. */
  secret: (value: string) => void;
}

/** The Kustomizations a run works on: the files named by `kustomizations`, or one from the inputs. */
export async function resolveSpecs(settings: Settings): Promise<KustomizationSpec[]> {
  if (settings.kustomizations.length > 0) return loadKustomizations(settings.kustomizations, settings.root);
  return [
    specFromInputs({
      path: settings.path,
      source: settings.run.source,
      ...(settings.name ? { name: settings.name } : {}),
      wait: settings.wait,
      prune: settings.prune,
      force: settings.force,
      ...(settings.timeout ? { timeout: settings.timeout } : {}),
      ...(settings.targetNamespace ? { targetNamespace: settings.targetNamespace } : {}),
    }),
  ];
}

/**
 * Which of `specs` this checkout may build (see spec/checkout.ts), keyed `namespace/name`. Notes
 * (a source taken to be the checkout without proof) are logged once per source.
 */
async function checkSources(
  settings: Settings,
  specs: readonly KustomizationSpec[],
  log: (line: string) => void,
): Promise<Map<string, SourceVerdict>> {
  const verdicts = new Map<string, SourceVerdict>();
  if (!specs.some((s) => s.sourceRef !== undefined)) return verdicts;
  const facts = {
    source: settings.run.source,
    ...(settings.run.branch ? { branch: settings.run.branch } : {}),
    ...(settings.source ? { explicit: settings.source } : {}),
    definitions: settings.source ? [] : await findGitRepositories(settings.root),
  };
  const noted = new Set<string>();
  for (const spec of specs) {
    const verdict = sourceVerdict(spec, facts);
    verdicts.set(`${spec.namespace}/${spec.name}`, verdict);
    if (verdict.kind === 'checkout' && verdict.note && !noted.has(verdict.note)) {
      noted.add(verdict.note);
      log(verdict.note);
    }
  }
  return verdicts;
}

/** Refuses spec fields of stages not built yet, naming the Kustomization and the fields. */
export function checkSupported(specs: readonly KustomizationSpec[], command: 'build' | 'apply'): void {
  const problems = specs.flatMap((s) => unsupportedFields(s, command).map((p) => `${describeSpec(s)}: ${p}`));
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

/** Flux's --no-cross-namespace-refs: a sourceRef in another namespace is refused, naming it. */
export function refuseCrossNamespaceRefs(specs: readonly KustomizationSpec[]): void {
  const problems = specs.flatMap((s) =>
    s.sourceRef?.namespace !== undefined && s.sourceRef.namespace !== s.namespace
      ? [
          `${describeSpec(s)}: spec.sourceRef.namespace: cross-namespace references are not allowed ` +
            `(input no-cross-namespace-refs): '${s.sourceRef.namespace}' is not the Kustomization's namespace '${s.namespace}'`,
        ]
      : [],
  );
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

/**
 * Renders one Kustomization the way kustomize-controller does: kustomize with Flux's spec fields,
 * then postBuild substitution, then commonMetadata. `client` reads substituteFrom; without one
 * (a `build` with no kubeconfig) those sources are skipped with a note, as `flux build --dry-run` does.
 */
export async function renderSpec(
  settings: Settings,
  spec: KustomizationSpec,
  client: ClusterClient | undefined,
  hooks: Pick<Hooks, 'secret'> & { note: (line: string) => void },
  decrypt = true,
): Promise<BuildResult & { secretPaths: SecretPaths }> {
  // Every secret value seen while rendering, and by index the fields written from a secret source.
  const values = new Set<string>();
  const byIndex: string[][] = [];
  const addPaths = (i: number, p: string[]) => (byIndex[i] ??= []).push(...p);
  const outer = hooks.secret;
  hooks = {
    ...hooks,
    secret: (v) => {
      values.add(v);
      outer(v);
    },
  };
  const decryption = decrypt ? await decryptOptions(settings, spec, client, hooks) : undefined;
  const built = await build({
    root: settings.root,
    path: spec.path,
    kustomizeBin: settings.kustomizeBin,
    limits: settings.buildLimits,
    targetNamespace: spec.targetNamespace,
    namePrefix: spec.namePrefix,
    nameSuffix: spec.nameSuffix,
    patches: spec.patches,
    images: spec.images,
    components: spec.components,
    ignoreMissingComponents: spec.ignoreMissingComponents,
    buildMetadata: spec.buildMetadata,
    allowRemoteBases: settings.allowRemoteBases,
    ...(decryption
      ? {
          beforeBuild: async (copyRoot: string, kdir: string) => {
            const files = await decryptSources(copyRoot, kdir, decryption);
            if (files.length > 0)
              hooks.note(`Decrypted ${files.length} SOPS file(s) before the build: ${files.join(', ')}`);
          },
        }
      : {}),
  });
  const origin = (obj: KubeObject) => built.origins.get(objectKey(obj));
  const decrypted = decryption
    ? await decryptResources(built.objects, {
        ...decryption,
        originOf: origin,
        sourceOf: async (obj) => {
          const file = origin(obj);
          return file === undefined ? undefined : readFile(join(settings.root, file), 'utf8').catch(() => undefined);
        },
        note: hooks.note,
        onSecretPaths: addPaths,
      })
    : built.objects;
  if (decrypt) refuseCiphertext(decrypted, origin);
  const objects = applyCommonMetadata(
    await substitute(settings, spec, decrypted, client, hooks, addPaths),
    spec.commonMetadata,
  );
  return { ...built, objects, secretPaths: collectSecretPaths(objects, byIndex, values) };
}

/**
 * SOPS decryption runs when the spec asks for it (spec.decryption) or the run was given keys. Keys
 * come from the decryption Secret in the cluster, the run's inputs, and the runner's ambient cloud
 * credentials.
 */
async function decryptOptions(
  settings: Settings,
  spec: KustomizationSpec,
  client: ClusterClient | undefined,
  hooks: Pick<Hooks, 'secret'> & { note: (line: string) => void },
): Promise<DecryptOptions | undefined> {
  const inputKeys = {
    ...(settings.sopsAgeKey ? { age: settings.sopsAgeKey } : {}),
    ...(settings.sopsPgpKey ? { pgp: settings.sopsPgpKey } : {}),
    vaultAddresses: settings.sopsVaultAddresses,
  };
  if (!spec.decryption && !inputKeys.age && !inputKeys.pgp) return undefined;
  let fromSecret: SecretKeys | undefined;
  if (spec.decryption?.secretRef) {
    if (client) fromSecret = await readDecryptionSecret(client, spec, hooks.secret);
    else
      hooks.note(
        `${describeSpec(spec)}: spec.decryption.secretRef skipped: no cluster to read it from (give --kubeconfig)`,
      );
  }
  return {
    keyServices: keyServices(inputKeys, fromSecret, settings.env),
    verifyMac: settings.sopsVerifyMac,
    onSecret: hooks.secret,
  };
}

/**
 * postBuild substitution with Flux's sources and precedence, plus the action's own inputs at the
 * bottom: vars/secret-vars < substituteFrom (in order) < postBuild.substitute. It runs when the spec
 * has postBuild, or, for the single Kustomization of the inputs, when variables were given.
 */
async function substitute(
  settings: Settings,
  spec: KustomizationSpec,
  objects: KubeObject[],
  client: ClusterClient | undefined,
  hooks: Pick<Hooks, 'secret'> & { note: (line: string) => void },
  onSecretPaths: (index: number, paths: string[]) => void,
): Promise<KubeObject[]> {
  const inputLayers: VariableLayer[] = [
    { source: 'input "vars"', vars: settings.vars },
    { source: 'input "secret-vars"', vars: settings.secretVars, secret: true },
  ];
  Object.values(settings.secretVars).forEach(hooks.secret);
  const inputVars = Object.keys(settings.vars).length + Object.keys(settings.secretVars).length > 0;
  if (!spec.postBuild && !(spec.origin.kind === 'inputs' && inputVars)) return objects;
  let fromCluster: VariableLayer[] = [];
  if (spec.postBuild?.substituteFrom.length) {
    if (client) {
      fromCluster = await readSubstituteFrom(client, spec, hooks.secret);
    } else {
      hooks.note(
        `${describeSpec(spec)}: spec.postBuild.substituteFrom skipped: no cluster to read it from (give --kubeconfig)`,
      );
    }
  }
  const layers = [
    ...inputLayers,
    ...fromCluster,
    { source: `${describeSpec(spec)}: spec.postBuild.substitute`, vars: spec.postBuild?.substitute ?? {} },
  ];
  return substituteObjects(objects, mergeVariables(layers), {
    strict: settings.strictSubstitute,
    strategy: spec.postBuild?.substituteStrategy ?? 'WithVariables',
    secretNames: secretNames(layers),
    onSecretPaths,
    onSecret: hooks.secret,
  });
}

/**
 * A run end to end: the Kustomizations of the inputs or files, in dependsOn order (each starts when
 * its dependencies have finished, four at most at once), each built, planned, applied (unless
 * previewing) and waited for. A Kustomization whose dependency is not ready is skipped with the
 * reason. Failures land in the report, never thrown.
 */
export async function reconcile(settings: Settings, hooks: Hooks): Promise<Report> {
  if (settings.mode !== 'drift') return reconcileMode(settings, hooks);
  // Drift: a dry-run against the cluster; with drift-correction, an apply when it found drift.
  const check = await reconcileMode(settings, hooks);
  const detected = check.ok && driftFound(check);
  if (!detected || !settings.driftCorrection) return { ...check, drift: { detected, corrected: false } };
  hooks.log('Drift found: correcting it (drift-correction: true)');
  const applied = await reconcileMode({ ...settings, mode: 'apply' }, hooks);
  return { ...applied, mode: 'drift', drift: { detected, corrected: applied.ok } };
}

async function reconcileMode(settings: Settings, hooks: Hooks): Promise<Report> {
  const started = Date.now();
  let specs: KustomizationSpec[];
  let levels: KustomizationSpec[][];
  let sources: Map<string, SourceVerdict>;
  let client: ClusterClient;
  try {
    const kc = await loadKubeConfig(settings.kubeconfig, settings.context, {
      execTimeoutMs: settings.clusterTimeouts.requestMs,
    });
    kubeconfigSecrets(kc).forEach(hooks.secret);
    specs = await resolveSpecs(settings);
    checkSupported(specs, 'apply');
    if (settings.noCrossNamespaceRefs) refuseCrossNamespaceRefs(specs);
    levels = dependencyOrder(specs);
    sources = await checkSources(settings, specs, hooks.log);
    client = new ClusterClient(kc, { timeouts: settings.clusterTimeouts });
  } catch (err) {
    return emptyReport(settings, started, err instanceof Error ? err.message : String(err));
  }
  try {
    // One discovery for the run: it reads the server again by itself after CRDs are established.
    const discovery = new Discovery(client);
    const report = await reconcileAll(settings, specs, levels, sources, client, discovery, hooks, started);
    return await withRemoved(report, settings, specs, client, discovery, hooks);
  } finally {
    client.close();
  }
}

/** Every Kustomization of the run, in dependsOn order (four at most at once), as one report. */
async function reconcileAll(
  settings: Settings,
  specs: KustomizationSpec[],
  levels: KustomizationSpec[][],
  sources: ReadonlyMap<string, SourceVerdict>,
  client: ClusterClient,
  discovery: Discovery,
  hooks: Hooks,
  started: number,
): Promise<Report> {
  /** The Kustomization's report when its source is not this checkout: failed, nothing built. */
  const wrongSource = (spec: KustomizationSpec): Report | undefined => {
    const verdict = sources.get(`${spec.namespace}/${spec.name}`);
    if (verdict?.kind !== 'other') return undefined;
    return skippedReport(settings, spec, `${describeSpec(spec)}: ${verdict.problem}`);
  };
  if (specs.length === 1)
    return wrongSource(specs[0]!) ?? (await reconcileTarget(settings, specs[0]!, client, discovery, hooks));
  const byKey = new Map(specs.map((s) => [`${s.namespace}/${s.name}`, s]));
  const reports = await runInDependencyOrder<Report>(levels.flat(), KUSTOMIZATION_CONCURRENCY, async (spec, done) => {
    const key = `${spec.namespace}/${spec.name}`;
    const refused = wrongSource(spec);
    if (refused) {
      hooks.log(`[${key}] ${refused.error ?? ''}`);
      return refused;
    }
    const blocked = dependencyProblem(spec, byKey, done);
    if (blocked) {
      const reason = `skipped: ${blocked}`;
      hooks.log(`[${key}] ${reason}`);
      return skippedReport(settings, spec, reason);
    }
    if (client.unreachable) return skippedReport(settings, spec, 'skipped: the cluster could not be reached');
    hooks.log(`[${key}] reconciling ${spec.path}`);
    const prefixed: Hooks = {
      log: (l) => {
        hooks.log(`[${key}] ${l}`);
      },
      secret: hooks.secret,
    };
    return reconcileTarget(settings, spec, client, discovery, prefixed);
  });
  return combine(
    settings,
    specs.map((s) => reports.get(`${s.namespace}/${s.name}`)!),
    started,
    client.server,
  );
}

/** The run's report with what became of the Kustomizations removed from the repository. */
async function withRemoved(
  report: Report,
  settings: Settings,
  specs: KustomizationSpec[],
  client: ClusterClient,
  discovery: Discovery,
  hooks: Hooks,
): Promise<Report> {
  let r: RemovalReport;
  if (client.unreachable) return report;
  try {
    r = await handleRemoved(client, discovery, settings, specs, report.ok, hooks.log);
  } catch (err) {
    r = {
      removed: [],
      pruned: [],
      notes: [],
      error: `looking for removed Kustomizations failed: ${(err as Error).message}`,
    };
  }
  if (r.removed.length === 0 && r.notes.length === 0 && r.error === undefined) return report;
  const pruned = [...(report.pruned ?? []), ...r.pruned];
  const error = [report.error, r.error].filter((e) => e !== undefined).join('\n');
  return {
    ...report,
    ok: report.ok && r.error === undefined,
    counts: countReport(report.changeset, pruned),
    notes: [...report.notes, ...r.notes],
    ...(r.removed.length > 0 ? { removed: r.removed } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(error !== '' ? { error } : {}),
  };
}

/**
 * Why `spec` may not run yet, or undefined when every dependency is ready. Ready is Flux's built-in
 * rule (the dependency succeeded in this run), or, where a dependsOn entry has a readyExpr, that
 * expression alone (Flux skips the built-in check then), with `self` and `dep` as Flux objects.
 */
function dependencyProblem(
  spec: KustomizationSpec,
  specs: ReadonlyMap<string, KustomizationSpec>,
  reports: ReadonlyMap<string, Report>,
): string | undefined {
  for (const d of spec.dependsOn) {
    const key = `${d.namespace}/${d.name}`;
    const report = reports.get(key);
    const depSpec = specs.get(key);
    if (!report || !depSpec) return `dependency '${key}' was not reconciled in this run`;
    if (d.readyExpr === undefined) {
      if (!report.ok) return `dependency '${key}' is not ready (it failed or was skipped in this run)`;
      continue;
    }
    const dep = kustomizationObject(depSpec, outcomeOf(report));
    try {
      if (!evalReadyExpr(d.readyExpr, kustomizationObject(spec), dep))
        return `dependency '${key}' is not ready according to readyExpr eval`;
    } catch (err) {
      return `dependency '${key}': readyExpr ${JSON.stringify(d.readyExpr)} failed: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  return undefined;
}

/** The Ready condition kustomize-controller would have written for this report. */
function outcomeOf(report: Report): Outcome {
  if (report.ok) return { ok: true, reason: 'ReconciliationSucceeded', message: 'Applied revision' };
  const error = report.error ?? 'failed';
  const reason = error.startsWith('skipped: ')
    ? 'DependencyNotReady'
    : error.startsWith('health check failed')
      ? 'HealthCheckFailed'
      : 'ReconciliationFailed';
  return { ok: false, reason, message: error };
}

/** One Kustomization: build, plan, apply (unless previewing), wait, prune, record. Failures land in the report. */
/**
 * One Kustomization in the cluster it targets: the action's cluster, or with spec.kubeConfig a
 * remote one whose kubeconfig is a Secret in the action's cluster. Objects, health, prune, the
 * inventory and the lock are in the target; substituteFrom and decryption Secrets are read from the
 * action's cluster, as Flux reads them with the controller's client.
 */
async function reconcileTarget(
  settings: Settings,
  spec: KustomizationSpec,
  management: ClusterClient,
  discovery: Discovery,
  hooks: Hooks,
): Promise<Report> {
  const ref = spec.kubeConfig?.secretRef;
  if (!ref) return reconcileOne(settings, spec, management, management, discovery, hooks, []);
  const notes: string[] = [];
  let remote: ClusterClient;
  try {
    const kc = await remoteKubeConfig(management, spec.namespace, ref, (line) => {
      notes.push(line);
      hooks.log(line);
    });
    kubeconfigSecrets(kc).forEach(hooks.secret);
    remote = new ClusterClient(kc, { timeouts: settings.clusterTimeouts });
  } catch (err) {
    return { ...skippedReport(settings, spec, `${describeSpec(spec)}: ${(err as Error).message}`), notes };
  }
  hooks.log(`Reconciling into ${remote.server} (spec.kubeConfig.secretRef ${spec.namespace}/${ref.name})`);
  try {
    return await reconcileOne(settings, spec, management, remote, new Discovery(remote), hooks, notes);
  } finally {
    remote.close();
  }
}

async function reconcileOne(
  settings: Settings,
  spec: KustomizationSpec,
  management: ClusterClient,
  client: ClusterClient,
  discovery: Discovery,
  hooks: Hooks,
  notes: string[],
): Promise<Report> {
  const started = Date.now();
  let changeset: ChangeSetEntry[] = [];
  let health: HealthResult[] | undefined;
  let pruned: PruneResult[] | undefined;
  let problems: Problem[] = [];
  let origins = new Map<string, string>();
  const store = new InventoryStore(client, settings.inventoryNamespace ?? spec.namespace, spec);
  const inventory = new InventoryRun(
    client,
    store,
    settings,
    spec,
    started,
    legacyStore(client, store, settings, spec),
    management,
  );
  const finish = (error?: string): Report => ({
    mode: settings.mode,
    kustomization: `${spec.namespace}/${spec.name}`,
    path: spec.path,
    server: client.server,
    ok: error === undefined,
    changeset,
    counts: countReport(changeset, pruned),
    durationMs: Date.now() - started,
    notes,
    inventory: `${store.namespace}/${store.name}`,
    ...(health ? { health } : {}),
    ...(pruned
      ? { pruned: pruned.map(({ subject, action, reason }) => ({ subject, action, ...(reason ? { reason } : {}) })) }
      : {}),
    ...(error !== undefined ? { error } : {}),
    ...(error !== undefined && problems.length > 0 ? { problems } : {}),
  });
  const note = (line: string) => {
    notes.push(line);
    hooks.log(line);
  };
  const apply = settings.mode === 'apply';
  // The secrets rendering met: the inventory's status message is scrubbed of them (it is in the cluster).
  const known = new Set<string>();
  const rendered = (v: string) => {
    known.add(v);
    hooks.secret(v);
  };
  // Started before the build and awaited after it, so that the cluster round trips (discovery, the
  // lock, the inventory read) overlap the build instead of following it.
  let ready: Promise<void> = Promise.resolve();
  try {
    if (spec.suspend) {
      note(`${describeSpec(spec)} is suspended (spec.suspend: true); nothing was built or applied`);
      return finish();
    }
    discovery.warm();
    ready = apply ? inventory.lock(hooks.log, note) : inventory.peek(note);
    // A refusal (another repository's inventory) is known before the build's result is needed.
    ready.catch(() => undefined);
    const built = await renderSpec(settings, spec, management, { secret: rendered, note });
    origins = new Map(
      [...built.objects].flatMap((o) => {
        const file = built.origins.get(objectKey(o));
        return file === undefined ? [] : [[subjectOf(o), file] as const];
      }),
    );
    const encrypted = stillEncrypted(built.objects);
    if (encrypted.length > 0) throw new SopsError(encrypted.join('\n'));
    // As Flux sends them: its normalisation decides which fields our manager owns (src/ssa/normalize.ts).
    const objects = setOwnerLabels(normalizeForApply(built.objects), spec.name, spec.namespace);
    if (built.missingComponents.length > 0) note(`Ignored missing component(s): ${built.missingComponents.join(', ')}`);
    await ready;
    // Names, label keys and kinds the server would refuse fail the run before anything is written.
    await prevalidate(objects, discovery);
    const checkpoint = apply ? inventory.checkpoint : undefined;
    await checkpoint?.();
    if (apply) await inventory.record(objects.map(entryOfObject), note, built.secretPaths);
    // This run's secret fields and those earlier runs recorded (a value's old text stays secret).
    const secretPaths = mergeSecretPaths(built.secretPaths, inventory.secretPaths);
    const actor = actingAs(client, spec, settings, note);
    changeset = await applyAll(actor, discovery, objects, {
      force: spec.force,
      ...(spec.ignore.length > 0
        ? { ignoredPaths: (obj: KubeObject) => ignoredPaths(spec.ignore, obj), strip: stripPaths, adopt: adoptPaths }
        : {}),
      fieldManager: settings.fieldManager,
      dryRunOnly: !apply,
      concurrency: settings.concurrency,
      alwaysDryRun: settings.alwaysDryRun,
      log: hooks.log,
      ...(checkpoint ? { checkpoint } : {}),
      secretPaths: (o) => secretPaths.get(secretPathsId(o)) ?? [],
    });
    if (apply) {
      const targets = healthTargets(spec, changeset);
      if (targets.length > 0) {
        hooks.log(`Waiting up to ${formatDuration(spec.timeout)} for ${targets.length} object(s) to become healthy`);
        const outcome = await waitForHealth(actor, discovery, targets, {
          timeoutMs: spec.timeout,
          concurrency: settings.concurrency,
          log: hooks.log,
          ...(checkpoint ? { checkpoint } : {}),
          ...(spec.healthCheckExprs.length > 0 ? { custom: celStatusReader(spec.healthCheckExprs) } : {}),
        });
        health = outcome.results;
        for (const line of healthTable(outcome.results)) hooks.log(line);
        if (!outcome.ok) throw new Error(healthFailure(outcome, spec.timeout));
      }
    }
    const next = changeset.map(entryOf);
    const stale = staleEntries(inventory.old, next);
    let survivors: Entry[] = [];
    let error: string | undefined;
    if (stale.length > 0 && !spec.prune) {
      note(
        `${stale.length} object(s) left Git but stay in the cluster: spec.prune is off (${stale.map(subjectOfEntry).join(', ')})`,
      );
    } else if (stale.length > 0) {
      const guard = { maxShare: settings.pruneMaxShare, allowLarge: settings.allowLargePrune };
      // A Namespace's contents are read with the run's own credentials, not the impersonated
      // account's: its deletion takes everything in it, whatever that account may see.
      const refusal =
        pruneRefusal(inventory.old, next, stale, guard) ??
        (await namespacePruneRefusal(client, discovery, stale, next, spec, guard, note));
      if (refusal !== undefined) {
        survivors = stale;
        error = `prune refused: ${refusal}`;
      } else {
        hooks.log(`Pruning ${stale.length} object(s)${apply ? '' : ' (dry run)'}`);
        pruned = await deleteStale(actor, discovery, stale, {
          owner: spec,
          formerOwners: inventory.formerOwners,
          dryRun: !apply,
          log: hooks.log,
          ...(checkpoint ? { checkpoint } : {}),
        });
        survivors = pruned.filter((r) => r.action === 'failed').map((r) => r.entry);
        if (survivors.length > 0) {
          error = `prune failed for ${survivors.length} object(s); they stay in the inventory:\n${pruned
            .filter((r) => r.action === 'failed')
            .map((r) => `  ${r.subject}: ${r.reason ?? ''}`)
            .join('\n')}`;
        }
      }
    }
    await checkpoint?.();
    if (apply) await inventory.end({ kind: 'succeeded', survivors }, next, error && scrubText(error, known), note);
    return finish(error);
  } catch (err) {
    if (err instanceof ApplyError) changeset = err.changeset;
    if (err instanceof PruneStopped) pruned = err.results;
    // The failed run's record is a write too: only while the lock is still this run's.
    if (apply) await inventory.checkpoint().catch(() => undefined);
    const lost = inventory.lost;
    if (lost !== undefined) {
      // Another run holds the lock now: stop, and leave its inventory to it (src/inventory/lease.ts).
      const message = err instanceof Error ? err.message : String(err);
      const error = lostLockMessage(lost, changeset, pruned ?? [], message === lost ? undefined : message);
      try {
        await inventory.endLost(await stillThere(client, discovery, written(changeset)), error);
      } catch (writeErr) {
        return finish(`${error}\nand the inventory could not be updated: ${(writeErr as Error).message}`);
      }
      return finish(error);
    }
    // A cluster that cannot be reached is one error, not one per object or per step after it.
    const unreachable = client.unreachable ?? management.unreachable;
    if (unreachable) {
      const notRecorded = apply && inventory.begun ? '\nThe inventory could not be updated either.' : '';
      return finish(unreachable.message + notRecorded);
    }
    problems = await locateProblems(
      settings.root,
      origins,
      err instanceof ApplyError
        ? err.failures.map((f) => ({ subject: subjectOf(f.object), message: f.message }))
        : (health ?? [])
            .filter((h) => h.status !== 'Current')
            .map((h) => ({ subject: h.subject, message: `${h.status}: ${h.message}` })),
    );
    const message = (err instanceof Error ? err.message : String(err)) + forkHint(settings, err);
    if (apply && inventory.begun) {
      const applied = changeset.filter((e) => e.action !== 'skipped').map(entryOf);
      try {
        await inventory.end({ kind: 'failed', applied }, [], scrubText(message, known), note);
      } catch (writeErr) {
        return finish(`${message}\nand the inventory could not be updated: ${(writeErr as Error).message}`);
      }
    }
    return finish(message);
  } finally {
    // A lock still being taken when the build failed is released once it is held.
    await ready.catch(() => undefined);
    await inventory.release();
  }
}

/**
 * The client a Kustomization's dry-runs, applies, health reads and prunes go through: as Flux, the
 * ServiceAccount of spec.serviceAccountName (or the default-service-account input) in the
 * Kustomization's namespace, impersonated by user name alone (no groups), so that RBAC bindings to
 * that account are what it may do.
 */
function actingAs(
  client: ClusterClient,
  spec: KustomizationSpec,
  settings: Settings,
  note: (line: string) => void,
): ClusterClient {
  const user = impersonatedUser(spec, settings);
  if (user === undefined) return client;
  note(`Acting as ${user}${spec.serviceAccountName ? '' : ' (input default-service-account)'}`);
  return client.impersonating(user);
}

/** Each problem with the file its object came from and the line of its name there, where known. */
async function locateProblems(
  root: string,
  origins: ReadonlyMap<string, string>,
  found: { subject: string; message: string }[],
): Promise<Problem[]> {
  const texts = new Map<string, Promise<string | undefined>>();
  return Promise.all(
    found.map(async (p) => {
      const file = origins.get(p.subject);
      if (file === undefined) return p;
      if (!texts.has(file))
        texts.set(
          file,
          readFile(join(root, file), 'utf8').catch(() => undefined),
        );
      const text = await texts.get(file)!;
      const [kind = '', ...rest] = p.subject.split('/');
      const line = text === undefined ? undefined : locateObject(text, kind, rest[rest.length - 1] ?? '');
      return { ...p, file, ...(line !== undefined ? { line } : {}) };
    }),
  );
}

/**
 * Why a SOPS file could not be decrypted when the run is for a pull request from a fork: said once,
 * after the error that names the file and the key.
 */
export function forkHint(settings: Pick<Settings, 'fork'>, err: unknown): string {
  if (!settings.fork || !(err instanceof SopsError)) return '';
  return (
    '\nNot decrypted because this pull request comes from a fork: GitHub gives its workflows no secrets ' +
    '(no SOPS key inputs, no cluster credentials to read a decryption Secret with). Its encrypted files are ' +
    'previewed once the change is on a branch of this repository, or from a workflow_run workflow that has them.'
  );
}

/** Where a Kustomization comes from, as its inventory records it: its file, or the path input. */
const originOf = (spec: KustomizationSpec): string =>
  spec.origin.kind === 'file' ? spec.origin.file : `path: ${spec.path}`;

/**
 * The inventory this path-input Kustomization had under its former name (the path alone), when its
 * name is derived; it is read only to be adopted if it records this repository.
 */
function legacyStore(
  client: ClusterClient,
  store: InventoryStore,
  settings: Settings,
  spec: KustomizationSpec,
): InventoryStore | undefined {
  if (spec.origin.kind !== 'inputs' || settings.name !== undefined) return undefined;
  const former = { name: legacyName(spec.path), namespace: spec.namespace };
  return former.name === spec.name ? undefined : new InventoryStore(client, store.namespace, former);
}

const entryOfObject = (o: KubeObject): Entry =>
  entryOf({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace });

/**
 * One run's dealings with a Kustomization's inventory: lock, read, pending record, final record
 * (the inventory rule of src/inventory/plan.ts), release. Previews only read.
 */
class InventoryRun {
  /** Confirmed entries when the run started. */
  private base: Entry[] = [];
  /** Pending entries a killed run left behind. */
  private leftover: Entry[] = [];
  private held: Lock | undefined;
  private lastApplied: string | undefined;
  /** The inventory under this path's former name, adopted because it records this repository. */
  private adopted: { store: InventoryStore; kustomization: string } | undefined;
  /** The pending entries as this run recorded them. */
  private recorded: Entry[] = [];
  /** Secret field paths recorded by earlier runs, and those of this run (see substitute/provenance.ts). */
  secretPaths: SecretPaths = new Map();
  private newSecretPaths: SecretPaths = new Map();
  /** The Flux Kustomization of this namespace/name (read from the management cluster), if any. */
  private flux: FluxLookup = {};
  begun = false;

  constructor(
    private readonly client: ClusterClient,
    private readonly store: InventoryStore,
    private readonly settings: Settings,
    private readonly spec: KustomizationSpec,
    private readonly started: number,
    private readonly legacy?: InventoryStore,
    private readonly management: ClusterClient = client,
  ) {}

  /**
   * Looks for a Flux Kustomization of this namespace/name (src/inventory/flux.ts): one that is not
   * suspended refuses a run that writes (throws), and is a note in a preview.
   */
  private async lookForFlux(writes: boolean, note: (line: string) => void): Promise<void> {
    this.flux = await readFluxKustomization(this.management, this.spec);
    const found = this.flux.object;
    if (found === undefined) return;
    if (writes) {
      const conflict = fluxConflict(found, this.spec.kubeConfig);
      if (conflict !== undefined) throw new Error(conflict);
    } else {
      const warning = fluxConflictNote(found, this.spec.kubeConfig);
      if (warning !== undefined) note(warning);
    }
  }

  /** With no inventory of its own, the Flux Kustomization's status.inventory is the previous one. */
  private importFlux(note: (line: string) => void, preview: boolean): InventoryRecord | undefined {
    if (this.flux.forbidden !== undefined) note(this.flux.forbidden);
    if (this.flux.object === undefined) return undefined;
    const imported = fluxImport(this.flux.object, this.spec.kubeConfig, preview);
    note(imported.note);
    if (imported.entries.length === 0) return undefined;
    return { entries: imported.entries, pending: [], status: this.status('InProgress') };
  }

  /** What the run starts from: confirmed ∪ leftover pending entries (prune looks each one up). */
  get old(): Entry[] {
    return union(this.base, this.leftover);
  }

  /** The owner names the adopted inventory's objects may still carry. */
  get formerOwners(): { name: string; namespace: string }[] {
    if (!this.adopted) return [];
    const [namespace = '', name = ''] = this.adopted.kustomization.split('/');
    return [{ name, namespace }];
  }

  /** This run as the inventory records it, and as ownership is judged. */
  private get claim(): Claim {
    return {
      kustomization: `${this.spec.namespace}/${this.spec.name}`,
      source: this.settings.run.source,
      origin: originOf(this.spec),
    };
  }

  /** Refuses (throws) an inventory recorded by another repository, before anything is applied. */
  private checkOwner(record: InventoryRecord | undefined): void {
    const problem = ownershipProblem(record?.status, `${this.store.namespace}/${this.store.name}`, this.claim);
    if (problem !== undefined) throw new Error(problem);
  }

  /**
   * With no inventory under the derived name yet, the one this path had under its former name is
   * taken as the starting point, but only when it records this repository (never otherwise).
   */
  private async adoptLegacy(note: (line: string) => void): Promise<InventoryRecord | undefined> {
    const legacy = this.legacy;
    if (!legacy) return undefined;
    const snap = await legacy.read();
    const status = snap.record?.status;
    if (!snap.record || !status) return undefined;
    const where = `${legacy.namespace}/${legacy.name}`;
    const expected = `${this.spec.namespace}/${legacyName(this.spec.path)}`;
    if (status.set !== undefined || status.kustomization !== expected) return undefined;
    if (status.source === undefined || !recordedBy({ ...status, source: status.source }, this.settings.run.source)) {
      note(
        `Inventory ${where} has this path's former name but ${status.source ? `records repository ${status.source}` : 'records no repository'}, ` +
          `not ${this.settings.run.source}: it was not adopted, and its objects are left alone`,
      );
      return undefined;
    }
    this.adopted = { store: legacy, kustomization: status.kustomization };
    note(
      `Adopted inventory ${where} (this path's name before names included the repository): ` +
        `its ${snap.record.entries.length} object(s) now belong to ${this.claim.kustomization}`,
    );
    return snap.record;
  }

  /** A preview reads the inventory to show the prune set; no inventory yet is not an error. */
  async peek(note: (line: string) => void): Promise<void> {
    let record: InventoryRecord | undefined;
    await this.lookForFlux(false, note);
    try {
      record = (await this.store.read()).record ?? (await this.adoptLegacy(note)) ?? this.importFlux(note, true);
      this.secretPaths = new Map(Object.entries(record?.secretPaths ?? {}));
    } catch (err) {
      if (isUnreachable(err)) throw err;
      note(
        `The inventory ${this.store.namespace}/${this.store.name} could not be read, so the prune preview is empty: ${(err as Error).message}`,
      );
      return;
    }
    this.checkOwner(record);
    this.base = record?.entries ?? [];
    this.leftover = record?.pending ?? [];
  }

  /**
   * Takes the Kustomization's lock (creating the inventory's namespace if needed); then refuses
   * (throws) while a Flux Kustomization of the same name is not suspended.
   */
  async lock(log: (line: string) => void, note: (line: string) => void): Promise<void> {
    await this.explained(async () => {
      if (await this.store.ensureNamespace()) note(`Created namespace ${this.store.namespace} for the inventory`);
      this.held = await Lock.acquire(this.client, this.store.namespace, this.store.name, {
        holder: this.settings.run.holder,
        leaseMs: this.settings.lockLeaseMs,
        waitMs: this.settings.lockTimeoutMs,
        log,
      });
    });
    // Read once the lock is held (it may have been waited for): Flux's state as it is now.
    await this.lookForFlux(true, note);
  }

  /**
   * Under the lock: reads the inventory and records the planned objects as pending. An inventory
   * recorded by another repository is refused here, before anything is written or applied.
   */
  async record(planned: Entry[], note: (line: string) => void, secretPaths: SecretPaths): Promise<void> {
    this.newSecretPaths = secretPaths;
    await this.explained(async () => {
      const snapshot = await this.store.read();
      const current = snapshot.record;
      this.checkOwner(current);
      const adopted =
        current === undefined ? ((await this.adoptLegacy(note)) ?? this.importFlux(note, false)) : undefined;
      this.begun = true;
      await this.store.update((latest) => {
        this.checkOwner(latest);
        const from = latest ?? adopted;
        this.base = from?.entries ?? [];
        this.leftover = from?.pending ?? [];
        this.lastApplied = from?.status.lastAppliedRevision;
        this.secretPaths = new Map(Object.entries(from?.secretPaths ?? {}));
        this.recorded = union(this.leftover, minus(planned, this.base));
        return {
          entries: this.base,
          pending: this.recorded,
          status: this.status('InProgress'),
          ...recordSecretPaths(from?.secretPaths, this.newSecretPaths, [...this.base, ...this.recorded]),
        };
      }, snapshot);
    });
  }

  /** A 403 on the inventory or its lock, with what the credentials need. */
  private async explained(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 403)) throw err;
      const ns = this.store.namespace;
      throw new Error(
        `inventory ${ns}/${this.store.name}: ${err.message}. The action's credentials need get, create and update ` +
          `on configmaps and coordination.k8s.io leases in namespace ${ns}; or set inventory-namespace to a ` +
          'namespace where they have them',
        { cause: err },
      );
    }
  }

  async end(
    outcome: RunOutcome,
    next: Entry[],
    error: string | undefined,
    note: (line: string) => void,
  ): Promise<void> {
    const ours = entriesAfter(this.base, next, outcome);
    const result = outcome.kind === 'succeeded' && error === undefined ? 'Succeeded' : 'Failed';
    await this.store.update((latest) => {
      const entries = mergeConcurrent(this.base, latest?.entries ?? [], ours);
      // Leftover pending entries stay pending until a successful run settles them (pruned or kept).
      const pending = pendingAfter({
        succeeded: outcome.kind === 'succeeded',
        leftover: this.leftover,
        recorded: this.recorded,
        latest: latest?.pending ?? [],
        confirmed: ours,
      });
      return {
        entries,
        pending,
        status: this.status(result, error),
        ...recordSecretPaths(latest?.secretPaths, this.newSecretPaths, [...entries, ...pending]),
      };
    });
    // Everything the former inventory held is in the new one now (as entries or pending).
    if (this.adopted) {
      const { store } = this.adopted;
      await store.remove();
      note(`Removed the adopted inventory ${store.namespace}/${store.name}`);
      this.adopted = undefined;
    }
  }

  /** The checkpoint before each write: rejects (LockLost) once the lock is not this run's any more. */
  readonly checkpoint = async (): Promise<void> => {
    await this.held?.assertHeld();
  };

  /** Why the lock was lost while this run held it, if it was. */
  get lost(): string | undefined {
    return this.held?.lostReason;
  }

  /**
   * The record of a run that lost its lock: the new holder's record stays as it is, but for the
   * objects this run wrote that still exist and that it does not hold, added as pending.
   */
  async endLost(stillThere: Entry[], error: string): Promise<void> {
    if (!lostRunPending((await this.store.read()).record, stillThere)) return;
    await this.store.update((latest) => ({
      entries: latest?.entries ?? [],
      pending: lostRunPending(latest, stillThere) ?? latest?.pending ?? [],
      status: latest?.status ?? this.status('Failed', error),
      ...(latest?.secretPaths ? { secretPaths: latest.secretPaths } : {}),
    }));
  }

  private status(result: InventoryStatus['result'], message?: string): InventoryStatus {
    const { run } = this.settings;
    const now = Date.now();
    const applied = result === 'Succeeded' ? run.revision : this.lastApplied;
    return {
      kustomization: `${this.spec.namespace}/${this.spec.name}`,
      source: run.source,
      ...(this.settings.kustomizations.length > 0
        ? { set: setIdentity(run.source, this.settings.kustomizations) }
        : {}),
      origin: originOf(this.spec),
      result,
      ...(message ? { message: message.split('\n')[0]! } : {}),
      ...(run.revision ? { lastAttemptedRevision: run.revision } : {}),
      ...(applied ? { lastAppliedRevision: applied } : {}),
      startedAt: new Date(this.started).toISOString(),
      ...(result !== 'InProgress' ? { finishedAt: new Date(now).toISOString(), durationMs: now - this.started } : {}),
      ...(run.url ? { runUrl: run.url } : {}),
      prune: this.spec.prune,
      ...(impersonatedUser(this.spec, this.settings)
        ? { impersonate: impersonatedUser(this.spec, this.settings) }
        : {}),
      deletionPolicy: this.spec.deletionPolicy,
      timeoutMs: this.spec.timeout,
    };
  }

  async release(): Promise<void> {
    // A cluster that cannot be reached keeps the lease until it expires; the run's error says why.
    await this.held?.release().catch((err: unknown) => {
      if (!isUnreachable(err)) throw err;
    });
  }
}

function emptyReport(settings: Settings, started: number, error: string): Report {
  return {
    mode: settings.mode,
    kustomization: '',
    path: settings.path,
    server: '',
    ok: false,
    changeset: [],
    counts: countReport([]),
    durationMs: Date.now() - started,
    notes: [],
    error,
  };
}

function skippedReport(settings: Settings, spec: KustomizationSpec, reason: string): Report {
  return {
    ...emptyReport(settings, Date.now(), reason),
    kustomization: `${spec.namespace}/${spec.name}`,
    path: spec.path,
  };
}

/** One report for several Kustomizations: totals, all objects, and each Kustomization's own report. */
function combine(settings: Settings, reports: Report[], started: number, server: string): Report {
  const changeset = reports.flatMap((r) => r.changeset);
  const problems = reports.flatMap((r) => r.problems ?? []);
  const health = reports.flatMap((r) => r.health ?? []);
  const pruned = reports.flatMap((r) => r.pruned ?? []);
  const failed = reports.filter((r) => !r.ok);
  return {
    mode: settings.mode,
    kustomization: reports.map((r) => r.kustomization).join(', '),
    path: reports.map((r) => r.path).join(', '),
    server,
    ok: failed.length === 0,
    changeset,
    counts: countReport(changeset, pruned),
    durationMs: Date.now() - started,
    notes: reports.flatMap((r) => r.notes.map((n) => `[${r.kustomization}] ${n}`)),
    ...(health.length > 0 ? { health } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(failed.length > 0 ? { error: combinedError(failed) } : {}),
    kustomizations: reports,
  };
}

/** The failed Kustomizations' errors, each text once: Kustomizations that failed alike share a line. */
function combinedError(failed: readonly Report[]): string {
  const byError = new Map<string, string[]>();
  for (const r of failed) {
    const error = r.error ?? 'failed';
    byError.set(error, [...(byError.get(error) ?? []), r.kustomization]);
  }
  return [...byError]
    .map(([error, names]) => `Kustomization${names.length > 1 ? 's' : ''} ${names.join(', ')}: ${error}`)
    .join('\n');
}

/**
 * What to wait for, as Flux decides: with spec.wait every applied object but skipped ones (and
 * healthChecks are ignored); otherwise the spec.healthChecks references, which may name objects
 * outside the build.
 */
export function healthTargets(spec: KustomizationSpec, changeset: readonly ChangeSetEntry[]): HealthTarget[] {
  if (spec.wait) {
    return changeset
      .filter((e) => e.action !== 'skipped')
      .map((e) => ({
        subject: e.subject,
        apiVersion: e.apiVersion,
        kind: e.kind,
        name: e.name,
        ...(e.namespace ? { namespace: e.namespace } : {}),
        selector: selectorFor(spec.name, spec.namespace),
      }));
  }
  return spec.healthChecks.map((r) => ({
    subject: r.namespace ? `${r.kind}/${r.namespace}/${r.name}` : `${r.kind}/${r.name}`,
    apiVersion: r.apiVersion,
    kind: r.kind,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
  }));
}
