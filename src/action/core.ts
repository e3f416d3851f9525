/**
 * The toolkit as the action uses it. Every line the process writes to stdout or stderr passes
 * through a CommandGuard (src/util/workflow-commands.ts) once `guardOutput()` is on, so text from
 * the tree, a server or a file can never issue a workflow command; the commands the action means to
 * issue (masks, groups, annotations, the failure) are written by the toolkit, which escapes their
 * data onto one line, and are let through as they are.
 */
import * as toolkit from '@actions/core';
import { guardStream } from './stream-guard.js';

let issuing = 0;
let guarded = false;

/** Runs `fn`, whose writes are the action's own workflow commands. */
function ours<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    issuing++;
    try {
      return fn(...args);
    } finally {
      issuing--;
    }
  };
}

/** Guards stdout and stderr of this process (once). */
export function guardOutput(): void {
  if (guarded) return;
  guarded = true;
  guardStream(process.stdout, () => issuing > 0);
  guardStream(process.stderr, () => issuing > 0);
}

export const getInput = toolkit.getInput;
export const info = toolkit.info;
export const summary = toolkit.summary;
export const setSecret = ours(toolkit.setSecret);
export const startGroup = ours(toolkit.startGroup);
export const endGroup = ours(toolkit.endGroup);
export const warning = ours(toolkit.warning);
export const error = ours(toolkit.error);
export const setFailed = ours(toolkit.setFailed);
export const setOutput = ours(toolkit.setOutput);
