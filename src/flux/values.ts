/*
 * Flux's rules for small values (durations, timeouts, source paths, names), as pure functions and as
 * field readers; shared by the Kustomization file parser and from-inputs.ts.
 */

import { parseDuration } from '../util/duration.js';
import {
  Problems,
  controlCharacterProblem,
  describe,
  isAbsent,
  quote,
  readCheckedString,
  reportMissing,
} from './fields.js';

export { parseDuration };

/** GetTimeout never returns less than this, whether the timeout is set or derived from the interval. */
const MIN_TIMEOUT_MS = 30_000;
/** The timeout of a Kustomization without an interval (the action's inputs). */
const INPUTS_TIMEOUT_MS = 5 * 60_000;

/**
 * Flux's GetTimeout: the explicit timeout, else `interval − 30s`, and never under 30s.
 * Without an interval (the action's inputs) the default is 5m.
 */
export function effectiveTimeout(interval: number | undefined, timeout: number | undefined): number {
  const chosen = timeout ?? (interval === undefined ? INPUTS_TIMEOUT_MS : interval - MIN_TIMEOUT_MS);
  return Math.max(chosen, MIN_TIMEOUT_MS);
}

/**
 * Normalises a path relative to the source root: drops `.` segments, a leading `./` and trailing
 * slashes, resolves `a/../b`, and gives `.` for the root. Returns undefined for an absolute path or
 * one that climbs above the root; Flux would confine a climbing path to the root silently, which hides
 * the mistake (spec.path's leading "/" is taken off before: see readSourcePath).
 */
export function normalizeSourcePath(text: string): string | undefined {
  if (text.startsWith('/')) return undefined;
  const kept: string[] = [];
  for (const segment of text.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (kept.length === 0) return undefined;
      kept.pop();
    } else {
      kept.push(segment);
    }
  }
  return kept.length === 0 ? '.' : kept.join('/');
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why `text` is not a DNS-1123 label (a namespace name), or undefined when it is one. */
export function dnsLabelProblem(text: string): string | undefined {
  if (text.length > 63) return `${quote(text)} is longer than 63 characters`;
  if (!DNS_LABEL.test(text)) {
    return `${quote(text)} is not a DNS-1123 label (lower-case letters, digits and "-", starting and ending with a letter or digit)`;
  }
  return undefined;
}

/** Why `text` is not a DNS-1123 subdomain (an object name), or undefined when it is one. */
export function dnsSubdomainProblem(text: string): string | undefined {
  if (text.length > 253) return `${quote(text)} is longer than 253 characters`;
  if (!text.split('.').every((label) => DNS_LABEL.test(label))) {
    return `${quote(text)} is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", starting and ending with a letter or digit)`;
  }
  return undefined;
}

const DURATION_HINT = 'use e.g. 30s, 5m, 1h30m';

/** Reads a duration into milliseconds. Exported for from-inputs.ts, which names inputs instead of fields. */
export function readDuration(p: Problems, value: unknown, at: string, required = false): number | undefined {
  if (isAbsent(value)) {
    reportMissing(p, at, required);
    return undefined;
  }
  if (typeof value === 'number') {
    p.add(at, `${value} is not a duration (add a unit: ${DURATION_HINT})`);
    return undefined;
  }
  if (typeof value !== 'string') {
    p.add(at, `must be a duration (${DURATION_HINT}), got ${describe(value)}`);
    return undefined;
  }
  const ms = parseDuration(value);
  if (ms === undefined) p.add(at, `${quote(value)} is not a duration (${DURATION_HINT})`);
  return ms;
}

/** Reads a name that Kubernetes requires to be a DNS-1123 label (namespaces). */
export function readNamespaceName(p: Problems, value: unknown, at: string, required = false): string | undefined {
  return readCheckedString(p, value, at, { required, min: 1, max: 63 }, dnsLabelProblem);
}

/** Reads an object name that must be a DNS-1123 subdomain (Kustomization names). */
export function readObjectName(p: Problems, value: unknown, at: string): string | undefined {
  return readCheckedString(p, value, at, { required: true }, dnsSubdomainProblem);
}

/**
 * Reads the optional name of an object the run looks up or acts as (a ServiceAccount, Secret or
 * ConfigMap): a DNS-1123 subdomain, as Kubernetes requires, so that it cannot become anything but
 * one name in a URL path or an impersonation header.
 */
export function readRefName(p: Problems, value: unknown, at: string, required = false): string | undefined {
  if (isAbsent(value) && !required) return undefined;
  return readObjectName(p, value, at);
}

/**
 * Reads spec.path (or the `path` input) and normalises it; see normalizeSourcePath. With `rooted`
 * (spec.path), a leading "/" names the source root, as Flux's SecureJoin of the path onto the root makes it.
 */
export function readSourcePath(p: Problems, value: unknown, at: string, rooted = false): string | undefined {
  if (isAbsent(value)) return '.';
  if (typeof value !== 'string') {
    p.add(at, `must be a string, got ${describe(value)}`);
    return undefined;
  }
  const control = controlCharacterProblem(value);
  if (control !== undefined) {
    p.add(at, control);
    return undefined;
  }
  const normal = normalizeSourcePath(rooted ? value.replace(/^\/+/, '') : value);
  if (normal === undefined) {
    p.add(at, `${quote(value)} must stay inside the source root (a relative path that does not climb out with "..")`);
  }
  return normal;
}
