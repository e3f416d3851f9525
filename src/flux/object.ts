import { FLUX_API_VERSION } from '../objects/flux.js';
import { sourceDocument } from './parse.js';
import type { KustomizationSpec } from './types.js';

/** How a Kustomization ended in this run, as its synthesized status tells a dependant's readyExpr. */
export interface Outcome {
  ok: boolean;
  /** Flux's Ready reason: ReconciliationSucceeded, ReconciliationFailed, HealthCheckFailed, DependencyNotReady. */
  reason: string;
  message: string;
}

/**
 * A Kustomization as a Flux object, for readyExpr's `self` and `dep`: the document it was read from
 * (or one made from the action's inputs) with metadata.generation defaulting to 1 and, given an
 * outcome, a status as kustomize-controller writes it: a Ready condition and observedGeneration
 * equal to the generation when Ready (Flux updates it only then), else -1.
 */
export function kustomizationObject(spec: KustomizationSpec, outcome?: Outcome): Record<string, unknown> {
  const doc = structuredClone(sourceDocument(spec)) ?? {
    apiVersion: FLUX_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: spec.name, namespace: spec.namespace },
    spec: {
      path: spec.path,
      prune: spec.prune,
      wait: spec.wait,
      force: spec.force,
      ...(spec.targetNamespace ? { targetNamespace: spec.targetNamespace } : {}),
    },
  };
  const metadata = { ...((doc['metadata'] as Record<string, unknown> | undefined) ?? {}) };
  metadata['namespace'] ??= spec.namespace;
  metadata['generation'] ??= 1;
  doc['metadata'] = metadata;
  delete doc['status'];
  if (outcome) {
    doc['status'] = {
      observedGeneration: outcome.ok ? metadata['generation'] : -1,
      conditions: [
        {
          type: 'Ready',
          status: outcome.ok ? 'True' : 'False',
          reason: outcome.reason,
          message: outcome.message,
        },
      ],
    };
  }
  return doc;
}
