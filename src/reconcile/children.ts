/**
 * Parents and children as Flux has them. In the most common Flux layout a parent Kustomization's
 * build is the children's Kustomization files, patched by the parent (spec.patches), substituted
 * (postBuild), namespaced and named by it; under Flux the parent applies those objects and
 * kustomize-controller reconciles each child from the object, not from its file as written.
 *
 * Here, when the run loads both (the child's file is one the parent's build reads, as
 * flux/applied-by.ts finds it), the child is reconciled from the object its parent's build
 * produces, and the parent does not write the child's object to the cluster: the child is this
 * run's to reconcile, and a Flux Kustomization object of the same name would be a second owner (and
 * needs Flux's CRDs; a cluster without them must work). A parent reconciled without its children
 * in the run (its file alone) applies them as Flux would, for Flux's controllers to reconcile.
 */
import { buildersOf } from '../flux/applied-by.js';
import { deferredProblems, readBuiltKustomization } from '../flux/parse.js';
import type { KustomizationSpec } from '../flux/types.js';
import { FLUX_GROUP } from '../objects/flux.js';
import type { Entry } from '../objects/id.js';
import { objectKey, type KubeObject } from '../objects/kube.js';
import { repositoryKustomizations } from '../flux/repository.js';

const keyOf = (s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`;
const fileOf = (s: KustomizationSpec) => (s.origin.kind === 'file' ? s.origin.file : '');

/** Whether `obj` is a Flux Kustomization object (any version of kustomize.toolkit.fluxcd.io). */
export function isFluxKustomization(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): boolean {
  return (
    obj.kind === 'Kustomization' && typeof obj.apiVersion === 'string' && obj.apiVersion.startsWith(`${FLUX_GROUP}/`)
  );
}

/** A parent's build: its objects, and each one's source file by objectKey. */
export interface ParentBuild {
  objects: readonly KubeObject[];
  origins: ReadonlyMap<string, string>;
}

/** What a parent's build produces, or why it could not be built. */
type Built = ParentBuild | { error: string };

export class Children {
  private readonly byKey: ReadonlyMap<string, KustomizationSpec>;
  private parents: Promise<Map<string, KustomizationSpec>> | undefined;
  private outside: Promise<Map<string, KustomizationSpec[]>> | undefined;

  constructor(
    private readonly root: string,
    all: readonly KustomizationSpec[],
    /** Renders a parent as its own reconcile would (without decryption): its objects and their files, once a run (builds.ts). */
    private readonly renderParent: (parent: KustomizationSpec) => Promise<ParentBuild>,
    /** Whether a Kustomization is built from this checkout (one of another source builds other files). */
    private readonly builtHere: (spec: KustomizationSpec) => boolean = () => true,
  ) {
    this.byKey = new Map(all.map((s) => [keyOf(s), s]));
  }

  /** Whether `obj` is the Kustomization object of one this run loaded: a parent does not write it. */
  defines(obj: KubeObject): boolean {
    return isFluxKustomization(obj) && this.byKey.has(`${obj.metadata.namespace ?? ''}/${obj.metadata.name}`);
  }

  /** Whether an inventory entry is the Kustomization object of one this run loaded (see prune). */
  definesEntry(entry: Entry): boolean {
    const [namespace = '', name = '', group = '', kind = ''] = entry.id.split('_');
    return group === FLUX_GROUP && kind === 'Kustomization' && this.byKey.has(`${namespace}/${name}`);
  }

  /** Each child's key with its loaded parent's key (`namespace/name`). */
  async parentKeys(): Promise<Map<string, string>> {
    return new Map([...(await this.parentsByChild())].map(([child, parent]) => [child, keyOf(parent)]));
  }

  /** The parent (one of the loaded Kustomizations) whose build reads `spec`'s file, if any. */
  async parentOf(spec: KustomizationSpec): Promise<{ spec: KustomizationSpec; file: string } | undefined> {
    const parent = (await this.parentsByChild()).get(keyOf(spec));
    return parent === undefined ? undefined : { spec: parent, file: fileOf(parent) };
  }

  /**
   * A Kustomization of the repository's other files (not loaded by this run) whose build reads
   * `file`. The repository's Kustomization files are found, and what each builds among the loaded
   * files read, once per run (repository.ts).
   */
  private async repositoryParent(
    spec: KustomizationSpec,
  ): Promise<{ spec: KustomizationSpec; file: string } | undefined> {
    this.outside ??= (async () => {
      const loaded = new Set([...this.byKey.values()].map(fileOf));
      const others = await repositoryKustomizations(this.root, loaded);
      return buildersOf(this.root, others, [...loaded]);
    })();
    // A parent builds from the same source as its child (a Kustomization of another repository, whose
    // path happens to cover this file here, builds that repository's files).
    const same = (a: KustomizationSpec['sourceRef'], b: KustomizationSpec['sourceRef']) =>
      a?.kind === b?.kind && a?.name === b?.name && (a?.namespace ?? '') === (b?.namespace ?? '');
    // A file that leaves spec.sourceRef to its parent (deferredProblems) takes the parent's.
    const parent = (await this.outside)
      .get(fileOf(spec))
      ?.find((p) => spec.sourceRef === undefined || same(p.sourceRef, spec.sourceRef));
    return parent === undefined ? undefined : { spec: parent, file: fileOf(parent) };
  }

  /**
   * `spec` as its parent's build produces it, when a Kustomization builds its file: a loaded one, or
   * else one of the repository's other Kustomization files (a child passed alone gets the identity,
   * the patches and the substitutions its parent gives it, whatever files the run was given); `spec`
   * itself otherwise. Throws when the parent cannot be built, or its build has no such object.
   */
  async asBuilt(spec: KustomizationSpec): Promise<{ spec: KustomizationSpec; parent?: string; unbuilt?: string }> {
    if (spec.origin.kind !== 'file') return { spec };
    const file = spec.origin.file;
    const loaded = await this.parentOf(spec);
    const parent = loaded ?? (await this.repositoryParent(spec));
    // A file that leaves fields to its parent (deferredProblems) is only read from the parent's build.
    const deferred = deferredProblems(spec);
    if (parent === undefined) {
      if (deferred !== undefined) throw deferred;
      return { spec };
    }
    const built = await this.build(parent.spec);
    const from = `its parent Kustomization ${keyOf(parent.spec)} (${parent.file}, which builds ${file})`;
    if ('error' in built) {
      // A parent the run was not given is only consulted: its failure is said, the file is used as written.
      if (loaded === undefined && deferred === undefined) {
        return { spec, unbuilt: `${from} could not be built: ${built.error}` };
      }
      throw new Error(`${from} could not be built, so its spec is not known: ${built.error}`);
    }
    // The object that came from this file (a parent's prefix, suffix or namespace may have renamed it).
    const fromFile = built.objects.filter((o) => isFluxKustomization(o) && built.origins.get(objectKey(o)) === file);
    const object =
      fromFile.length === 1
        ? fromFile[0]
        : fromFile.find((o) => o.metadata.name === spec.name && (o.metadata.namespace ?? '') === spec.namespace);
    if (object === undefined) {
      throw new Error(`${from} does not produce the Kustomization of ${file} named ${spec.name}`);
    }
    return {
      spec: readBuiltKustomization(object, file, spec.origin.document),
      parent: keyOf(parent.spec),
    };
  }

  private build(parent: KustomizationSpec): Promise<Built> {
    return this.renderParent(parent).then(
      (build): Built => build,
      (err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }),
    );
  }

  /** For each child's key, the loaded Kustomization whose build reads its file (read once per run). */
  private parentsByChild(): Promise<Map<string, KustomizationSpec>> {
    this.parents ??= (async () => {
      const specs = [...this.byKey.values()].filter((s) => s.origin.kind === 'file');
      // A parent built from another source does not build this checkout's files.
      const builders = await buildersOf(this.root, specs.filter(this.builtHere), [...new Set(specs.map(fileOf))]);
      const out = new Map<string, KustomizationSpec>();
      for (const child of specs) {
        const parent = builders.get(fileOf(child))?.find((p) => p !== child);
        if (parent !== undefined) out.set(keyOf(child), parent);
      }
      return out;
    })();
    return this.parents;
  }
}
