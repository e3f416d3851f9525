/*
 * The spec fields about readiness: spec.healthChecks, spec.healthCheckExprs and spec.dependsOn (with its
 * readyExpr), including the CEL syntax check Flux applies before a run.
 */

import { celSyntaxProblem } from '../kstatus/cel.js';
import { Problems, child, quote, readList, readMapping, readString, withoutUndefined } from './fields.js';
import type { Dependency, HealthCheckExpr, ObjectRef } from './types.js';

/** `version` or `group/version`; Kubernetes' ParseGroupVersion refuses more slashes. */
const API_VERSION = /^([^/\s]+\/)?[^/\s]+$/;

function readApiVersion(p: Problems, value: unknown, at: string, required: boolean): string | undefined {
  const text = readString(p, value, at, { required });
  if (text !== undefined && !API_VERSION.test(text)) {
    p.add(at, `${quote(text)} is not an apiVersion (use "v1" or "group/version", e.g. "apps/v1")`);
    return undefined;
  }
  return text;
}

export function readHealthCheck(p: Problems, value: unknown, at: string): ObjectRef | undefined {
  const raw = readMapping(p, value, at, ['apiVersion', 'kind', 'name', 'namespace'], { required: true });
  if (raw === undefined) return undefined;
  // Flux keeps v1beta1's rule that a health check without apiVersion means apps/v1.
  const apiVersion = readApiVersion(p, raw.apiVersion, child(at, 'apiVersion'), false) ?? 'apps/v1';
  const kind = readString(p, raw.kind, child(at, 'kind'), { required: true });
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const namespace = readString(p, raw.namespace, child(at, 'namespace'));
  if (kind === undefined || name === undefined) return undefined;
  return withoutUndefined({ apiVersion, kind, name, namespace });
}

export function readHealthCheckExprs(p: Problems, value: unknown): HealthCheckExpr[] {
  const seen = new Map<string, string>();
  return readList(p, value, 'spec.healthCheckExprs', (entry, at) => {
    const raw = readMapping(p, entry, at, ['apiVersion', 'kind', 'current', 'inProgress', 'failed'], {
      required: true,
    });
    if (raw === undefined) return undefined;
    const apiVersion = readApiVersion(p, raw.apiVersion, child(at, 'apiVersion'), true);
    const kind = readString(p, raw.kind, child(at, 'kind'));
    const current = readString(p, raw.current, child(at, 'current'), { required: true, multiline: true });
    const inProgress = readString(p, raw.inProgress, child(at, 'inProgress'), { multiline: true });
    const failed = readString(p, raw.failed, child(at, 'failed'), { multiline: true });
    const exprs = { current, inProgress, failed };
    for (const [key, text] of Object.entries(exprs)) checkCel(p, text, child(at, key));
    if (apiVersion === undefined || current === undefined) return undefined;
    // Flux matches these by GroupKind, so two entries differing only in version collide.
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const key = `${group}\u0000${kind ?? ''}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      const what = kind === undefined ? `the whole group ${quote(group)}` : `group ${quote(group)} kind ${kind}`;
      p.add(at, `duplicate entry for ${what} (already in ${earlier}); Flux matches by group and kind only`);
      return undefined;
    }
    seen.set(key, at);
    return withoutUndefined({ apiVersion, kind, current, inProgress, failed });
  });
}

/** Flux refuses an expression that does not compile (Stalled, InvalidCELExpression); so do we, before any run. */
function checkCel(p: Problems, text: string | undefined, at: string): void {
  const problem = text === undefined ? undefined : celSyntaxProblem(text);
  if (problem !== undefined) p.add(at, `invalid CEL expression ${quote(text!)}: ${problem}`);
}

/** Rewrites Flux's CLI form `[ns/]name[@expr]` as the mapping the CRD wants, for the error message. */
function dependencyHint(text: string): string {
  const at = text.indexOf('@');
  const ref = at === -1 ? text : text.slice(0, at);
  const slash = ref.indexOf('/');
  const fields =
    slash === -1 ? [`name: ${ref}`] : [`name: ${ref.slice(slash + 1)}`, `namespace: ${ref.slice(0, slash)}`];
  if (at !== -1) fields.push('readyExpr: ...');
  return `write {${fields.join(', ')}}`;
}

export function readDependency(p: Problems, value: unknown, at: string, namespace: string): Dependency | undefined {
  if (typeof value === 'string') {
    // Flux's "[ns/]name[@expr]" form exists only for the flux CLI's --depends-on flag; the CRD takes objects.
    p.add(
      at,
      `must be a mapping {name, namespace?, readyExpr?}, got the string ${quote(value)}; ${dependencyHint(value)}`,
    );
    return undefined;
  }
  const raw = readMapping(p, value, at, ['name', 'namespace', 'readyExpr'], { required: true });
  if (raw === undefined) return undefined;
  const name = readString(p, raw.name, child(at, 'name'), { required: true });
  const depNamespace = readString(p, raw.namespace, child(at, 'namespace')) ?? namespace;
  const readyExpr = readString(p, raw.readyExpr, child(at, 'readyExpr'), { multiline: true });
  checkCel(p, readyExpr, child(at, 'readyExpr'));
  return name === undefined ? undefined : withoutUndefined({ name, namespace: depNamespace, readyExpr });
}
