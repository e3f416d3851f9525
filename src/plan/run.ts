/**
 * The plan's edge: reads the Kustomization files (grouped by cluster), the files each build reads,
 * and the files git says changed between two commits; plan.ts and affected.ts decide.
 */
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join, matchesGlob } from 'node:path';
import { promisify } from 'node:util';
import type { FetchedPlan, SourcePlan } from '../flux/checkout.js';
import { excludedBy, kustomizationFiles, loadClusters } from '../flux/load.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { buildReads } from '../kustomize/reads.js';
import { builtByRepository, buildsFromCheckout, checkSources } from '../reconcile/resolve.js';
import type { Settings } from '../options/settings.js';
import { affectsOf, withParents, type Inputs } from './affected.js';
import { buildersOf } from '../flux/applied-by.js';
import { clusterOf } from '../flux/clusters.js';
import { parentComparison } from './parent-builds.js';
import { makePlan, type Plan } from './plan.js';

export interface Change {
  base: string;
  head: string;
}

export interface PlanResult extends Plan {
  /** The change the affected list is for, with the files git reported. */
  change?: Change & { files: string[] };
  /** Why every Kustomization counts as affected although a change was asked for (no usable base). */
  allBecause?: string;
}

/** A commit that is not one: a push that created the branch has `before` all zeros. */
const NO_COMMIT = /^0+$/;

/** The Kustomization files of the run's patterns by cluster (only `settings.cluster`'s when set). */
export async function specsByCluster(
  settings: Settings,
  note?: (line: string) => void,
): Promise<Map<string, KustomizationSpec[]>> {
  const files = await kustomizationFiles(settings.kustomizations, settings.root, settings.exclude);
  const clusters = [...new Set(files.map(clusterOf))].filter((c) => !settings.cluster || c === settings.cluster);
  if (settings.cluster && clusters.length === 0) {
    const known = [...new Set(files.map(clusterOf))].filter((c) => c !== '');
    throw new Error(
      `cluster ${settings.cluster}: no Kustomization file under clusters/${settings.cluster}/ among the files kustomizations matches${known.length > 0 ? ` (clusters found: ${known.join(', ')})` : ''}`,
    );
  }
  // No file of the patterns matched: loadKustomizations says so, naming the patterns.
  if (clusters.length === 0) clusters.push('');
  // A cluster whose files hold no Kustomization (a FluxInstance and ResourceSets only) is left out, with a note.
  // A child file that leaves fields to its parent is kept when a repository file builds it, as in a run.
  return loadClusters(settings.kustomizations, settings.root, clusters.sort(), {
    ...(note ? { note } : {}),
    builtElsewhere: (found) => builtByRepository(settings.root, found),
    exclude: settings.exclude,
    fromCheckout: (spec: KustomizationSpec) => buildsFromCheckout(settings, spec),
  });
}

/** The files changed between `base` and `head` (from their merge base, as a pull request shows them). */
export async function changedFiles(root: string, change: Change): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    'git',
    ['-C', root, 'diff', '--name-only', '--no-renames', '-z', `${change.base}...${change.head}`, '--'],
    { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
  );
  return stdout.split('\0').filter((f) => f !== '');
}

