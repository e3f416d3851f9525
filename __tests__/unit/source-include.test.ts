// spec.include: an included GitRepository's artifact (or its fromPath) copied to toPath of the
// including tree, which must not hold anything there yet (source-controller moves it into place).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addInclude } from '../../src/source/fetched.js';
import { writeTree } from '../helpers/cluster.js';

describe('addInclude', () => {
  const included = () =>
    writeTree({ 'deploy/cm.yaml': 'kind: ConfigMap\n', 'deploy/sub/x.yaml': 'x: 1\n', 'README.md': 'r\n' });

  it.each<[string, string, string, Record<string, string>]>([
    [
      'the whole artifact at toPath',
      '',
      'shared',
      { 'shared/deploy/cm.yaml': 'kind: ConfigMap\n', 'shared/README.md': 'r\n' },
    ],
    [
      'fromPath only',
      'deploy',
      'vendor/shared',
      { 'vendor/shared/cm.yaml': 'kind: ConfigMap\n', 'vendor/shared/sub/x.yaml': 'x: 1\n' },
    ],
    ['fromPath with ./ and a trailing slash', './deploy/', 'lib', { 'lib/cm.yaml': 'kind: ConfigMap\n' }],
    ['a single file', 'README.md', 'docs/README.md', { 'docs/README.md': 'r\n' }],
  ])('copies %s', async (_, fromPath, toPath, want) => {
    const target = await writeTree({ 'apps/ks.yaml': 'a\n' });
    await addInclude(await included(), { fromPath, toPath }, target);
    for (const [path, text] of Object.entries(want)) expect(readFileSync(join(target, path), 'utf8')).toBe(text);
    expect(readFileSync(join(target, 'apps/ks.yaml'), 'utf8')).toBe('a\n');
  });

  it("takes the place of an empty directory, as source-controller's rename does", async () => {
    const target = await writeTree({ 'apps/ks.yaml': 'a\n' });
    mkdirSync(join(target, 'shared'));
    await addInclude(await included(), { fromPath: 'deploy', toPath: 'shared' }, target);
    expect(readFileSync(join(target, 'shared/cm.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
  });

  it.each<[string, string, string, RegExp]>([
    ['toPath that already holds files', '', 'apps', /toPath "apps" already exists in the including repository/],
    ['fromPath leaving the artifact', '../etc', 'x', /fromPath "..\/etc" leaves the included repository/],
    ['toPath leaving the repository', '', '../x', /toPath "..\/x" must name a directory inside the repository/],
    ['toPath of the root', '', './', /toPath ".\/" must name a directory inside the repository/],
    ['a missing fromPath', 'nowhere', 'x', /fromPath "nowhere" does not exist in the included repository's artifact/],
  ])('refuses %s', async (_, fromPath, toPath, reason) => {
    const root = await writeTree({ 'apps/ks.yaml': 'a\n' });
    await expect(addInclude(await included(), { fromPath, toPath }, root)).rejects.toThrow(reason);
  });
});
