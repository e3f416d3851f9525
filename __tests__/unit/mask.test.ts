import { describe, expect, it } from 'vitest';
import { scrub, secretValues } from '../../src/objects/secret.js';

const secret = (fields: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's' },
  ...fields,
});

describe('secretValues', () => {
  it.each([
    {
      why: 'data values, encoded and decoded',
      obj: secret({ data: { p: Buffer.from('s3cr3t!').toString('base64') } }),
      want: ['czNjcjN0IQ==', 's3cr3t!'],
    },
    { why: 'stringData values as they are', obj: secret({ stringData: { p: 'plain-value' } }), want: ['plain-value'] },
    {
      why: 'binary data is not decoded',
      obj: secret({ data: { b: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') } }),
      want: ['//4A'],
    },
    { why: 'empty values are ignored', obj: secret({ data: { e: '' } }), want: [] },
    {
      why: 'a value decrypted as a number or a boolean, as its text',
      obj: secret({ stringData: { port: 719, on: true }, data: { n: 86753091 } }),
      want: ['86753091', '719', 'true'],
    },
    {
      why: 'not a Secret',
      obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { p: 'x' } },
      want: [],
    },
  ])('$why', ({ obj, want }) => {
    expect(secretValues(obj)).toEqual(want);
  });
});

describe('scrub', () => {
  it.each([
    ['field is invalid: "hunter2"', ['hunter2'], 'field is invalid: "***"'],
    ['a hunter2 b hunter2', ['hunter2'], 'a *** b ***'],
    ['prefix: abcdef', ['abc', 'abcdef'], 'prefix: ***'],
    ['short ab stays', ['ab'], 'short ab stays'],
    ['nothing to hide', [], 'nothing to hide'],
  ])('%s', (text, values, want) => {
    expect(scrub(text, values)).toBe(want);
  });
});
