import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REPO } from '../helpers/paths.js';

describe('runtime', () => {
  it('tests run on the Node major that action.yml names (what GitHub runs)', async () => {
    const action = parse(await readFile(join(REPO, 'action.yml'), 'utf8')) as { runs: { using: string; main: string } };
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
    expect(`node${process.versions.node.split('.')[0]}`).toBe(action.runs.using);
    expect((await readFile(join(REPO, '.node-version'), 'utf8')).trim()).toBe('24');
  });
});
