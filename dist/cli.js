#!/usr/bin/env node
import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);
import{enableCompileCache}from"node:module";enableCompileCache();var{main}=await import("./chunks/cli-WAM3V5KM.js");process.exitCode=await main(process.argv.slice(2));
