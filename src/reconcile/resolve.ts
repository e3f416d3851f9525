/**
 * The resolve phase: which Kustomizations a run has, in which order, from which source, and the
 * cluster each one targets. Nothing is built yet.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClusterClient } from '../cluster/client.js';
import { kubeconfigSecrets, loadKubeConfig } from '../cluster/kubeconfig.js';
import { remoteKubeConfig } from '../cluster/remote.js';
import { identityKubeConfig } from '../cluster/remote-identity.js';
import { locateField, type Problem } from '../report/problems.js';
import type { Settings } from '../options/settings.js';
import { DuplicateSpecError, SpecError } from '../flux/parse.js';
import { specFromInputs } from '../flux/from-inputs.js';
import { kustomizationFiles, loadKustomizations } from '../flux/load.js';
import { buildersOf } from '../flux/applied-by.js';
import { repositoryKustomizations } from '../flux/repository.js';
import { sourceVerdict, type SourceVerdict } from '../flux/checkout.js';
import { refuseConflicts } from '../flux/source-identity.js';
import { findSources } from '../flux/source-files.js';
import { dependencyOrder } from '../flux/graph.js';
import { clusterOf } from '../flux/clusters.js';
import { describeSpec, unsupportedFields } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { KustomizationContext } from './context.js';
import { refusedUse } from './secret-trust.js';
import type { SecretUse } from '../source/secret-uses.js';
import { UserError } from '../util/user-error.js';

/**
 * The Kustomizations a run works on: the files named by `kustomizations`, or one from the inputs.
 * `note` hears the matched files skipped (no Kustomization in them) and the generators not expanded.
 */
export async function resolveSpecs(settings: Settings, note?: (line: string) => void): Promise<KustomizationSpec[]> {
  if (settings.kustomizations.length > 0) {
    const cluster = settings.cluster;
    return loadKustomizations(settings.kustomizations, settings.root, {
      ...(cluster === undefined ? {} : { keep: (file: string) => clusterOf(file) === cluster }),
      ...(note ? { note } : {}),
      builtElsewhere: (files) => builtByRepository(settings.root, files),
      exclude: settings.exclude,
      fromCheckout: (spec: KustomizationSpec) => buildsFromCheckout(settings, spec),
    }).catch(async (err: unknown) => {
      throw cluster === undefined ? await severalClusters(err, settings) : err;
    });
  }
  return [
    specFromInputs({
      path: settings.path,
      source: settings.run.source,
      ...(settings.name ? { name: settings.name } : {}),
      wait: settings.wait,
      prune: settings.prune,
      force: settings.force,
      ...(settings.timeout !== undefined ? { timeout: settings.timeout } : {}),
      ...(settings.targetNamespace ? { targetNamespace: settings.targetNamespace } : {}),
    }),
  ];
}

/** Whether `spec` is built from this checkout, as the run judges its source (checkSources), silently. */
export async function buildsFromCheckout(settings: Settings, spec: KustomizationSpec): Promise<boolean> {
  const verdicts = await checkSources(settings, [spec], () => undefined).catch(() => undefined);
  const verdict = verdicts?.get(`${spec.namespace}/${spec.name}`);
  return verdicts !== undefined && (verdict?.kind ?? 'checkout') === 'checkout';
}

/** Which of `files` a Kustomization of the repository's other files builds (repository.ts, applied-by.ts). */
export async function builtByRepository(root: string, files: readonly string[]): Promise<Set<string>> {
  const others = await repositoryKustomizations(root, new Set(files));
  const builders = await buildersOf(root, others, files);
  return new Set(files.filter((f) => (builders.get(f)?.length ?? 0) > 0));
}

/**
 * A Kustomization defined twice because the files are of several clusters (`clusters/<name>/`,
 * each with its flux-system/apps): the error says to take one cluster per run.
 */
async function severalClusters(err: unknown, settings: Settings): Promise<unknown> {
  if (!(err instanceof DuplicateSpecError)) return err;
  const clusters = [
    ...new Set((await kustomizationFiles(settings.kustomizations, settings.root, settings.exclude)).map(clusterOf)),
  ];
  if (clusters.filter((c) => c !== '').length < 2) return err;
  const names = clusters.map((c) => c || '(none)').join(', ');
  return new SpecError(
    [
      ...err.problems,
      `the files are of several clusters (${names}): reconcile one cluster per run with the input cluster (CLI --cluster NAME), or fan out over them with mode: plan`,
    ],
    err.locations,
  );
}

/**
 * Which of `specs` this checkout may build (see flux/checkout.ts), keyed `namespace/name`. Notes
 * (a source taken to be the checkout without proof) are logged once per source.
 */
