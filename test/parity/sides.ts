/**
 * The two sides of the parity suite: real Flux (kustomize-controller v1.10.1 on its own test cluster,
 * fed ExternalArtifacts) and ours (dist/cli.js on an identical test cluster), each running a case's
 * steps and reporting what it did and the state it left (see compare.ts: SideStep).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import {
  applyKustomization,
  ensureNamespace,
  kustomizationPath,
  loggedEnd,
  publishExternalArtifact,
  requestReconcile,
  until,
  waitForReconcile,
  type Api,
  type ArtifactServer,
  type FluxKustomization,
  type FluxLogLine,
} from '../flux/flux.ts';
import { decodeInventory } from '../../src/inventory/codec.js';
import { inventoryName } from '../../src/inventory/store.js';
import { listTree } from '../../src/kustomize/copy.js';
import {
  isIgnored,
  readPatterns,
  sourcePatterns,
  SOURCEIGNORE_FILE,
  type IgnorePattern,
} from '../../src/kustomize/sourceignore.js';
import { fluxVerdicts, parseId, subjectOfId, type SideStep } from './compare.ts';
import { applyGitStep, copyTree, reconciled, type KustomizationCase, type ParityCase, type Step } from './corpus.ts';

export const KS_NAMESPACE = 'flux-system';
/** Where ours keeps the case's Kustomization objects, inside its root but outside every spec.path. */
const OURS_FILE = '.parity/kustomizations.yaml';

/** Resolves `group/version` + kind to an API path, by discovery (cached; refreshed on a miss). */
export class Resources {
  private readonly cache = new Map<string, Map<string, { plural: string; namespaced: boolean }>>();
  constructor(private readonly api: Api) {}

  async path(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<string | undefined> {
    let r = (await this.groupVersion(apiVersion, false))?.get(kind);
    if (!r) r = (await this.groupVersion(apiVersion, true))?.get(kind);
    if (!r) return undefined;
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = r.namespaced ? `/namespaces/${namespace ?? 'default'}` : '';
    return `${base}${ns}/${r.plural}/${name}`;
  }

  private async groupVersion(
    apiVersion: string,
    refresh: boolean,
  ): Promise<Map<string, { plural: string; namespaced: boolean }> | undefined> {
    if (!refresh && this.cache.has(apiVersion)) return this.cache.get(apiVersion);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = await this.api
      .request<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>('GET', base)
      .catch(() => undefined);
    if (!list) return undefined;
    const m = new Map<string, { plural: string; namespaced: boolean }>();
    for (const r of list.resources ?? [])
      if (!r.name.includes('/')) m.set(r.kind, { plural: r.name, namespaced: r.namespaced });
    this.cache.set(apiVersion, m);
    return m;
  }
}

/** Server-side applies plain objects (a case's setup) as an admin. */
export async function applyObjects(
  api: Api,
  resources: Resources,
  objects: readonly Record<string, unknown>[],
): Promise<void> {
  for (const o of objects) {
    const meta = (o['metadata'] ?? {}) as { name?: string; namespace?: string };
    if (meta.namespace) await ensureNamespace(api, meta.namespace, 'kr-parity-setup');
    const path = await resources.path(String(o['apiVersion']), String(o['kind']), meta.namespace, meta.name ?? '');
    if (!path) throw new Error(`setup: no API resource for ${String(o['apiVersion'])} ${String(o['kind'])}`);
    await api.request('PATCH', path, {
      body: o,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'kr-parity-setup', force: true },
    });
  }
}

/** A drift step: a JSON merge patch with kubectl edit's field manager (an Update operation). */
export async function applyDrift(
  api: Api,
  resources: Resources,
  step: Extract<Step, { drift: unknown }>['drift'],
): Promise<void> {
  const path = await resources.path(step.apiVersion, step.kind, step.namespace, step.name);
  if (!path) throw new Error(`drift: no API resource for ${step.apiVersion} ${step.kind}`);
  await api.request('PATCH', path, {
    body: step.patch,
    contentType: 'application/merge-patch+json',
    query: { fieldManager: 'kubectl-edit' },
  });
}

