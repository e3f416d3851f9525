#!/usr/bin/env node
import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{enableCompileCache}from"node:module";enableCompileCache();var{guardCliOutput}=await import("./chunks/stream-guard-PC4EFW67.js");guardCliOutput();var{main}=await import("./chunks/cli-FXFSJGDC.js");process.exitCode=await main(process.argv.slice(2));
