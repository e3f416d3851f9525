import { describe, expect, it } from 'vitest';
import { goFormatFloatF, goParseBool, goParseFloat, goRfc3339, goValToString } from '../../src/sops/goformat.js';

// What sops prints and hashes depends on Go's scalar formats; these pin the ports.

describe('goParseBool (strconv.ParseBool)', () => {
  it.each([
    ['1', true],
    ['t', true],
    ['TRUE', true],
    ['True', true],
    ['0', false],
    ['F', false],
    ['false', false],
    ['yes', undefined],
    ['tRUE', undefined],
    ['', undefined],
  ])('%j is %j', (text, want) => {
    expect(goParseBool(text)).toBe(want);
  });
});

describe('goParseFloat (strconv.ParseFloat)', () => {
  it.each([
    ['1.5', 1.5],
    ['-2', -2],
    ['1e3', 1000],
    ['1.', 1],
    ['.5', 0.5],
    ['+Inf', Infinity],
    ['-infinity', -Infinity],
    ['NaN', NaN],
    ['0x10', undefined],
    ['1_000', undefined],
    ['abc', undefined],
  ])('%j is %j', (text, want) => {
    expect(goParseFloat(text)).toBe(want);
  });
});

describe("goFormatFloatF (strconv.FormatFloat(f, 'f', -1, 64))", () => {
  it.each([
    [1.5, '1.5'],
    [100, '100'],
    [1e21, '1000000000000000000000'],
    [1e-7, '0.0000001'],
    [-1.25e-8, '-0.0000000125'],
    [-0, '-0'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
  ])('%j is %j', (n, want) => {
    expect(goFormatFloatF(n)).toBe(want);
  });
});

describe('goValToString (stores.ValToString)', () => {
  it.each([
    ['text', 'text'],
    [5n, '5'],
    [true, 'true'],
    [1, '1.0'],
    [1.5, '1.5'],
    [0, '0.0'],
    [1e21, '1E+21'],
    [1e-5, '1E-05'],
    [NaN, 'NaN'],
    [-Infinity, '-Inf'],
  ])('%s is %j', (v, want) => {
    expect(goValToString(v)).toBe(want);
  });
});

describe('goRfc3339 (the MAC additional data)', () => {
  it.each([
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05.123456789Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02t03:04:05z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05+00:00', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05-07:00', '2024-01-02T03:04:05-07:00'],
    ['not a time', 'not a time'],
  ])('%j is %j', (text, want) => {
    expect(goRfc3339(text)).toBe(want);
  });
});
