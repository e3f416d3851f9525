import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { structureChange, substituteObjects, substitutionDisabled } from '../../src/substitute/objects.js';
import { mergeVariables, parseVarFlags, parseVarsInput, type VariableLayer } from '../../src/substitute/variables.js';

const cm = (data: Record<string, unknown>, meta: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...meta },
  data,
});

describe('mergeVariables', () => {
  it.each([
    {
      why: 'later layers win',
      layers: [
        { source: 'a', vars: { x: '1', y: '1' } },
        { source: 'b', vars: { x: '2' } },
      ],
      want: { x: '2', y: '1' },
    },
    {
      why: 'newlines are removed from values (Flux)',
      layers: [{ source: 'a', vars: { x: 'line1\nline2\n' } }],
      want: { x: 'line1line2' },
    },
    {
      why: 'carriage returns stay (Flux strips \\n only)',
      layers: [{ source: 'a', vars: { x: 'a\r\nb' } }],
      want: { x: 'a\rb' },
    },
    { why: 'empty values are kept', layers: [{ source: 'a', vars: { x: '' } }], want: { x: '' } },
  ])('$why', ({ layers, want }) => {
    expect(Object.fromEntries(mergeVariables(layers as VariableLayer[]))).toEqual(want);
  });
  it.each(['1abc', 'my-var', 'a.b', 'ünïcode', ''])('refuses the name %j, naming the source', (name) => {
    expect(() => mergeVariables([{ source: 'ConfigMap flux-system/vars', vars: { [name]: 'v' } }])).toThrow(
      `ConfigMap flux-system/vars: '${name}' var name is invalid`,
    );
  });
});

describe('parseVarsInput', () => {
  it.each([
    ['', {}],
    ['a: b\nn: 3\nt: true\nz:', { a: 'b', n: '3', t: 'true', z: '' }],
    ['{"a": "b", "n": 1.5}', { a: 'b', n: '1.5' }],
  ])('%j', (text, want) => {
    expect(parseVarsInput(text, 'vars')).toEqual(want);
  });
  it.each([
    ['- a\n- b', 'input "vars": expected a map of variable names to values'],
    ['a: [1, 2]', 'input "vars": a: expected a text, number or boolean value, got a list'],
    ['a: {b: c}', 'input "vars": a: expected a text, number or boolean value, got a map'],
    ['a: [1', 'input "vars": not valid YAML or JSON'],
  ])('refuses %j', (text, error) => {
    expect(() => parseVarsInput(text, 'vars')).toThrow(error);
  });
});

describe('parseVarFlags', () => {
  it('splits at the first =', () => {
    expect(parseVarFlags(['a=b', 'url=http://x?y=z', 'empty='])).toEqual({ a: 'b', url: 'http://x?y=z', empty: '' });
  });
  it.each(['novalue', '=x'])('refuses %j', (flag) => {
    expect(() => parseVarFlags([flag])).toThrow('expected name=value');
  });
});

describe('substitutionDisabled', () => {
  it.each([
    [{ labels: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } }, true],
    [{ annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } }, true],
    [{ annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'Disabled' } }, false],
    [{ annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'enabled' } }, false],
    [{}, false],
  ])('%j → %s (exact, case-sensitive match)', (meta, want) => {
    expect(substitutionDisabled(cm({}, meta))).toBe(want);
  });
});

describe('substituteObjects', () => {
  const vars = new Map([
    ['env', 'prod'],
    ['replicas', '3'],
    ['list', '[a, b]'],
    ['pair', 'k: v'],
  ]);
  const opts = { strict: true, strategy: 'WithVariables' as const };

  it.each([
    { why: 'text is filled in', data: { a: 'x-${env}' }, want: { a: 'x-prod' } },
    { why: 'a number-like value becomes a number, as in Flux', data: { a: '${replicas}' }, want: { a: 3 } },
    { why: 'a default applies', data: { a: '${missing:=fallback}' }, want: { a: 'fallback' } },
    { why: '$$ escapes', data: { a: '$${env}' }, want: { a: '${env}' } },
    { why: 'bare $var is left alone', data: { a: '$env' }, want: { a: '$env' } },
    { why: 'keys are substituted too', data: { 'k-${env}': 'v' }, want: { 'k-prod': 'v' } },
  ])('$why', ({ data, want }) => {
    const [out] = substituteObjects([cm(data)], vars, opts);
    expect(out!['data']).toEqual(want);
  });

  it('leaves objects that opt out untouched', () => {
    const obj = cm({ a: '${env}' }, { annotations: { 'kustomize.toolkit.fluxcd.io/substitute': 'disabled' } });
    expect(substituteObjects([obj], vars, opts)[0]).toBe(obj);
  });

  it.each([
    { strategy: 'WithVariables' as const, want: '${x:=d}' },
    { strategy: 'Always' as const, want: 'd' },
  ])('with no variables, strategy $strategy gives $want', ({ strategy, want }) => {
    const [out] = substituteObjects([cm({ a: '${x:=d}' })], new Map(), { strict: true, strategy });
    expect(out!['data']).toEqual({ a: want });
  });

  it.each([
    {
      why: 'strict: an unset variable names the object',
      data: { a: '${nope}' },
      strict: true,
      error: 'ConfigMap/n/c: postBuild substitution failed: variable not set (strict mode): "nope"',
    },
    {
      why: 'a value that turns a scalar into a list',
      data: { a: '${list}' },
      strict: true,
      error: "ConfigMap/n/c: postBuild substitution changed the object's structure at /data/a",
    },
    {
      why: 'a value with ": " that breaks the YAML',
      data: { a: '${pair}' },
      strict: true,
      error: 'ConfigMap/n/c: postBuild substitution made invalid YAML',
    },
  ])('refuses $why', ({ data, strict, error }) => {
    expect(() => substituteObjects([cm(data)], vars, { strict, strategy: 'WithVariables' })).toThrow(error);
  });

  it('non-strict: an unset variable becomes empty', () => {
    const [out] = substituteObjects([cm({ a: 'x${nope}y' })], vars, { strict: false, strategy: 'WithVariables' });
    expect(out!['data']).toEqual({ a: 'xy' });
  });
});

describe('structureChange', () => {
  it.each([
    { before: { a: 'x' }, after: { a: 3 }, want: undefined },
    { before: { a: ['x'] }, after: { a: ['x', 'y'] }, want: '/a' },
    { before: { a: 'x' }, after: { a: { b: 1 } }, want: '/a' },
    { before: { a: 'x' }, after: { a: 'x', b: 'y' }, want: '/' },
    { before: { 'k-${v}': 1 }, after: { 'k-1': 1 }, want: undefined },
    { before: { k: 1 }, after: { j: 1 }, want: '/' },
    { before: { a: { 'b/c': 'x' } }, after: { a: { 'b/c': ['x'] } }, want: '/a/b~1c' },
  ])('$before → $after: $want', ({ before, after, want }) => {
    expect(structureChange(before, after, '')).toBe(want);
  });
});
