/**
 * Timeouts a tree chooses (a source's spec.timeout, a Kustomization's spec.timeout): in an untrusted
 * run the pull request's author would choose how long the runner waits (a git server trickling a
 * byte every few seconds under `spec.timeout: 6h` holds the job for six hours). There they are
 * capped by the workflow's inputs: `timeout` where it applies (with `path`), else `build-timeout`
 * (default 5m), the workflow's bound on how long making a tree into objects may take. Pure.
 */
import type { Settings } from '../options/settings.js';

/** The cap when the workflow gives neither input: the inputs' own default. */
export const UNTRUSTED_TIMEOUT_CAP_MS = 5 * 60_000;

type Inputs = Pick<Settings, 'untrustedTree' | 'timeout'> & { buildLimits?: { timeoutMs?: number } };

/** The longest a tree-chosen wait may be in a run with `settings`; undefined: not capped (a trusted tree). */
export function treeTimeoutCap(settings: Inputs): number | undefined {
  if (settings.untrustedTree === undefined) return undefined;
  const input = settings.timeout;
  if (input !== undefined && input > 0) return input;
  const build = settings.buildLimits?.timeoutMs;
  return build !== undefined && build > 0 ? build : UNTRUSTED_TIMEOUT_CAP_MS;
}

/** `ms` (a tree's choice, or undefined for the caller's default), capped as treeTimeoutCap says. */
export function cappedTimeout(ms: number | undefined, settings: Inputs): number | undefined {
  const cap = treeTimeoutCap(settings);
  if (cap === undefined || ms === undefined) return ms;
  return Math.min(ms, cap);
}
