/** What kustomize's own kustomization.yaml fields take, as Flux's spec.patches and spec.images pass them on. */

export interface Selector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}

export interface Patch {
  /** A strategic-merge patch or a JSON6902 patch, as YAML or JSON text. */
  patch: string;
  target?: Selector;
}

export interface Image {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}
