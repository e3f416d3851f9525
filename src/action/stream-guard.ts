/** The output edge: every write to a stream goes through a CommandGuard (src/util/workflow-commands.ts). */
import { fstatSync } from 'node:fs';
import { CommandGuard } from '../util/workflow-commands.js';
import { stripTerminalControls } from '../util/terminal.js';

/**
 * Neutralises what any code (ours, a library) writes to `stream` from now on, except the writes
 * made while `pass()` holds (the action's own commands, written by the toolkit with their data
 * escaped onto one line).
 */
export function guardStream(stream: NodeJS.WriteStream, pass: () => boolean = () => false): void {
  const guard = new CommandGuard();
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = (chunk: unknown, ...rest: unknown[]) => {
    if (pass()) return write(chunk, ...rest);
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as ArrayBuffer).toString('utf8');
    // A string given with its encoding is written as UTF-8 text now: the encoding argument goes.
    const tail = typeof rest[0] === 'string' ? rest.slice(1) : rest;
    // Terminal escapes from the tree go too: the log viewer would run them (util/terminal.ts).
    return write(guard.write(stripTerminalControls(text)), ...tail);
  };
}

/**
 * The CLI's streams under a runner (GITHUB_ACTIONS=true), where the runner reads them for
 * commands; a stream redirected to a file keeps its bytes as they are (`build > out.yaml`).
 */
export function guardCliOutput(env: NodeJS.ProcessEnv = process.env): void {
  if (env['GITHUB_ACTIONS'] !== 'true') return;
  for (const [fd, stream] of [
    [1, process.stdout],
    [2, process.stderr],
  ] as const) {
    let file = false;
    try {
      file = fstatSync(fd).isFile();
    } catch {
      // not a file descriptor we can stat: guard it
    }
    if (!file) guardStream(stream);
  }
}
