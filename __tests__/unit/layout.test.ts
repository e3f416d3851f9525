// docs/architecture.md's rule on module size: no file in src/ over 450 lines, so that each module
// stays one idea that reads in a sitting. The option table is data (one entry per option, each a
// few lines), not logic, and is the one exception.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';

const LIMIT = 450;
const DATA = new Set(['src/options/table.ts']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('src/ layout', () => {
  const all = files(join(REPO, 'src')).map((f) => relative(REPO, f).split('\\').join('/'));

  it('finds the modules', () => {
    expect(all).toContain('src/source/oci.ts');
    expect(all.length).toBeGreaterThan(100);
  });

  it(`holds no module over ${LIMIT} lines but the option table`, () => {
    const long = all
      .filter((f) => !DATA.has(f))
      .map((f) => ({ f, lines: readFileSync(join(REPO, f), 'utf8').split('\n').length - 1 }))
      .filter((x) => x.lines > LIMIT)
      .map((x) => `${x.f}: ${x.lines}`);
    expect(long).toEqual([]);
  });

  it('builds Kubernetes API URLs only in src/cluster/', () => {
    // A string or template that starts an API path: '/api/v1/…', `/apis/${group}/…`.
    const url = /['`]\/apis?\//;
    const outside = all
      .filter((f) => !f.startsWith('src/cluster/'))
      .flatMap((f) =>
        readFileSync(join(REPO, f), 'utf8')
          .split('\n')
          .flatMap((line, i) => (url.test(line) && !/^\s*(\/\/|\*)/.test(line) ? [`${f}:${i + 1}`] : [])),
      );
    expect(outside).toEqual([]);
  });
});
