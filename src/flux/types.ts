import type { HealthCheckExpr } from '../kstatus/cel.js';
import type { ObjectRef } from '../objects/id.js';
import type { Image, Patch, Selector } from '../kustomize/types.js';

export type { Image, Patch, Selector };

// Defined with the CEL reader that evaluates it, so that kstatus/ needs nothing from flux/; an
// object reference is the object model's.
export type { HealthCheckExpr, ObjectRef };

/**
 * A Flux Kustomization (`kustomize.toolkit.fluxcd.io/v1`, kind `Kustomization`) as this tool uses it:
 * validated, with Flux's defaults filled in. Built from a Kustomization file found in the repository
 * or from the action's inputs (one Kustomization). Durations are milliseconds.
 */
/** The kinds a Kustomization's spec.sourceRef may name. */
export type SourceKind = 'GitRepository' | 'OCIRepository' | 'Bucket' | 'ExternalArtifact';

export interface KustomizationSpec {
  /** metadata.name of the Kustomization. */
  name: string;
  /** metadata.namespace; Flux's `flux-system` when the file leaves it out. */
  namespace: string;
  /** Where it was defined, for error messages: a file and document, or the action's inputs. */
  origin: SpecOrigin;

  /** Directory to build, relative to the source root, normalised (`.` for the root, no leading `./`). */
  path: string;
  /**
   * spec.sourceRef: the checkout's GitRepository, another one (fetched), an OCIRepository, a Bucket, or
   * an ExternalArtifact an ArtifactGenerator in the repository makes (see flux/checkout.ts).
   */
  sourceRef?: { kind: SourceKind; name: string; namespace?: string; apiVersion?: string };

  /** spec.interval; required in Flux files, absent for action inputs. */
  interval?: number;
  retryInterval?: number;
  /** spec.timeout; default `interval - 30s`, at least 30s (Flux's GetTimeout); 5m without an interval. */
  timeout: number;

  prune: boolean;
  wait: boolean;
  force: boolean;
  suspend: boolean;
  deletionPolicy: 'MirrorPrune' | 'Delete' | 'WaitForTermination' | 'Orphan';

  targetNamespace?: string;
  namePrefix?: string;
  nameSuffix?: string;
  commonMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  patches: Patch[];
  images: Image[];
  components: string[];
  ignoreMissingComponents: boolean;
  buildMetadata?: ('originAnnotations' | 'transformerAnnotations')[];

  healthChecks: ObjectRef[];
  healthCheckExprs: HealthCheckExpr[];
  ignore: IgnoreRule[];

  postBuild?: PostBuild;
  decryption?: { provider: 'sops'; secretRef?: { name: string }; serviceAccountName?: string };
  serviceAccountName?: string;
  kubeConfig?: { secretRef?: { name: string; key?: string }; configMapRef?: { name: string } };
  dependsOn: Dependency[];
}

export type SpecOrigin = { kind: 'file'; file: string; document: number } | { kind: 'inputs' };

/** kustomize's selector, as Flux's spec.patches[].target and spec.ignore[].target take it. */
export interface IgnoreRule {
  paths: string[];
  target?: Selector;
}

export interface PostBuild {
  substitute: Record<string, string>;
  substituteFrom: { kind: 'ConfigMap' | 'Secret'; name: string; optional: boolean }[];
  substituteStrategy: 'WithVariables' | 'Always';
}

export interface Dependency {
  name: string;
  /** Defaults to the dependent Kustomization's namespace. */
  namespace: string;
  readyExpr?: string;
}
