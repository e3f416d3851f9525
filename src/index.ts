import { nodeVersionProblem } from './util/node-version.js';

// On an older Node the modules below would fail to load (a missing export): said in one line first.
const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stdout.write(`::error::${problem}\n`);
  process.exit(2);
}
const { guardOutput } = await import('./action/core.js');
// Before anything prints: no text from the tree, a server or a file becomes a workflow command.
guardOutput();
const { run } = await import('./main.js');
await run();
