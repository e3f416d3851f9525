/**
 * The toolkit as the action uses it. Every line the process writes to stdout or stderr passes
 * through a CommandGuard (src/util/workflow-commands.ts) once `guardOutput()` is on, so text from
 * the tree, a server or a file can never issue a workflow command; the commands the action means to
 * issue (masks, groups, annotations, the failure) are written by the toolkit, which escapes their
 * data onto one line, and are let through as they are.
 */
import * as toolkit from '@actions/core';
import { guardStream } from './stream-guard.js';
import { stripTerminalControls } from '../util/terminal.js';

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
/**
 * The text of a command the action issues: the toolkit escapes its line breaks, not terminal escapes,
 * and these commands pass the guard as they are.
 */
const clean = (m: string | Error): string => stripTerminalControls(m instanceof Error ? m.toString() : m);
/** An annotation's title and file name come from the tree too. */
const cleanProps = (p?: toolkit.AnnotationProperties): toolkit.AnnotationProperties | undefined =>
  p && {
    ...p,
    ...(p.title !== undefined ? { title: clean(p.title) } : {}),
    ...(p.file !== undefined ? { file: clean(p.file) } : {}),
  };
export const startGroup = ours((name: string) => {
  toolkit.startGroup(clean(name));
});
export const endGroup = ours(toolkit.endGroup);
export const warning = ours((m: string | Error, props?: toolkit.AnnotationProperties) => {
  toolkit.warning(clean(m), cleanProps(props));
});
export const error = ours((m: string | Error, props?: toolkit.AnnotationProperties) => {
  toolkit.error(clean(m), cleanProps(props));
});
export const setFailed = ours((m: string | Error) => {
  toolkit.setFailed(clean(m));
});
export const setOutput = ours(toolkit.setOutput);
