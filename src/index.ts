import { guardOutput } from './action/core.js';
import { run } from './main.js';

// Before anything prints: no text from the tree, a server or a file becomes a workflow command.
guardOutput();
await run();
