/**
 * Health targets of a kind the server does not serve (issue 34): no object of that kind can exist, so
 * the wait fails at once, naming the object, the kind and what to do, instead of polling until
 * spec.timeout. A kind whose CustomResourceDefinition this run applied is given a short grace instead
 * (discovery is read again on each look). Pure.
 */
import { mappingKey } from '../cluster/discovery.js';
import type { KubeObject } from '../objects/kube.js';

/** How long a kind whose CRD this run applied may stay unserved before the wait fails on it. */
export const SERVED_GRACE_MS = 30_000;

/**
 * The `group/version/Kind` keys (discovery's mappingKey) that the CustomResourceDefinitions among
 * `objects` serve: the kinds this run's apply makes the server serve.
 */
export function definedKinds(objects: readonly KubeObject[]): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition' || !o.apiVersion.startsWith('apiextensions.k8s.io/')) continue;
    const spec = (o as { spec?: { group?: unknown; names?: { kind?: unknown }; versions?: unknown } }).spec;
    if (typeof spec?.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    const versions = Array.isArray(spec.versions) ? (spec.versions as { name?: unknown; served?: unknown }[]) : [];
    for (const v of versions) {
      if (typeof v.name === 'string' && v.served !== false) {
        out.add(mappingKey(`${spec.group}/${v.name}`, spec.names.kind));
      }
    }
  }
  return out;
}

/**
 * Why an object of an unserved kind fails the health check, and what to do: install the CRD before
 * (in a Kustomization this one dependsOn), or stop waiting for it (`origin`: the field that made it
 * a target, e.g. `spec.healthChecks[0]` or `spec.wait`).
 */
export function unservedMessage(apiVersion: string, kind: string, origin?: string): string {
  const stop =
    origin === undefined
      ? 'remove its health check'
      : origin === 'spec.wait'
        ? 'leave it out of the wait (spec.wait: false, with spec.healthChecks)'
        : `remove ${origin}`;
  return (
    `the server has no resource for kind ${kind} in ${apiVersion}: ` +
    `install its CustomResourceDefinition first (e.g. in a Kustomization this one dependsOn), or ${stop}`
  );
}

/** The Unknown message of a kind whose CRD this run applied while the server does not serve it yet. */
export function notYetServedMessage(apiVersion: string, kind: string): string {
  return `the server does not serve kind ${kind} in ${apiVersion} yet; this run applied its CustomResourceDefinition`;
}
