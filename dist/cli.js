#!/usr/bin/env node
import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{nodeVersionProblem}from"./chunks/chunk-QEDNLOYC.js";import"./chunks/chunk-IEF6XIED.js";var problem=nodeVersionProblem(process.versions.node);problem!==void 0&&(process.stderr.write(`${problem}
`),process.exit(2));var{enableCompileCache}=await import("node:module");enableCompileCache();var{guardCliOutput}=await import("./chunks/stream-guard-RSPXB74W.js");guardCliOutput();var{main}=await import("./chunks/cli-ABASVDUS.js");process.exitCode=await main(process.argv.slice(2));