/** The plan of `settings.kustomizations`; with `change`, only what it affects is in the matrix. */
export async function planRun(
  settings: Settings,
  change: Change | undefined,
  log: (line: string) => void,
): Promise<PlanResult> {
  const byCluster = await specsByCluster(settings, log);
  if (!change) return makePlan(byCluster);
  let files: string[];
  try {
    if (NO_COMMIT.test(change.base))
      throw new Error(`base ${change.base} is no commit (a push that created the branch)`);
    files = await changedFiles(settings.root, change);
  } catch (err) {
    // Not logged: the plan's text (planText) says it, right under its count, once.
    const why = `the change could not be read, so every Kustomization counts as affected: ${firstLine(err)}`;
    return { ...makePlan(byCluster), allBecause: why };
  }
  const inputs = new Map<KustomizationSpec, Inputs>();
  for (const specs of byCluster.values()) {
    const verdicts = await checkSources(settings, specs, log);
    for (const spec of specs) {
      const v = verdicts.get(`${spec.namespace}/${spec.name}`);
      inputs.set(
        spec,
        v?.kind === 'fetch'
          ? inputsOfFetched(v.source)
          : v?.kind === 'other'
            ? { kind: 'files', files: [], what: v.problem }
            : await checkoutInputs(settings.root, spec),
      );
    }
  }
  const always = await removalJobs(settings, files);
  // A child is built as its parent builds it (reconcile/children.ts): a change that reaches it
  // through the parent affects it too.
  const all = [...byCluster.values()].flat();
  const fileOf = (s: KustomizationSpec) => (s.origin.kind === 'file' ? s.origin.file : undefined);
  const kustomizationFiles = new Set(all.map(fileOf).filter((f) => f !== undefined));
  const builders = await buildersOf(settings.root, all, [...kustomizationFiles]);
  const parentsOf = (s: KustomizationSpec) => {
    const file = fileOf(s);
    return file === undefined ? [] : (builders.get(file) ?? []).filter((p) => p !== s);
  };
  // The parents a change reaches other than through their own file: their children's objects are compared.
  const own = new Set(files);
  const reaching = affectsOf(
    files.filter((f) => !kustomizationFiles.has(f)),
    (s) => inputs.get(s)!,
  );
  const parents = [...new Set(all.flatMap(parentsOf))].filter((p) => {
    const file = fileOf(p);
    return file !== undefined && !own.has(file) && reaching(p, clusterOf(file)) !== undefined;
  });
  const childChanged = await parentComparison(settings, change, parents);
  const plan = makePlan(
    byCluster,
    withParents(files, (s) => inputs.get(s)!, parentsOf, kustomizationFiles, childChanged),
    always,
  );
  return { ...plan, change: { ...change, files } };
}

async function checkoutInputs(root: string, spec: KustomizationSpec): Promise<Inputs> {
  try {
    return { kind: 'reads', reads: await buildReads(root, spec.path, spec.components) };
  } catch (err) {
    return {
      kind: 'any',
      why: `${describeSpec(spec)}: what its build reads could not be worked out: ${firstLine(err)}`,
    };
  }
}

/** A source that is not the checkout: its definition's file is what this repository holds of it. */
function inputsOfFetched(plan: FetchedPlan): Inputs {
  if (madeFromCheckout(plan)) {
    return {
      kind: 'any',
      why: `its ExternalArtifact is made from this checkout by ArtifactGenerator ${plan.kind === 'ExternalArtifact' ? `${plan.generator.namespace}/${plan.generator.name}` : ''}`,
    };
  }
  if (plan.kind === 'ExternalArtifact')
    return {
      kind: 'files',
      files: [plan.generator.file],
      what: `ArtifactGenerator ${plan.generator.namespace}/${plan.generator.name}`,
    };
  return { kind: 'files', files: [plan.def.file], what: `${plan.kind} ${plan.def.namespace}/${plan.def.name}` };
}

function madeFromCheckout(plan: SourcePlan): boolean {
  if (plan.kind === 'checkout') return true;
  if (plan.kind === 'GitRepository') return plan.checkout === true;
  if (plan.kind === 'ExternalArtifact') return Object.values(plan.inputs).some(madeFromCheckout);
  return false;
}

/**
 * The clusters where a Kustomization file was deleted (a changed file, gone at head, that the
 * patterns would have matched): the job that handles removed Kustomizations must run there.
 */
async function removalJobs(settings: Settings, files: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const excluded = excludedBy(settings.exclude);
  for (const f of files) {
    if (!settings.kustomizations.some((p) => safeMatch(f, p))) continue;
    if (excluded(f)) continue;
    if (await stat(join(settings.root, f)).catch(() => undefined)) continue;
    const cluster = clusterOf(f);
    if (!out.has(cluster)) out.set(cluster, `${f} was deleted: removed Kustomizations are handled by this job`);
  }
  return out;
}

function safeMatch(file: string, pattern: string): boolean {
  try {
    return matchesGlob(file, pattern.replace(/^\.\//, ''));
  } catch {
    return false;
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}
