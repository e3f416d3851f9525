// Bundles the action (dist/index.js) and the CLI (dist/cli.js) with esbuild for Node 24, as ESM.
// Code both share, and the parts only some runs need (openpgp, Octokit: loaded with import()), are
// chunks in dist/chunks/. dist/cli.js is a few lines that turn on V8's compile cache and then import
// the CLI (src/bin/cli.ts). Usage: node scripts/bundle.mjs [outdir] [--sourcemap]
// --sourcemap writes a .map beside each file (for the benchmark's CPU profile, bench/profile.ts; the
// committed dist/ has none).
import { build } from 'esbuild';
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Imports that load large code this project never runs, replaced by stubs that throw if it ever did
 * (__tests__/unit/dist-fresh.test.ts checks that src/ calls none of it, and that a kubeconfig gives the
 * same request options through the stubbed bundle as through the package):
 * - client-node's KubeConfig (dist/config.js) imports undici and the generated API client (every
 *   Kubernetes model; about 1.4 MB between them) for makeApiClient and createDispatcher, which build
 *   fetch-based API clients. This project only reads kubeconfigs with it and sends its own requests
 *   (src/cluster/client.ts: applyToHTTPSOptions on node:https).
 * - @actions/core imports its OIDC client (@actions/http-client and undici, 0.5 MB) for
 *   core.getIDToken(), which the action does not call.
 * Other importers of these modules get the real ones.
 */
const unused = (what) =>
  `throw new Error(${JSON.stringify(`kustomize-reconcile: ${what} is not bundled (scripts/bundle.mjs)`)});`;
const CLIENT_NODE_CONFIG = /@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/;
export const STUBS = [
  {
    importer: CLIENT_NODE_CONFIG,
    path: 'undici',
    contents: `export class Agent { constructor() { ${unused("client-node's undici Agent")} } }
export class ProxyAgent { constructor() { ${unused("client-node's undici ProxyAgent")} } }`,
  },
  {
    importer: CLIENT_NODE_CONFIG,
    path: './gen/index.js',
    contents: `export class ServerConfiguration { constructor() { ${unused("client-node's generated API client")} } }
export function createConfiguration() { ${unused("client-node's generated API client")} }`,
  },
  {
    importer: /@actions[\\/]core[\\/]lib[\\/]core\.js$/,
    path: './oidc-utils.js',
    contents: `export class OidcClient { static getIDToken() { ${unused("@actions/core's OIDC client")} } }`,
  },
];
export const unusedImports = {
  name: 'unused-imports',
  setup(b) {
    b.onResolve({ filter: /^(undici|\.\/gen\/index\.js|\.\/oidc-utils\.js)$/ }, (args) => {
      const i = STUBS.findIndex((s) => s.path === args.path && s.importer.test(args.importer));
      return i < 0 ? undefined : { path: String(i), namespace: 'unused-imports' };
    });
    b.onLoad({ filter: /.*/, namespace: 'unused-imports' }, (args) => ({
      contents: STUBS[Number(args.path)].contents,
      loader: 'js',
    }));
  },
};

/**
 * node:http and node:https through require(), not import: Node's ESM view of a built-in reads every
 * export, and node:http's include lazy getters (WebSocket and the like) that load Node's internal
 * undici, about 15 ms at start-up that no run uses. esbuild's wrapper reads an export only when used.
 */
export const builtinsByRequire = {
  name: 'builtins-by-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?https?$/ }, (args) =>
      // The wrapper's own require() is the built-in itself.
      args.namespace === 'builtins-by-require'
        ? { path: args.path, external: true }
        : { path: args.path.replace(/^node:/, ''), namespace: 'builtins-by-require' },
    );
    b.onLoad({ filter: /.*/, namespace: 'builtins-by-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`,
      loader: 'js',
    }));
  },
};

/** esbuild's options for a bundle into `outdir` (with `sourcemap`, linked source maps). */
export function bundleOptions(outdir, sourcemap = false) {
  return {
    entryPoints: { index: 'src/index.ts', cli: 'src/bin/cli.ts' },
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
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
    plugins: [unusedImports, builtinsByRequire],
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'eof',
    metafile: true,
    ...(sourcemap ? { sourcemap: 'linked', sourcesContent: false } : {}),
    logLevel: 'warning',
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const outdir = args.find((a) => !a.startsWith('--')) ?? 'dist';
  // Chunk names carry a content hash: drop the old ones, so dist/ holds only what this build wrote.
  await rm(join(outdir, 'chunks'), { recursive: true, force: true });
  const result = await build(bundleOptions(outdir, args.includes('--sourcemap')));
  await chmod(join(outdir, 'cli.js'), 0o755);
  for (const [file, out] of Object.entries(result.metafile.outputs)) {
    console.log(`${file}: ${(out.bytes / 1024 / 1024).toFixed(2)} MB`);
  }
}
