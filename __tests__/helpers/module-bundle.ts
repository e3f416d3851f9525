// A module of src/ bundled (esbuild) into one .mjs file that a child Node process can import: the
// sources import each other as `.js`, which Node's own TypeScript support does not resolve.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { REPO } from './paths.js';

const bundles = new Map<string, Promise<string>>();

/** The file URL of `src/<path>` (e.g. `util/scratch.ts`) bundled, made once per test process. */
export function bundledModule(path: string): Promise<string> {
  let made = bundles.get(path);
  if (made === undefined) {
    made = (async () => {
      const out = join(await mkdtemp(join(tmpdir(), 'kr-module-')), `${basename(path, '.ts')}.mjs`);
      await build({
        entryPoints: [join(REPO, 'src', path)],
        bundle: true,
        platform: 'node',
        target: 'node24',
        format: 'esm',
        outfile: out,
        logLevel: 'warning',
      });
      return pathToFileURL(out).href;
    })();
    bundles.set(path, made);
  }
  return made;
}
