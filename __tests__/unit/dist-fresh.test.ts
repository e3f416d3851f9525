import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { NODE, REPO } from '../helpers/paths.js';

describe('dist/', () => {
  let fresh: string;
  beforeAll(async () => {
    fresh = await mkdtemp(join(tmpdir(), 'kr-dist-'));
    await promisify(execFile)(NODE, [join(REPO, 'scripts', 'bundle.mjs'), fresh], { cwd: REPO });
  }, 60_000);

  it.each(['index.js', 'cli.js'])('%s matches a fresh bundle of src/', async (file) => {
    const want = await readFile(join(fresh, file), 'utf8');
    const have = await readFile(join(REPO, 'dist', file), 'utf8').catch(() => '');
    // A boolean, so that a failure prints the fix rather than two 2 MB strings.
    expect(have === want, `dist/${file} is stale: run \`npm run bundle\` and commit dist/ with the source`).toBe(true);
  });
});
