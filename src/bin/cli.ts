#!/usr/bin/env node
// The CLI's executable, bundled as dist/cli.js: src/cli.ts is the importable module it runs.
import { main } from '../cli.js';

process.exitCode = await main(process.argv.slice(2));