/** Reads every object in `ids` (Flux inventory ids with versions, `id v`), null when absent. */
export async function readObjects(
  api: Api,
  resources: Resources,
  ids: Iterable<string>,
): Promise<Record<string, Record<string, unknown> | null>> {
  const out: Record<string, Record<string, unknown> | null> = {};
  for (const entry of ids) {
    const [id = '', v = ''] = entry.split(' ');
    const { namespace, name, group, kind } = parseId(id);
    const apiVersion = group === '' ? v : `${group}/${v}`;
    const path = await resources.path(apiVersion, kind, namespace || undefined, name);
    const subject = subjectOfId(id);
    if (!path) {
      out[subject] = null;
      continue;
    }
    out[subject] = await api.request<Record<string, unknown>>('GET', path).catch((err: unknown) => {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    });
  }
  return out;
}

/**
 * The files source-controller would archive from a checkout of `tree`: its `.sourceignore` rules
 * (every such file, root first, then each directory's, depth first by name), the VCS patterns, and
 * the default ones when there are no rules (the project's own matcher, src/kustomize/sourceignore.ts).
 */
export async function sourceFiles(tree: string): Promise<string[]> {
  const entries = (await listTree(tree, () => false)).sort((a, b) => comparePaths(a.path, b.path));
  const found: IgnorePattern[] = [];
  for (const e of entries) {
    if (e.type === 'file' && e.path.at(-1) === SOURCEIGNORE_FILE) {
      found.push(...readPatterns(await readFile(join(tree, ...e.path), 'utf8'), e.path.slice(0, -1)));
    }
  }
  const patterns = sourcePatterns(found);
  return entries.filter((e) => e.type === 'file' && !isIgnored(patterns, e.path, false)).map((e) => e.path.join('/'));
}

function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

interface StepContext {
  c: ParityCase;
  step: Step | 'apply' | 'noop';
  /** Objects of earlier steps, `id v`: read again so deletions show. */
  seen: Set<string>;
}

/** Real Flux: one ExternalArtifact per case (named after it), a Kustomization per case entry. */
export class FluxSide {
  readonly resources: Resources;
  private revision = '';
  private constructor(
    private readonly api: Api,
    private readonly artifacts: ArtifactServer,
    private readonly logLines: () => Promise<FluxLogLine[]>,
    private readonly tree: string,
  ) {
    this.resources = new Resources(api);
  }

  static async create(
    api: Api,
    artifacts: ArtifactServer,
    logLines: () => Promise<FluxLogLine[]>,
    c: ParityCase,
    work: string,
  ): Promise<FluxSide> {
    const side = new FluxSide(api, artifacts, logLines, join(work, 'flux', c.name));
    await copyTree(c, side.tree);
    return side;
  }