export async function checkSources(
  settings: Settings,
  specs: readonly KustomizationSpec[],
  log: (line: string) => void,
): Promise<Map<string, SourceVerdict>> {
  const verdicts = new Map<string, SourceVerdict>();
  if (!specs.some((s) => s.sourceRef !== undefined)) return verdicts;
  const found = await findSources(settings.root);
  const facts = {
    source: settings.run.source,
    ...(settings.run.branch ? { branch: settings.run.branch } : {}),
    ...(settings.source ? { explicit: settings.source } : {}),
    definitions: found.definitions,
    others: found.others,
  };
  for (const spec of specs) verdicts.set(`${spec.namespace}/${spec.name}`, sourceVerdict(spec, facts));
  // One run is one cluster, which holds one object per namespace/name (flux/source-identity.ts).
  const checked = refuseConflicts(specs, verdicts, found.definitions);
  const noted = new Set<string>();
  for (const spec of specs) {
    const verdict = checked.get(`${spec.namespace}/${spec.name}`)!;
    verdicts.set(`${spec.namespace}/${spec.name}`, verdict);
    const notes = verdict.kind === 'checkout' ? [verdict.note] : verdict.kind === 'fetch' ? (verdict.notes ?? []) : [];
    for (const note of notes) {
      if (note === undefined || noted.has(note)) continue;
      noted.add(note);
      log(note);
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

/** What a run works on, resolved before anything is built. */
export interface Resolved {
  /** The Kustomizations this run reconciles: all of the files', or the selected ones. */
  specs: KustomizationSpec[];
  /** dependsOn levels of `specs`: each Kustomization after those it depends on. */
  levels: KustomizationSpec[][];
  /** Every Kustomization of the files (of the cluster), selected or not: others' jobs reconcile the rest. */
  all: KustomizationSpec[];
  /** The run handles removed Kustomizations: it is not a fan-out job, or the job of the first Kustomization. */
  handlesRemoved: boolean;
  /** Each Kustomization's dependsOn level among `all` (`namespace/name` → 0, 1, ...). */
  levelOf: ReadonlyMap<string, number>;
  /** Each Kustomization's source verdict, keyed `namespace/name`. */
  sources: Map<string, SourceVerdict>;
  client: ClusterClient;
}

/** The run's Kustomizations, their order and sources, and a client for the action's cluster. */
export async function resolveRun(
  settings: Settings,
  log: (line: string) => void,
  secret: (value: string) => void,
): Promise<Resolved> {
  const kc = await loadKubeConfig(settings.kubeconfig, settings.context, {
    execTimeoutMs: settings.clusterTimeouts.requestMs,
  });
  kubeconfigSecrets(kc).forEach(secret);
  const specs = await resolveSpecs(settings, log);
  checkSupported(specs, 'apply');
  if (settings.noCrossNamespaceRefs) refuseCrossNamespaceRefs(specs);
  const levels = dependencyOrder(specs);
  const picked = selected(settings.select, specs);
  const runLevels = levels.map((l) => l.filter((s) => picked.includes(s))).filter((l) => l.length > 0);
  const sources = await checkSources(settings, picked, log);
  return {
    specs: picked,
    levels: runLevels,
    all: specs,
    handlesRemoved: settings.select.length === 0 || picked.includes(levels.flat()[0]!),
    levelOf: new Map(levels.flatMap((l, n) => l.map((s): [string, number] => [`${s.namespace}/${s.name}`, n]))),
    sources,
    client: new ClusterClient(kc, { timeouts: settings.clusterTimeouts }),
  };
}

/** The selected Kustomizations (input select), in file order; all without a selection. Unknown names are refused. */
export function selected(select: readonly string[], specs: readonly KustomizationSpec[]): KustomizationSpec[] {
  if (select.length === 0) return [...specs];
  const keys = new Set(specs.map((s) => `${s.namespace}/${s.name}`));
  const unknown = select.filter((k) => !keys.has(k));
  if (unknown.length > 0) {
    const list = [...keys].slice(0, 20).join(', ');
    throw new Error(
      `select: ${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not among the Kustomizations of the files kustomizations matches${keys.size > 0 ? ` (${list}${keys.size > 20 ? ', …' : ''})` : ''}`,
    );
  }
  return specs.filter((s) => select.includes(`${s.namespace}/${s.name}`));
}

/**
 * The client of the cluster a Kustomization with spec.kubeConfig targets: its kubeconfig is a
 * Secret in the action's cluster (read with the action's client, as Flux reads it with the
 * controller's), or a ConfigMap there naming a cluster reached with a ServiceAccount token
 * (cluster/remote-identity.ts).
 */
export async function resolveTarget(
  ctx: Pick<KustomizationContext, 'settings' | 'spec' | 'management' | 'note' | 'secrets'>,
  ref: NonNullable<KustomizationSpec['kubeConfig']>,
): Promise<ClusterClient> {
  // An untrusted tree may not send the platform's kubeconfig, or a token the platform's cluster
  // mints, to a cluster the base never gave it to.
  const use: SecretUse = ref.secretRef
    ? {
        use: 'kubeConfig',
        secret: ref.secretRef.name,
        ...(ref.secretRef.key !== undefined ? { key: ref.secretRef.key } : {}),
      }
    : { use: 'kubeConfigMap', configMap: ref.configMapRef?.name ?? '' };
  const refused = await refusedUse(ctx.settings, ctx.spec, use);
  if (refused !== undefined) {
    ctx.note(refused);
    throw new UserError(refused);
  }
  if (ref.secretRef === undefined) {
    const { kc, token } = await identityKubeConfig(ctx.management, ctx.spec.namespace, ref.configMapRef!, ctx.note);
    ctx.secrets.add(token);
    return new ClusterClient(kc, { timeouts: ctx.settings.clusterTimeouts });
  }
  const kc = await remoteKubeConfig(ctx.management, ctx.spec.namespace, ref.secretRef, ctx.note);
  kubeconfigSecrets(kc).forEach(ctx.secrets.add);
  return new ClusterClient(kc, { timeouts: ctx.settings.clusterTimeouts });
}

/**
 * The problems of Kustomization files that failed to load, each at the line of its field in its
 * file (check-run annotations); none for other errors.
 */
export async function specProblems(err: unknown, root: string): Promise<Problem[]> {
  if (!(err instanceof SpecError)) return [];
  const texts = new Map<string, Promise<string | undefined>>();
  return Promise.all(
    err.locations.map(async (l) => {
      if (!texts.has(l.file))
        texts.set(
          l.file,
          readFile(join(root, l.file), 'utf8').catch(() => undefined),
        );
      const text = await texts.get(l.file)!;
      const line = text === undefined ? undefined : locateField(text, l.document, l.field);
      return { subject: l.field ?? 'Kustomization', message: l.message, file: l.file, ...(line ? { line } : {}) };
    }),
  );
}
