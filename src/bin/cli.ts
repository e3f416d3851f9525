#!/usr/bin/env node
// The CLI's executable, bundled as dist/cli.js: src/cli.ts is the importable module it runs.
// First the Node version: on an older Node the modules below would fail to load with an error
// about a missing export, so it is checked before any of them is imported (util/node-version.ts).
// Then V8's compile cache (in the OS temp dir, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1
// turns it off). It applies only to modules loaded after it is on, so the CLI is imported after.
// A warm cache saves about 25 ms of start-up; a cold one costs 5-10 ms to write. The action
// (src/index.ts) does not use it: a runner empties RUNNER_TEMP after each job, so there it is
// nearly always cold.
import { nodeVersionProblem } from '../util/node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
const { enableCompileCache } = await import('node:module');
enableCompileCache();
// In a workflow step, no text from the tree, a server or a file becomes a workflow command.
const { guardCliOutput } = await import('../action/stream-guard.js');
guardCliOutput();
const { main } = await import('../cli.js');
process.exitCode = await main(process.argv.slice(2));
