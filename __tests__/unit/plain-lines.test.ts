// The line reader of plain files (src/kustomize/plain-lines.ts) against the yaml package's documents
// (readPlainSlow): wherever the line reader answers, readPlain's answer must be the one the yaml
// package gives, value for value and key for key; anything else is left to the yaml package. On
// hand-written cases, every file of the parity corpus and the fixtures, the benchmark's tree, random
// trees, and those files mutated line by line (indentation, indicators, quotes, comments).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { linesDocuments } from '../../src/kustomize/plain-lines.js';
import { readPlain, readPlainSlow } from '../../src/kustomize/plain-yaml.js';
import { benchTree, random, randomTree } from '../helpers/plain-trees.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** Which reader answered; fails when the line reader's answer is not the yaml package's. */
function same(text: string, what: string): 'lines' | 'yaml' {
  const fast = linesDocuments(text);
  if (fast === undefined) return 'yaml';
  const slow = readPlainSlow(text);
  const got = readPlain(text);
  // JSON text compares the order of keys too; toEqual tells -0 from 0 and undefined from missing.
  expect(JSON.stringify(got), `${what}\n${text}`).toBe(JSON.stringify(slow));
  expect(got, `${what}\n${text}`).toEqual(slow);
  return 'lines';
}

const cm = (body: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n${body}`;

describe('the line reader of plain files', () => {
  it.each([
    ['block mappings and a sequence at its key’s indentation', cm('data:\n  a: b\nlist:\n- a\n- b\n'), 'lines'],
    [
      'a sequence of mappings, nested sequences',
      cm('items:\n  - name: a\n    ports:\n    - 80\n  - - x\n    - y\n'),
      'lines',
    ],
    ['quoted scalars and escapes', cm(`data:\n  a: "x\\"y\\n\\u00e9"\n  b: 'it''s'\n  c: "#"\n`), 'lines'],
    [
      'comments everywhere',
      cm('# top\ndata: # after a key\n  # inside\n  a: b # after a value\n    # deeper\n  c: d#e\n'),
      'lines',
    ],
    [
      'numbers, booleans and nulls',
      cm('spec:\n  a: 1\n  b: 1.5\n  c: 1e3\n  d: true\n  e: False\n  f: null\n  g: ~\n'),
      'lines',
    ],
    [
      'literal blocks, clip and strip, blank lines inside',
      cm('data:\n  a: |\n    x\n\n      y\n    # z\n\n  b: |-\n    q\n'),
      'lines',
    ],
    ['empty flow collections', cm('spec:\n  a: []\n  b: {}\n  c: [] # none\n'), 'lines'],
    ['several documents and empty ones', `---\n${cm('data: {}\n')}---\n# nothing\n---\n${cm('a: b\n')}`, 'lines'],
    ['keys of dots, slashes and digits', cm('  labels:\n    app.kubernetes.io/name: web\n    x1: "1"\n'), 'lines'],
    ['a value over two lines', cm('data:\n  a: one\n    two\n'), 'yaml'],
    ['an empty value', cm('data:\n  a:\n  b: c\n'), 'yaml'],
    ['a null list item', cm('list:\n- a\n-\n'), 'yaml'],
    ['a folded block', cm('data:\n  a: >\n    x\n'), 'yaml'],
    ['a keep-chomping block', cm('data:\n  a: |+\n    x\n'), 'yaml'],
    ['an anchor and an alias', cm('a: &x 1\nb: *x\n'), 'yaml'],
    ['a tag', cm('a: !!str 1\n'), 'yaml'],
    ['a flow mapping', cm('a: {b: c}\n'), 'yaml'],
    ['a quoted key', cm('"a": b\n'), 'yaml'],
    ['a duplicate key', cm('a: 1\na: 2\n'), 'yaml'],
    ['an octal-looking number', cm('a: 017\n'), 'yaml'],
    ['a timestamp', cm('a: 2001-12-14\n'), 'yaml'],
    ['a negative number', cm('a: -1\n'), 'yaml'],
    ['a key that is a number', cm('data:\n  80: http\n'), 'yaml'],
    ['a key that is a boolean', cm('data:\n  true: x\n'), 'yaml'],
    ['a tab', cm('data:\n  a:\tb\n'), 'yaml'],
    ['a carriage return', cm('data:\r\n  a: b\r\n'), 'yaml'],
    ['odd indentation', cm('data:\n    a: b\n  c: d\n'), 'yaml'],
    ['a colon in a plain value', cm('data:\n  a: b: c\n'), 'yaml'],
    ['an unusual escape', cm('data:\n  a: "\\x41"\n'), 'yaml'],
    ['a top-level sequence', '- a\n- b\n', 'yaml'],
    ['an indented document', '  a: b\n', 'yaml'],
  ])('%s', (what, text, reader) => {
    expect(same(text, what)).toBe(reader);
  });

  it('reads every file of the benchmark’s tree, as the yaml package does', () => {
    const files = Object.entries(benchTree(1000));
    const readers = files.map(([path, text]) => same(text, path));
    expect(readers.every((r) => r === 'lines')).toBe(true);
  });

  it('gives the yaml package’s answer on every file of the parity corpus and the fixtures', async () => {
    const texts: [string, string][] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (/\.ya?ml$/.test(e.name)) texts.push([p, await readFile(p, 'utf8')]);
      }
    };
    for (const d of ['../../test/parity/corpus/', '../fixtures/', '../../__fixtures__/']) {
      await walk(fileURLToPath(new URL(d, import.meta.url))).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      });
    }
    expect(texts.length).toBeGreaterThan(100);
    const readers = texts.map(([p, text]) => same(text, p));
    expect(readers.filter((r) => r === 'lines').length).toBeGreaterThan(texts.length / 4);
  });

  // KR_PLAIN_FUZZ=<n> runs n times as many seeds (a longer search than CI's, by hand).
  const scale = Math.max(1, Number(process.env['KR_PLAIN_FUZZ'] ?? 1));

  it('gives the yaml package’s answer on random trees', () => {
    let lines = 0;
    let files = 0;
    for (let seed = 1; seed <= 300 * scale; seed++) {
      for (const [path, text] of Object.entries(randomTree(seed, seed % 3 === 0 ? 0.1 : 0))) {
        files++;
        if (same(text, `seed ${seed} ${path}`) === 'lines') lines++;
      }
    }
    // Their scalars are chosen to be odd: most files are left to the yaml package.
    expect(lines).toBeGreaterThan(files / 100);
  });

  /** Mutations that move a file in and out of the subset, one line at a time. */
  const MUTATIONS: ((line: string, r: ReturnType<typeof random>) => string)[] = [
    (l) => ` ${l}`,
    (l) => l.replace(/^ /, ''),
    (l) => `${l} # c`,
    (l) => `${l}:`,
    (l) => l.replace(': ', ':  '),
    (l) => l.replace(': ', ': |\n'),
    (l) => l.replace(': ', ': |-\n  '),
    (l) => l.replace(': ', ": '"),
    (l) => l.replace(': ', ': "'),
    (l) => l.replace(': ', ': - '),
    (l) => l.replace(': ', ': []'),
    (l) => l.replace(/\S/, '- $&'),
    (l) => l.replace(/\S/, '-$&'),
    (l) => l.replace(/: .*/, ':'),
    (l) => `${l}\n`,
    (l) => `${l}\n---`,
    (l) => `${l}\n#`,
    (l, r) =>
      `${l}${r.pick(['#', ':', '"', "'", '\\', '|', '>', '-', '{', '}', '[', ']', ',', '&', '*', '!', '~', '0', '.', ' '])}`,
    (l, r) => {
      const at = r.int(l.length + 1);
      return (
        l.slice(0, at) +
        r.pick(['#', ': ', '"', "'", '\\n', '- ', ' ', '  ', '\n', '\n  ', '0', 'e5', '_']) +
        l.slice(at)
      );
    },
    () => '',
  ];

  it('gives the yaml package’s answer on files mutated line by line', () => {
    const sources = [
      ...Object.values(benchTree(60)),
      ...Array.from({ length: 40 }, (_, i) => Object.values(randomTree(i + 1, 0))).flat(),
    ];
    let lines = 0;
    let runs = 0;
    for (let seed = 1; seed <= 3000 * scale; seed++) {
      const r = random(seed);
      const rows = r.pick(sources).split('\n');
      for (let k = 1 + r.int(3); k > 0; k--) {
        const at = r.int(rows.length);
        rows[at] = r.pick(MUTATIONS)(rows[at]!, r);
      }
      runs++;
      if (same(rows.join('\n'), `mutation seed ${seed}`) === 'lines') lines++;
    }
    // Both readers get their share: the mutations stay close to the subset's edge.
    expect(lines).toBeGreaterThan(runs / 20);
    expect(lines).toBeLessThan(runs);
  });
});
