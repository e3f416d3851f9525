import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterEach, describe, expect, it } from 'vitest';
import local from '../../eslint/no-import-cycle.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Writes a source tree under a temporary `src/` and lints it with only the cycle rule. */
async function lint(files: Record<string, string>, options: Record<string, unknown> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'kr-cycle-'));
  dirs.push(cwd);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(cwd, 'src', name)), { recursive: true });
    writeFileSync(join(cwd, 'src', name), text);
  }
  const eslint = new ESLint({
    cwd,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { local },
        rules: { 'local/no-import-cycle': ['error', { root: 'src', ...options }] },
      },
    ],
  });
  const results = await eslint.lintFiles(['src/**/*.ts']);
  return results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(cwd.length + 5)}:${m.line} ${m.message}`));
}

describe('local/no-import-cycle', () => {
  it('reports each import that closes a module cycle, naming the cycle', async () => {
    const messages = await lint({
      'a/one.ts': "import { two } from './two.js';\nexport const one = () => two;\n",
      'a/two.ts': "import type { Three } from '../b/three.js';\nexport const two = 2;\nexport type T = Three;\n",
      'b/three.ts': "import { one } from '../a/one.js';\nexport type Three = ReturnType<typeof one>;\n",
    });
    expect(messages).toEqual([
      expect.stringMatching(/^a\/one\.ts:1 Import cycle: a\/one\.ts → a\/two\.ts → b\/three\.ts → a\/one\.ts\./),
      expect.stringMatching(/^a\/two\.ts:1 Import cycle: a\/two\.ts → b\/three\.ts → a\/one\.ts → a\/two\.ts\./),
      expect.stringMatching(/^b\/three\.ts:1 Import cycle: b\/three\.ts → a\/one\.ts → a\/two\.ts → b\/three\.ts\./),
    ]);
  });

  it('reports a module that imports itself', async () => {
    expect(await lint({ 'self.ts': "export * from './self.js';\n" })).toEqual([
      expect.stringMatching(/^self\.ts:1 Import cycle: self\.ts → self\.ts\./),
    ]);
  });

  it('says nothing about a tree without cycles, packages, or files outside the tree', async () => {
    const messages = await lint({
      'a/one.ts':
        "import { two } from '../b/two.js';\nimport { join } from 'node:path';\nexport const one = join(two);\n",
      'b/two.ts': "import { three } from './three.js';\nexport const two = three;\n",
      'b/three.ts': "import x from '../../outside.js';\nexport const three = String(x);\n",
    });
    expect(messages).toEqual([]);
  });

  it('with folders, reports two folders that import each other (not a module cycle) unless allowed', async () => {
    const files = {
      'a/one.ts': "import { two } from '../b/two.js';\nexport const one = two;\n",
      'b/two.ts': 'export const two = 2;\n',
      'b/three.ts': "import { four } from '../a/four.js';\nexport const three = four;\n",
      'a/four.ts': 'export const four = 4;\n',
    };
    expect(await lint(files)).toEqual([]);
    expect(await lint(files, { folders: true })).toEqual([
      'a/one.ts:1 Folders import each other: a → b → a (b/three.ts imports a/four.ts). Move what both need to where it belongs (often src/objects/ or src/util/).',
      'b/three.ts:1 Folders import each other: b → a → b (a/one.ts imports b/two.ts). Move what both need to where it belongs (often src/objects/ or src/util/).',
    ]);
    expect(await lint(files, { folders: true, allowFolderPairs: [['b', 'a']] })).toEqual([]);
  });

  it('with folders, reports a loop of three folders (no two import each other), naming every step', async () => {
    const files = {
      'a/one.ts': "import { two } from '../b/two.js';\nexport const one = two;\n",
      'b/two.ts': "import { three } from '../c/three.js';\nexport const two = three;\n",
      'c/three.ts': "import { four } from '../a/four.js';\nexport const three = four;\n",
      'a/four.ts': 'export const four = 4;\n',
      'main.ts': "import { one } from './a/one.js';\nexport const main = one;\n",
    };
    expect(await lint(files)).toEqual([]);
    const messages = await lint(files, { folders: true });
    expect(messages).toEqual([
      expect.stringMatching(
        /^a\/one\.ts:1 Folders import each other: a → b → c → a \(b\/two\.ts imports c\/three\.ts; c\/three\.ts imports a\/four\.ts\)/,
      ),
      expect.stringMatching(/^b\/two\.ts:1 Folders import each other: b → c → a → b/),
      expect.stringMatching(/^c\/three\.ts:1 Folders import each other: c → a → b → c/),
    ]);
    // Cutting one edge of the loop (allowed while it is untangled) leaves none.
    expect(await lint(files, { folders: true, allowFolderPairs: [['c', 'a']] })).toEqual([]);
  });
});
