import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { substituteObjects } from '../../src/substitute/objects.js';
import { mergeVariables, parseVarFlags, parseVarsInput } from '../../src/substitute/variables.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

// Flux accepts any name matching ^[_[:alpha:]][_[:alpha:][:digit:]]*$, so these are ordinary
// variables there; a plain JS object would turn `__proto__` into a prototype change and drop it.
const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

const cm = (value: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n' },
  data: { v: value },
});

describe('variable names that are Object.prototype members', () => {
  it.each(NAMES)('--var %s=x is kept and substituted', (name) => {
    const flags = parseVarFlags([`${name}=x`]);
    expect(Object.entries(flags)).toEqual([[name, 'x']]);
    const vars = mergeVariables([{ source: '--var', vars: flags }]);
    expect([...vars]).toEqual([[name, 'x']]);
    const [out] = substituteObjects([cm(`\${${name}}`)], vars, { strict: true, strategy: 'WithVariables' });
    expect(out!['data']).toEqual({ v: 'x' });
  });

  it.each(NAMES)('the vars input %s: x is kept', (name) => {
    expect(Object.entries(parseVarsInput(`${name}: x\nother: y\n`, 'vars'))).toEqual([
      [name, 'x'],
      ['other', 'y'],
    ]);
  });

  it.each(NAMES)('an unset ${%s} is not taken from Object.prototype', (name) => {
    const vars = mergeVariables([{ source: '--var', vars: parseVarFlags(['other=1']) }]);
    expect(() => substituteObjects([cm(`\${${name}}`)], vars, { strict: true, strategy: 'WithVariables' })).toThrow(
      name,
    );
  });
});

describe('hostile --var flags and vars inputs', () => {
  it.each([
    { flags: ['a-b=x'], error: "--var a-b=x: 'a-b' var name is invalid" },
    { flags: ['1a=x'], error: "--var 1a=x: '1a' var name is invalid" },
    { flags: ['=x'], error: '--var =x: expected name=value' },
    { flags: ['a\0b=x'], error: "'a\\u0000b' var name is invalid" },
  ])('$flags', ({ flags, error }) => {
    expect(() => parseVarFlags(flags)).toThrow(error);
  });

  it('a repeated --var: the last one wins', () => {
    expect(parseVarFlags(['a=1', 'a=2'])).toEqual({ a: '2' });
  });

  it.each([
    {
      text: 'a: 1\na: 2\n',
      error: 'input "vars": not valid YAML or JSON: key "a" appears twice in one mapping (line 2)',
    },
    {
      text: `a: ${'['.repeat(3000)}${']'.repeat(3000)}\n`,
      error: 'input "vars": not valid YAML or JSON: nested more than',
    },
    { text: 'a: 1\n---\nb: 2\n', error: 'input "vars": not valid YAML or JSON: holds 2 YAML documents' },
  ])('refuses $text', ({ text, error }) => {
    expect(() => parseVarsInput(text, 'vars')).toThrow(error);
  });
});

describe('substitution on hostile objects', () => {
  it('substitutes into a 50,000-key ConfigMap without the quadratic unique-keys check', () => {
    const data = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i === 7 ? '${v}' : 'x']));
    const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'n' }, data };
    const [out] = substituteObjects([obj], new Map([['v', 'done']]), { strict: true, strategy: 'WithVariables' });
    expect((out!['data'] as Record<string, string>)['k7']).toBe('done');
  });
});
