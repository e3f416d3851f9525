/**
 * The shapes the in-process overlay build (overlay.ts) shares with its field readers: an object
 * built so far, the kustomization a reader reads, and the step a reader gives back. Each reader
 * (overlay-steps.ts lists them in kustomize's order) takes the fields of a kustomization file it
 * knows and returns the step that does to the accumulated objects what kustomize's transformer or
 * generator for those fields does, or undefined when it cannot be sure of kustomize's answer: the
 * whole build then runs kustomize.
 */
import type { KubeObject } from '../objects/kube.js';

/** One object built so far and its file relative to the source root. */
export interface Built {
  obj: KubeObject;
  /** The file it came from, relative to the root (for a generated object, the kustomization file). */
  origin: string;
  /** The name in its file: kustomize's patch targets match it as well as the current one. */
  fileName: string;
  /** The names it had before each rename by namePrefix, nameSuffix or the hash suffix (kustomize's previous ids). */
  previousNames?: string[];
  /**
   * The namespaces it had before each change of its namespace by the namespace transformer or a
   * patch ('' for none; kustomize's previous ids): SMP patches find it by any of its ids.
   */
  previousNamespaces?: string[];
  /** A generated ConfigMap or Secret whose name takes kustomize's hash suffix at the top. */
  hashSuffix?: boolean;
  /**
   * Places (the path of a label or annotation, `/`-joined, list elements by index) whose values
   * kustomize holds in one YAML node: each group made together by one label or annotation
   * transformer (overlay-labels.ts), so that setting one of them later sets them all.
   */
  aliased?: string[][];
}

/** The source tree as the build's copy would hold it: each path's type, undefined when absent or left out. */
export type Lookup = (path: string) => 'file' | 'dir' | 'symlink' | undefined;

/** The kustomization file a reader reads, and the files beside it. */
export interface At {
  /** The real source root. */
  root: string;
  /** The kustomization's directory, a normalized posix path from the root ('.' for the root). */
  dir: string;
  /** The kustomization file, a posix path from the root. */
  file: string;
  lookup: Lookup;
  /**
   * The text of a file the kustomization names (`entry` relative to its directory), or undefined
   * when it is not a regular file inside that directory (kustomize's load restrictor; the build's
   * own copy would move it in): the reader then leaves the build to kustomize.
   */
  read(entry: string): { path: string; text: string } | undefined;
  /** True for the kustomization being built (Flux's spec fields are merged into it), false for bases and components. */
  top: boolean;
}

/** What a reader's fields do to the objects accumulated so far: the objects after it (in place or new), or undefined. */
export type Step = (built: Built[]) => Built[] | undefined;

/** The reader of some kustomization fields. */
export interface FieldReader {
  /** The kustomization fields it reads; a field no reader lists leaves the build to kustomize. */
  fields: readonly string[];
  /**
   * The step for a kustomization that sets at least one of `fields` (`k` is the whole file's
   * value), or undefined when any of them holds what this reader cannot prove kustomize's answer for.
   */
  read(k: Readonly<Record<string, unknown>>, at: At): Step | undefined;
}

/** A last step on the top kustomization's whole output (kustomize's hash suffixes and name references). */
export type Finish = (built: Built[]) => Built[] | undefined;
