// Bundles the action (dist/index.js) and the CLI (dist/cli.js) with esbuild: each a single
// self-contained ESM file for Node 24. Usage: node scripts/bundle.mjs [outdir] [--sourcemap]
// --sourcemap writes a .map beside each file (for the benchmark's CPU profile, bench/profile.ts; the
// committed dist/ has none).
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';

const args = process.argv.slice(2);
const sourcemap = args.includes('--sourcemap');
const outdir = args.find((a) => !a.startsWith('--')) ?? 'dist';
const result = await build({
  entryPoints: { index: 'src/index.ts', cli: 'src/bin/cli.ts' },
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  outdir,
  // CommonJS dependencies call require(); give the ESM bundle one.
  banner: {
    js: "import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);",
  },
  // ws's optional native speed-ups; ws falls back to JavaScript when they are absent.
  external: ['bufferutil', 'utf-8-validate'],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'eof',
  metafile: true,
  ...(sourcemap ? { sourcemap: 'linked', sourcesContent: false } : {}),
  logLevel: 'warning',
});
await chmod(join(outdir, 'cli.js'), 0o755);
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  console.log(`${file}: ${(out.bytes / 1024 / 1024).toFixed(2)} MB`);
}
