// Which SOPS data keys a change made itself (src/source/base-keys.ts): values under a data key that
// no file of the base commit holds are the change author's own (or another repository's), neither
// masked nor used (class 10 of issue 47: an encrypted value equal to a pruned object's name hid it in
// the would-delete list).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataKeysOnBase, keyLines } from '../../src/source/base-keys.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const AGE_BASE = [
  '-----BEGIN AGE ENCRYPTED FILE-----',
  'YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBiYXNla2V5YmFzZWtleWJh',
  'c2VrZXliYXNla2V5YmFzZWtleQpiYXNlYmFzZWJhc2ViYXNlYmFzZWJhc2ViYXNl',
  '-----END AGE ENCRYPTED FILE-----',
].join('\n');
const AGE_OWN = [
  '-----BEGIN AGE ENCRYPTED FILE-----',
  'YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBvd25rZXlvd25rZXlvd25r',
  'ZXlvd25rZXlvd25rZXlvd25rZXkKb3dub3dub3dub3dub3dub3dub3dub3dub3du',
  '-----END AGE ENCRYPTED FILE-----',
].join('\n');

describe('keyLines', () => {
  it.each([
    ['an age armour: its base64 lines', [AGE_BASE], 2],
    ['a KMS blob: one run', ['AQICAHh' + 'x'.repeat(60)], 1],
    ['nothing long enough', ['short', ''], 0],
    ['the same line twice counts once', [AGE_BASE, AGE_BASE], 2],
  ])('%s', (_what, encs, count) => {
    expect(keyLines(encs)).toHaveLength(count);
  });
});

describe('dataKeysOnBase', () => {
  const root = mkdtempSync(join(tmpdir(), 'kr-own-keys-'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.invalid');
  git('config', 'user.name', 't');
  // The base keeps its data key as a YAML block scalar; the change's copy could escape the line breaks (JSON).
  writeFileSync(
    join(root, 'secret.yaml'),
    `data: ENC[x]\nsops:\n  age:\n  - enc: |\n${AGE_BASE.replace(/^/gm, '      ')}\n`,
  );
  git('add', '.');
  git('commit', '-q', '-m', 'base');
  const base = git('rev-parse', 'HEAD');
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ["the base's data key (a file copied or kept)", [AGE_BASE], true],
    ['a data key the change made', [AGE_OWN], false],
    // A stanza copied from a base file beside one of its own: the file may still be opened with its own.
    ['one master key on the base beside one the change made', [AGE_OWN, AGE_BASE], false],
    ['no line to search: kept secret', ['x'], true],
  ])('%s', async (_what, encs, want) => {
    expect(await dataKeysOnBase(root, () => Promise.resolve(base))(encs)).toBe(want);
  });

  it('without a base, or a base git cannot read, every key stays secret', async () => {
    expect(await dataKeysOnBase(root, () => Promise.resolve(undefined))([AGE_OWN])).toBe(true);
    expect(await dataKeysOnBase(root, () => Promise.resolve('0'.repeat(40)))([AGE_OWN])).toBe(true);
  });
});