  async run({ c, step, seen }: StepContext): Promise<SideStep> {
    // The children's objects are applied by their parent; Flux reconciles them once they exist.
    const names = reconciled(c);
    const since = Date.now() - 5;
    const wants = new Map<string, { revision?: string; token?: string }>();
    if (step === 'apply' || (typeof step === 'object' && 'git' in step)) {
      if (typeof step === 'object' && 'git' in step) await applyGitStep(this.tree, step.git);
      const artifact = await this.artifacts.publish(c.name, this.tree, [], await sourceFiles(this.tree));
      this.revision = artifact.revision;
      if (step === 'apply') await applyObjects(this.api, this.resources, c.setup);
      await publishExternalArtifact(this.api, KS_NAMESPACE, c.name, artifact);
      if (step === 'apply') {
        for (const k of c.kustomizations) await applyKustomization(this.api, KS_NAMESPACE, k.name, k.spec, c.name);
      }
      for (const n of names) wants.set(n, { revision: artifact.revision });
    } else {
      if (typeof step === 'object' && 'drift' in step) await applyDrift(this.api, this.resources, step.drift);
      for (const n of names) wants.set(n, { token: await requestReconcile(this.api, KS_NAMESPACE, n) });
    }
    const outcomes: SideStep['outcomes'] = {};
    const messages: Record<string, string> = {};
    const inventory: SideStep['inventory'] = {};
    for (const n of names) {
      await waitForReconcile(this.api, KS_NAMESPACE, n, wants.get(n)!, 180_000);
      await until(`Flux to log the end of the reconcile of ${KS_NAMESPACE}/${n}`, 60_000, async () =>
        loggedEnd(await this.logLines(), KS_NAMESPACE, n, since) ? true : undefined,
      );
      const k = await this.api.request<FluxKustomization>('GET', kustomizationPath(KS_NAMESPACE, n));
      const ready = k.status?.conditions?.find((x) => x.type === 'Ready');
      outcomes[n] = ready?.status === 'True' ? 'ready' : 'failed';
      if (ready?.status !== 'True') messages[n] = ready?.message ?? '';
      inventory[n] = (k.status?.inventory?.entries ?? []).map((e) => `${e.id} ${e.v}`).sort();
    }
    const lines = (await this.logLines()).filter(
      (l) => l.namespace === KS_NAMESPACE && names.includes(l.name ?? '') && Date.parse(l.ts ?? '') >= since,
    );
    // A child may reconcile twice in one step: once when the source's revision moves (with the spec
    // it had), once when its parent has applied its new spec. What the step did to its objects is
    // what the last one said; ours reconciles it once, from the parent's new build.
    const children = new Set(c.children.names);
    const verdicts = {
      ...fluxVerdicts(lines.filter((l) => children.has(l.name ?? '')).reverse()),
      ...fluxVerdicts(lines.filter((l) => !children.has(l.name ?? ''))),
    };
    for (const ids of Object.values(inventory)) for (const id of ids) seen.add(id);
    return { outcomes, verdicts, inventory, objects: {}, messages };
  }

  /** The objects of every id seen so far on either side, as this cluster has them now. */
  readSeen(ids: Iterable<string>): Promise<SideStep['objects']> {
    return readObjects(this.api, this.resources, ids);
  }

  async remove(c: ParityCase): Promise<void> {
    for (const name of reconciled(c)) {
      await this.api.request('DELETE', kustomizationPath(KS_NAMESPACE, name)).catch(() => undefined);
    }
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The repository, its bundled CLI and the pinned tools (kustomize) ours runs with. */
const REPO = resolve(import.meta.dirname, '..', '..');
const TOOLS = join(REPO, 'test', 'cluster', 'bin');

/**
 * The source ours is told the checkout is: the ExternalArtifact named after the case, which Flux's side
 * reconciles from (a child's file in the tree names it as its spec.sourceRef).
 */
export const checkoutOf = (name: string) => ({ kind: 'ExternalArtifact', namespace: KS_NAMESPACE, name });

/** Writes Flux Kustomizations (sourceRef: this checkout) into `root`'s `.parity/` file, for ours. */
export async function writeOurKustomizations(
  root: string,
  kustomizations: readonly KustomizationCase[],
  source: { kind: string; name: string } = { kind: 'GitRepository', name: 'parity' },
): Promise<void> {
  await mkdir(join(root, '.parity'), { recursive: true });
  const docs = kustomizations.map((k) =>
    stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: k.name, namespace: KS_NAMESPACE },
      spec: { interval: '60m', ...k.spec, sourceRef: { kind: source.kind, name: source.name } },
    }),
  );
  await writeFile(join(root, OURS_FILE), docs.join('---\n'));
}

/**
 * Runs `dist/cli.js apply` over `root` and the Kustomizations written there (and `children`, more
 * Kustomization files of the tree); its JSON report. `source`: what the checkout is (`--source`).
 */
