/**
 * `build`: a run's pipeline stopped after render (as kapp's `--diff-run` stops its deploy, and as
 * Flux's CLI and controller share one build). The Kustomizations are resolved and selected as a run
 * resolves them (resolve.ts), and each is built by the run's build service (builds.ts): its spec as
 * its parent's build makes it, its source, its render.
 */
import { ClusterClient } from '../cluster/client.js';
import { loadKubeConfig } from '../cluster/kubeconfig.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Settings } from '../options/settings.js';
import { mapLimit } from '../util/concurrency.js';
import { Builds, KUSTOMIZATIONS_AT_ONCE } from './builds.js';
import type { RenderedSpec } from './render-spec.js';
import { checkSources, checkSupported, refuseCrossNamespaceRefs, resolveSpecs, selected } from './resolve.js';

/** One Kustomization of `build`: its spec as it was rendered, and what the render gave. */
export interface BuiltKustomization {
  spec: KustomizationSpec;
  rendered: RenderedSpec;
}

/**
 * Every selected Kustomization rendered, in the order of the files. Each is prepared in that order
 * (its parent's build, its source fetched), then rendered as many at once as a run reconciles (most
 * of a build is kustomize's process and the file copy it runs on). Every note is kept with its
 * Kustomization and said in the order of the files, as if the builds ran one after the other.
 */
export async function buildRun(
  settings: Settings,
  opts: {
    /** Decrypt SOPS values (`--show-secrets`); otherwise encrypted values are left as they are. */
    decrypt: boolean;
    note: (line: string) => void;
    secret: (value: string) => void;
  },
): Promise<BuiltKustomization[]> {
  const { note } = opts;
  const all = await resolveSpecs(settings, note);
  checkSupported(all, 'build');
  if (settings.noCrossNamespaceRefs) refuseCrossNamespaceRefs(all);
  const specs = selected(settings.select, all);
  // A kubeconfig is optional for build: it is only read for postBuild.substituteFrom and decryption Secrets.
  const client =
    settings.kubeconfig.kind === 'default'
      ? undefined
      : new ClusterClient(
          await loadKubeConfig(settings.kubeconfig, settings.context, {
            execTimeoutMs: settings.clusterTimeouts.requestMs,
          }),
          { timeouts: settings.clusterTimeouts },
        );
  // What fetching a source says goes with the Kustomization that needs it first (see below).
  let logTo: (line: string) => void = note;
  let builds: Builds;
  try {
    // As in apply: a Kustomization of another source is built from that source, fetched; one whose
    // source cannot be had fails the build, never built from this checkout instead.
    const sources = await checkSources(settings, specs, note);
    builds = await Builds.open({
      settings,
      all,
      sources,
      ...(client ? { client, ownsClient: true } : {}),
      secret: opts.secret,
      log: (line) => {
        logTo(line);
      },
      judge: (some) => checkSources(settings, some, () => undefined),
    });
  } catch (err) {
    client?.close();
    throw err;
  }
  const notes = specs.map((): string[] => []);
  let printed = 0;
  const done = specs.map(() => false);
  const flush = () => {
    while (printed < specs.length && done[printed]) for (const line of notes[printed++]!) note(line);
  };
  try {
    const prepared: KustomizationSpec[] = [];
    for (const [i, file] of specs.entries()) {
      logTo = (line) => notes[i]!.push(line);
      prepared.push(await prepareOne(builds, file, logTo));
    }
    logTo = note;
    return await mapLimit(
      prepared.map((spec, i) => ({ spec, i })),
      KUSTOMIZATIONS_AT_ONCE,
      async ({ spec, i }): Promise<BuiltKustomization> => {
        try {
          const rendered = await builds
            .objects(spec, { decrypt: opts.decrypt }, { note: (line) => notes[i]!.push(line) })
            .catch((err: unknown) => {
              // Name the Kustomization, as apply's report does: build prints several.
              throw named(spec, err);
            });
          return { spec, rendered };
        } finally {
          done[i] = true;
          flush();
        }
      },
    );
  } finally {
    for (let i = printed; i < specs.length; i++) for (const line of notes[i]!) note(line);
    await builds.close();
  }
}

/** One Kustomization of `build` as its parent's build produces it, its source fetched when it is not this checkout. */
async function prepareOne(
  builds: Builds,
  file: KustomizationSpec,
  note: (line: string) => void,
): Promise<KustomizationSpec> {
  const asBuilt = await builds.asBuilt(file).catch((err: unknown) => {
    throw named(file, err);
  });
  const spec = asBuilt.spec;
  if (asBuilt.unbuilt !== undefined) note(`${describeSpec(spec)}: ${asBuilt.unbuilt}; built from its file as written`);
  if (asBuilt.parent !== undefined)
    note(`${describeSpec(spec)}: built as its parent Kustomization ${asBuilt.parent} produces it`);
  const from = await builds.source(spec);
  if (from.kind === 'other') throw new Error(`${describeSpec(spec)}: ${from.problem}`);
  if (from.kind === 'fetched') note(`${describeSpec(spec)}: built from ${from.ref} at ${from.tree.revision}`);
  return spec;
}

/** `err` with the Kustomization it is about named first. */
function named(spec: Pick<KustomizationSpec, 'namespace' | 'name'>, err: unknown): Error {
  return new Error(`Kustomization ${spec.namespace}/${spec.name}: ${(err as Error).message}`, { cause: err });
}
