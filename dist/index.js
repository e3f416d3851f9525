import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{nodeVersionProblem}from"./chunks/chunk-QEDNLOYC.js";import"./chunks/chunk-IEF6XIED.js";var problem=nodeVersionProblem(process.versions.node);problem!==void 0&&(process.stdout.write(`::error::${problem}
`),process.exit(2));var{guardOutput}=await import("./chunks/core-ZPBKI7V7.js");guardOutput();var{run}=await import("./chunks/main-WW7Q53XB.js");await run();
