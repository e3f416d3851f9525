/** Types for scripts/bundle.mjs (plain ESM, run by node directly). */
import type { BuildOptions, Plugin } from 'esbuild';

/** An import that scripts/bundle.mjs replaces with a stub: `path` as imported by a file matching `importer`. */
export interface Stub {
  importer: RegExp;
  path: string;
  contents: string;
}
export const STUBS: Stub[];
/** The esbuild plugin that puts STUBS in place. */
export const unusedImports: Plugin;
/** esbuild's options for a bundle into `outdir` (with `sourcemap`, linked source maps). */
export function bundleOptions(outdir: string, sourcemap?: boolean): BuildOptions;
