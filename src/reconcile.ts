import { ClusterClient } from './cluster/client.js';
import { Discovery } from './cluster/discovery.js';
import { kubeconfigSecrets, loadKubeConfig } from './cluster/kubeconfig.js';
import { build, type BuildResult } from './kustomize/build.js';
import { applyCommonMetadata } from './kustomize/metadata.js';
import type { KubeObject } from './kustomize/parse.js';
import type { Report } from './report/model.js';
import type { Settings } from './settings.js';
import { specFromInputs } from './spec/from-inputs.js';
import { loadKustomizations } from './spec/load.js';
import { describeSpec, unsupportedFields } from './spec/support.js';
import type { KustomizationSpec } from './spec/types.js';
import { applyAll, ApplyError } from './ssa/apply.js';
import { countActions, type ChangeSetEntry } from './ssa/changeset.js';

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
      ...(settings.targetNamespace ? { targetNamespace: settings.targetNamespace } : {}),
    }),
  ];
}

/** Refuses spec fields of stages not built yet, naming the Kustomization and the fields. */
export function checkSupported(specs: readonly KustomizationSpec[], command: 'build' | 'apply'): void {
  const problems = specs.flatMap((s) => unsupportedFields(s, command).map((p) => `${describeSpec(s)}: ${p}`));
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

/** Builds one Kustomization: kustomize with Flux's fields, then commonMetadata. */
export async function buildSpec(
  settings: Settings,
  spec: KustomizationSpec,
): Promise<BuildResult & { objects: KubeObject[] }> {
  const built = await build({
    root: settings.root,
    path: spec.path,
    kustomizeBin: settings.kustomizeBin,
    targetNamespace: spec.targetNamespace,
    namePrefix: spec.namePrefix,
    nameSuffix: spec.nameSuffix,
    patches: spec.patches,
    images: spec.images,
    components: spec.components,
    ignoreMissingComponents: spec.ignoreMissingComponents,
    buildMetadata: spec.buildMetadata,
    allowRemoteBases: settings.allowRemoteBases,
  });
  return { ...built, objects: applyCommonMetadata(built.objects, spec.commonMetadata) };
}

/** One Kustomization end to end: build, plan, apply (unless previewing). Failures land in the report. */
export async function reconcile(settings: Settings, hooks: Hooks): Promise<Report> {
  const started = Date.now();
  let changeset: ChangeSetEntry[] = [];
  let server = '';
  let kustomization = '';
  let path = settings.path;
  const notes: string[] = [];
  let client: ClusterClient | undefined;
  const finish = (error?: string): Report => ({
    mode: settings.mode,
    kustomization,
    path,
    server,
    ok: error === undefined,
    changeset,
    counts: countActions(changeset),
    durationMs: Date.now() - started,
    notes,
    ...(error !== undefined ? { error } : {}),
  });
  const note = (line: string) => {
    notes.push(line);
    hooks.log(line);
  };
  try {
    const kc = await loadKubeConfig(settings.kubeconfig, settings.context);
    kubeconfigSecrets(kc).forEach(hooks.secret);
    const specs = await resolveSpecs(settings);
    if (specs.length !== 1) {
      throw new Error(
        `${specs.length} Kustomizations found (${specs.map((s) => `${s.namespace}/${s.name}`).join(', ')}); applying several in one run, in dependsOn order, is not supported by this version yet: name one file`,
      );
    }
    const spec = specs[0]!;
    kustomization = `${spec.namespace}/${spec.name}`;
    path = spec.path;
    checkSupported(specs, 'apply');
    if (spec.suspend) {
      note(`${describeSpec(spec)} is suspended (spec.suspend: true); nothing was built or applied`);
      return finish();
    }
    client = new ClusterClient(kc);
    server = client.server;
    const built = await buildSpec(settings, spec);
    if (built.skipped.length > 0)
      note(`Skipped ${built.skipped.length} YAML file(s) without Kubernetes objects: ${built.skipped.join(', ')}`);
    if (built.missingComponents.length > 0) note(`Ignored missing component(s): ${built.missingComponents.join(', ')}`);
    changeset = await applyAll(client, new Discovery(client), built.objects, {
      fieldManager: settings.fieldManager,
      dryRunOnly: settings.mode !== 'apply',
      concurrency: settings.concurrency,
      log: hooks.log,
    });
    return finish();
  } catch (err) {
    if (err instanceof ApplyError) changeset = err.changeset;
    return finish(err instanceof Error ? err.message : String(err));
  } finally {
    client?.close();
  }
}
