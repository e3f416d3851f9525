// YAML aliases that recurse or expand past the bound (issue 33, item 9): found on the parsed nodes
// without expanding anything, named by file, document and line; and refused by every reader of the
// build (kustomization files, the generated kustomization's files, the plain build without kustomize).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manifestFileProblem } from '../../src/kustomize/generate.js';
import { kustomizationFromText } from '../../src/kustomize/kustomization.js';
import { buildPlain } from '../../src/kustomize/plain.js';
import { buildReads } from '../../src/kustomize/reads.js';
import { parseYamlStream } from '../../src/objects/yaml.js';
import { MAX_ALIAS_NODES, mayHoldAliases, yamlAliasProblem } from '../../src/util/bounded.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n';
const levels = 'abcdefghi'.split('');
const LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...levels.slice(1).map((l, i) => `${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(',')}]`),
  '',
].join('\n');
// The yaml package's own count (maxAliasCount) lets aliases of an empty collection through.
const EMPTY_LAUGHS = `x: &x []\nb: &b [${Array(400).fill('*x').join(', ')}]\nc: [${Array(400).fill('*b').join(', ')}]\n`;

describe('yamlAliasProblem', () => {
  it.each([
    {
      why: 'a sequence holding itself',
      text: `${CM}data:\n  x: &a [*a]\n`,
      error: 'f.yaml, document 1: the YAML alias *a at line 5 lies inside the node it names (&a, from line 5)',
    },
    {
      why: 'a mapping holding itself',
      text: `${CM}data: &self\n  again: *self\n`,
      error: 'f.yaml, document 1: the YAML alias *self at line 5 lies inside the node it names',
    },
    {
      why: 'the document holding itself',
      text: `&doc\n${CM}self: *doc\n`,
      error: 'f.yaml, document 1: the YAML alias *doc at line 5 lies inside the node it names (&doc, from line 2)',
    },
    {
      why: 'an alias of a node whose inner alias recurses',
      text: 'x: &a [ &b [ *a ] ]\ny: *b\n',
      error: 'f.yaml, document 1: the YAML alias *a at line 1 lies inside the node it names',
    },
    {
      why: 'in the second document, numbered so',
      text: `${CM}---\n${CM}data: &d {x: *d}\n`,
      error: 'f.yaml, document 2: the YAML alias *d at line 8',
    },
    {
      why: 'a billion laughs',
      text: LAUGHS,
      error: `f.yaml, document 1: too many YAML aliases: expanding them adds more than ${MAX_ALIAS_NODES} nodes (past the alias *e at line 6)`,
    },
    {
      why: 'laughs of empty collections',
      text: EMPTY_LAUGHS,
      error: 'f.yaml, document 1: too many YAML aliases',
    },
  ])('refuses $why, naming the file, document and line', ({ text, error }) => {
    expect(yamlAliasProblem(text, 'f.yaml')).toContain(error);
  });

  it.each([
    ['no alias', CM],
    ['anchors reused', `${CM}data: &d {a: "1"}\nother: *d\nthird: [*d, *d]\n`],
    [
      '150 anchors, each used three times',
      Array.from({ length: 150 }, (_, i) => `k${i}: &a${i} v\nu${i}: [*a${i}, *a${i}, *a${i}]\n`).join(''),
    ],
    ['a small anchor used 2,000 times', `x: &x {a: 1}\nl: [${Array(2000).fill('*x').join(', ')}]\n`],
    [
      '`*` and `&` in strings, URLs and comments',
      `${CM}data:\n  glob: "*.txt"\n  url: http://x/?a=1&b=2\n  cmd: ls *.yaml # &a *a\n`,
    ],
    ['a syntax error (the file reader reports it)', 'a: &a [*a\n'],
    ['an alias of an unknown anchor', 'a: *nope\nb: &x 1\n'],
  ])('takes %s', (_, text) => {
    expect(yamlAliasProblem(text, 'f.yaml')).toBeUndefined();
  });

  it.each([
    ['no alias token', 'a: "&x"\nb: "*x"\n', false],
    ['an alias of no anchor', 'a: &x 1\nb: *y\n', false],
    ['an alias of an anchor', 'a: &x 1\nb: *x\n', true],
    ['in a flow sequence', 'a: [&x 1, *x]\n', true],
    ['URLs and globs', 'u: http://h/?a=1&b=2\ng: ls *.yaml\n', false],
  ])('mayHoldAliases: %s', (_, text, want) => {
    expect(mayHoldAliases(text)).toBe(want);
  });
});

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-aliases-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const LOOP = `${CM}data: &self\n  again: *self\n`;

describe('the build readers refuse them, naming the file', () => {
  it('a kustomization file', () => {
    expect(() => kustomizationFromText('resources: &r [*r]\n', 'app/kustomization.yaml')).toThrow(
      'app/kustomization.yaml, document 1: the YAML alias *r at line 1 lies inside the node it names',
    );
  });

  it('a file of a generated kustomization (before its objects are walked)', () => {
    expect(manifestFileProblem(LOOP, 'app/loop.yaml')).toContain(
      'app/loop.yaml, document 1: the YAML alias *self at line 5',
    );
  });

  it('the plain build without kustomize', async () => {
    const root = await tree({ 'app/cm.yaml': CM, 'app/sub/loop.yaml': LOOP });
    await expect(buildPlain(root, 'app')).rejects.toThrow(
      'app/sub/loop.yaml, document 1: the YAML alias *self at line 5 lies inside the node it names',
    );
  });

  it('the plain build still builds anchors that stay within the bound (through kustomize)', async () => {
    const root = await tree({ 'app/cm.yaml': `${CM}data: &d {a: "1"}\nlabels: *d\n` });
    await expect(buildPlain(root, 'app')).resolves.toBeUndefined();
  });

  it("the plan's reads of a kustomization", async () => {
    const root = await tree({ 'app/kustomization.yaml': 'resources: [base]\n', 'app/base/kustomization.yaml': LAUGHS });
    await expect(buildReads(root, 'app')).rejects.toThrow(
      'app/base/kustomization.yaml, document 1: too many YAML aliases',
    );
  });
});

describe('parseYamlStream (Flux Kustomization files, patches, inputs)', () => {
  it.each([
    ['a recursive alias', `${CM}data:\n  x: &a [*a]\n`, 'lies inside the node it names'],
    ['a document holding itself', `&doc\n${CM}self: *doc\n`, 'lies inside the node it names'],
    ['aliases of an empty collection, many times over', EMPTY_LAUGHS, 'clusters/prod/app.yaml, document 1'],
  ])('refuses %s, naming the file, instead of a circular or huge value', (_, text, error) => {
    const docs = parseYamlStream(text, 'clusters/prod/app.yaml');
    expect(docs).toHaveLength(1);
    expect(docs[0]?.error).toContain('clusters/prod/app.yaml, document 1');
    expect(docs[0]?.error).toContain(error);
    expect(docs[0]).not.toHaveProperty('value');
  });

  it('reads an ordinary anchor and alias', () => {
    const [doc] = parseYamlStream(`${CM}data: {a: &v x, b: *v}\n`, 'f.yaml');
    expect(doc?.value).toMatchObject({ data: { a: 'x', b: 'x' } });
  });
});
