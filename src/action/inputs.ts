/** The action's edge for its inputs: @actions/core reads and masks them; src/options/read.ts does the rest. */
import * as core from './core.js';
import { readSettings } from '../options/read.js';
import type { InputReader, Settings } from '../options/settings.js';

/** Reads the action's inputs (`INPUT_*`) and `GITHUB_WORKSPACE`; masks every credential at once. */
export function readActionSettings(
  input: InputReader = (n) => core.getInput(n),
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  return readSettings(input, env, (value) => {
    core.setSecret(value);
  });
}