export async function applyOurs(
  root: string,
  kubeconfig: string,
  options: { children?: readonly string[]; source?: string } = {},
): Promise<{ raw: CliResult; report: OurReport }> {
  const raw = await runCommand(
    process.execPath,
    [
      join(REPO, 'dist', 'cli.js'),
      'apply',
      '--root',
      root,
      '--kustomizations',
      OURS_FILE,
      ...(options.children ?? []).flatMap((glob) => ['--kustomizations', glob]),
      '--source',
      options.source ?? `${KS_NAMESPACE}/parity`,
      '--kubeconfig',
      kubeconfig,
      '--output',
      'json',
    ],
    { ...process.env, PATH: `${TOOLS}:${process.env['PATH'] ?? ''}` },
  );
  try {
    return { raw, report: JSON.parse(raw.stdout) as OurReport };
  } catch {
    throw new Error(`ours printed no JSON report (exit ${raw.code}):\n${raw.stderr.slice(-2000)}`);
  }
}

/** Ours: dist/cli.js apply over a working copy of the tree, the case's Kustomizations in a file. */
export class OursSide {
  readonly resources: Resources;
  private constructor(
    private readonly api: Api,
    private readonly kubeconfig: string,
    private readonly tree: string,
  ) {
    this.resources = new Resources(api);
  }

  static async create(api: Api, kubeconfig: string, c: ParityCase, work: string): Promise<OursSide> {
    const side = new OursSide(api, kubeconfig, join(work, 'ours', c.name));
    await copyTree(c, side.tree);
    await writeOurKustomizations(side.tree, c.kustomizations, checkoutOf(c.name));
    return side;
  }

  async run({ c, step, seen }: StepContext): Promise<SideStep & { raw: CliResult }> {
    if (step === 'apply') await applyObjects(this.api, this.resources, c.setup);
    if (typeof step === 'object' && 'git' in step) await applyGitStep(this.tree, step.git);
    if (typeof step === 'object' && 'drift' in step) await applyDrift(this.api, this.resources, step.drift);
    const source = checkoutOf(c.name);
    const { raw, report } = await applyOurs(this.tree, this.kubeconfig, {
      children: c.children.files,
      source: `${source.kind}/${source.namespace}/${source.name}`,
    });
    const reports = report.kustomizations ?? [report];
    const outcomes: SideStep['outcomes'] = {};
    const messages: Record<string, string> = {};
    const verdicts: SideStep['verdicts'] = {};
    const inventory: SideStep['inventory'] = {};
    for (const r of reports) {
      const name = r.kustomization.split('/')[1] ?? r.kustomization;
      outcomes[name] = r.ok ? 'ready' : 'failed';
      if (!r.ok) messages[name] = r.error ?? '';
      for (const e of r.changeset) verdicts[e.subject] = e.action;
      for (const p of r.pruned ?? []) if (!(p.subject in verdicts)) verdicts[p.subject] = p.action;
      inventory[name] = await this.inventory(name);
    }
    for (const ids of Object.values(inventory)) for (const id of ids) seen.add(id);
    return { outcomes, verdicts, inventory, objects: {}, messages, raw };
  }

  /** The objects of every id seen so far on either side, as this cluster has them now. */
  readSeen(ids: Iterable<string>): Promise<SideStep['objects']> {
    return readObjects(this.api, this.resources, ids);
  }

  /** Our inventory's entries as `id v`, read from its ConfigMap (empty when there is none). */
  private async inventory(name: string): Promise<string[]> {
    const cm = await this.api
      .request<{ data?: Record<string, string>; binaryData?: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${KS_NAMESPACE}/configmaps/${inventoryName({ name, namespace: KS_NAMESPACE })}`,
      )
      .catch((err: unknown) => {
        if ((err as { status?: number }).status === 404) return undefined;
        throw err;
      });
    if (!cm) return [];
    const record = decodeInventory(cm.data ?? {}, cm.binaryData ?? {});
    return record.entries.map((e) => `${e.id} ${e.v}`).sort();
  }
}

export interface OurReport {
  kustomization: string;
  ok: boolean;
  error?: string;
  counts: Record<string, number>;
  notes: string[];
  changeset: { subject: string; action: string }[];
  pruned?: { subject: string; action: string }[];
  kustomizations?: OurReport[];
}

/** Runs a command, resolving with its exit code and output (never rejecting on a non-zero exit). */
function runCommand(bin: string, args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolveP) => {
    execFile(bin, args, { env: env ?? process.env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolveP({ code, stdout, stderr });
    });
  });
}
