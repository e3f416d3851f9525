import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../src/objects/kube.js';
import { jsonPatchProblem } from '../../src/kustomize/jsonpatch.js';
import { locateObject } from '../../src/report/problems.js';
import { MAX_DEPTH, parseYamlStream } from '../../src/objects/yaml.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const manyKeys = (n: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n${Array.from({ length: n }, (_, i) => `  k${i}: v`).join('\n')}\n`;

describe('parseYamlStream', () => {
  it.each([
    { why: 'two documents', text: 'a: 1\n---\nb: 2\n', values: [{ a: 1 }, { b: 2 }] },
    { why: 'an end marker, then a new document', text: 'a: 1\n...\n---\nb: 2\n', values: [{ a: 1 }, { b: 2 }] },
    { why: 'an end marker at the end', text: 'a: 1\n...\n', values: [{ a: 1 }] },
    { why: 'a comment after the end marker', text: 'a: 1\n...\n# done\n', values: [{ a: 1 }] },
    { why: 'a byte order mark', text: '\uFEFFa: 1\n', values: [{ a: 1 }] },
    {
      why: 'nesting at the limit',
      text: `a: ${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)}\n`,
      values: [{}],
    },
    { why: 'a merge key twice is not a duplicate', text: 'a: 1\n"<<": 1\n', values: [{ a: 1, '<<': 1 }] },
  ])('accepts $why', ({ text, values }) => {
    const docs = parseYamlStream(text, 'f.yaml');
    const out = docs.map((d) => d.value);
    if (values[0] && Object.keys(values[0]).length === 0) expect(out).toHaveLength(1);
    else expect(out).toEqual(values);
    expect(docs.every((d) => d.error === undefined)).toBe(true);
  });

  it.each([
    {
      why: 'garbage after a document end marker',
      text: 'a: 1\n...\ngarbage here\n',
      error: 'f.yaml, document 2: content after the document end marker "..." (line 3)',
    },
    {
      why: 'a duplicate key',
      text: 'a: 1\nb: 2\na: 3\n',
      error: 'f.yaml, document 1: key "a" appears twice in one mapping (line 3)',
    },
    {
      why: 'a long duplicate key, quoted short',
      text: `? "${'k'.repeat(5000)}"\n: 1\n? "${'k'.repeat(5000)}"\n: 2\n`,
      error: `f.yaml, document 1: key "${'k'.repeat(100)}…" appears twice in one mapping (line 3)`,
    },
    {
      why: 'a number key and the same text as a string',
      text: 'data:\n  1: a\n  "1": b\n',
      error: 'f.yaml, document 1: key "1" appears twice in one mapping (line 3)',
    },
    {
      why: 'deep flow nesting',
      text: `a: ${'['.repeat(MAX_DEPTH + 5)}${']'.repeat(MAX_DEPTH + 5)}\n`,
      error: `f.yaml, document 1: nested more than ${MAX_DEPTH} levels deep`,
    },
    {
      why: 'nesting deep enough to exhaust the parser',
      text: `a: ${'['.repeat(20000)}${']'.repeat(20000)}\n`,
      error: `f.yaml, document 1: nested more than ${MAX_DEPTH} levels deep`,
    },
    {
      why: 'deep block nesting under a flow list',
      text: `a: 3\n${Array.from({ length: 2203 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')} x\n---\nkind: List\n`,
      error: `f.yaml: nested more than ${MAX_DEPTH} levels deep`,
    },
    {
      why: 'deep block nesting',
      text: Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n'),
      error: `f.yaml, document 1: nested more than ${MAX_DEPTH} levels deep`,
    },
    {
      why: 'an alias bomb',
      text: `a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [${'*a, '.repeat(9)}*a]\nc: &c [${'*b, '.repeat(9)}*b]\nd: &d [${'*c, '.repeat(99)}*c]\n`,
      error: 'f.yaml, document 1: too many YAML aliases',
    },
    { why: 'a NUL byte', text: 'a: 1\nb: "x\0y"\n', error: 'f.yaml: control character U+0000 at line 2' },
    { why: 'an escape character', text: 'a: "\x1b[31m"\n', error: 'f.yaml: control character U+001B at line 1' },
    { why: 'a tab indentation', text: 'a:\n\tb: 1\n', error: 'f.yaml, document 1: invalid YAML' },
  ])('refuses $why', ({ text, error }) => {
    const docs = parseYamlStream(text, 'f.yaml');
    const errors = docs.flatMap((d) => (d.error === undefined ? [] : [d.error]));
    expect(errors[0]).toContain(error);
    expect(errors[0]!.length).toBeLessThan(400);
    expect(errors[0]).not.toMatch(/\n\s+at /);
  });

  it('parses a 50,000-key map without the quadratic unique-keys check', () => {
    // Before: yaml's own uniqueKeys check compares every key with every other (5k/20k keys: 1.3/12.6 s).
    const [doc] = parseYamlStream(manyKeys(50_000), 'big.yaml');
    expect(Object.keys((doc!.value as { data: object }).data)).toHaveLength(50_000);
  });
});

describe('parseManifests on hostile input', () => {
  it('parses a 50,000-key ConfigMap', () => {
    const [obj] = parseManifests(manyKeys(50_000), 'big.yaml');
    expect(Object.keys(obj!['data'] as object)).toHaveLength(50_000);
  });

  it.each([
    {
      why: 'a duplicate key',
      text: 'apiVersion: v1\napiVersion: v2\n',
      error: 'f.yaml, document 1: key "apiVersion" appears twice',
    },
    {
      why: 'deep nesting',
      text: `apiVersion: v1\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
      error: 'nested more than',
    },
    {
      why: 'garbage after ...',
      text: 'apiVersion: v1\nkind: A\nmetadata: {name: a}\n...\nnot: [a, manifest\n',
      error: 'f.yaml, document 2',
    },
  ])('refuses $why naming the file', ({ text, error }) => {
    expect(() => parseManifests(text, 'f.yaml')).toThrow(error);
  });
});

describe('jsonPatchProblem', () => {
  it.each([
    {
      patch: [{ op: 'explode', path: '/x' }],
      want: 'operation 1: op "explode" is not one of add, remove, replace, move, copy, test',
    },
    { patch: [{ op: 'add', path: 'data/x', value: 1 }], want: 'operation 1 (add): path "data/x" must start with "/"' },
    {
      patch: [
        { op: 'remove', path: '/a' },
        { op: 'add', value: 1 },
      ],
      want: 'operation 2 (add): path is missing',
    },
    { patch: [{ op: 'move', path: '/a' }], want: 'operation 1 (move): from is missing' },
    { patch: [{ op: 'replace', path: '/a' }], want: 'operation 1 (replace): value is missing' },
    { patch: ['add'], want: 'operation 1 must be a map with op and path' },
  ])('$want', ({ patch, want }) => {
    expect(jsonPatchProblem(patch)).toContain(want);
  });
  it.each([
    [[{ op: 'add', path: '/a', value: null }]],
    [[{ op: 'remove', path: '' }]],
    [[{ op: 'copy', from: '/a', path: '/b' }]],
    [{ metadata: { name: 'x' } }],
  ])('accepts %j', (patch) => {
    expect(jsonPatchProblem(patch)).toBeUndefined();
  });
});

describe('locating an object in a huge file', () => {
  it('finds the line of an object after a 50,000-key ConfigMap without the quadratic check', () => {
    const text = `${manyKeys(50_000)}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n`;
    expect(locateObject(text, 'Secret', 's')).toBe(50_009);
  });
});
