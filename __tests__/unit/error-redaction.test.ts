// API error texts about objects holding secret-derived values (src/ssa/error-redaction.ts): the
// values are redacted in any run, and in an untrusted run no value the server quoted is shown.
import { describe, expect, it } from 'vitest';
import { ApiError, apiErrorFrom } from '../../src/cluster/errors.js';
import {
  HIDDEN_VALUE,
  hideQuotedValues,
  redactError,
  redactShown,
  redactValues,
} from '../../src/ssa/error-redaction.js';
import { messageOf } from '../../src/ssa/write.js';
import type { KubeObject } from '../../src/objects/kube.js';

const H = HIDDEN_VALUE;

describe('hideQuotedValues', () => {
  it.each([
    [
      'an enum value, the supported values kept',
      'spec.ports[0].protocol: Unsupported value: "hun": supported values: "SCTP", "TCP", "UDP"',
      `spec.ports[0].protocol: Unsupported value: ${H}: supported values: "SCTP", "TCP", "UDP"`,
    ],
    [
      'a label value, the validation hint kept',
      `metadata.labels: Invalid value: "ab!": a valid label must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      `metadata.labels: Invalid value: ${H}: a valid label must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    ],
    [
      'an unquoted number',
      'spec.replicas: Invalid value: -123: must be greater than or equal to 0',
      `spec.replicas: Invalid value: ${H}: must be greater than or equal to 0`,
    ],
    [
      'a value too long',
      'metadata.annotations: Invalid value: "xyzzy-long": must be no more than 63 characters',
      `metadata.annotations: Invalid value: ${H}: must be no more than 63 characters`,
    ],
    [
      'a strconv error',
      'strconv.ParseInt: parsing "k3y": invalid syntax',
      `strconv.ParseInt: parsing ${H}: invalid syntax`,
    ],
    ['an escaped quote inside the value', 'unknown field "a\\"b": rejected', `unknown field ${H}: rejected`],
    [
      'a JSON syntax error quoting one character',
      "invalid character 'q' looking for beginning of value",
      `invalid character ${H} looking for beginning of value`,
    ],
    [
      'a quantity, its regular expression kept',
      'quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\': "1zz"',
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${H}`,
    ],
    [
      'several values in one message',
      'a: Invalid value: "s3c": x, b: Duplicate value: "r3t"',
      `a: Invalid value: ${H}: x, b: Duplicate value: ${H}`,
    ],
    [
      'a text without values',
      '.spec.replicas: expected numeric (int or float), got string',
      '.spec.replicas: expected numeric (int or float), got string',
    ],
    ['an apostrophe inside a word', "the object's field is wrong", "the object's field is wrong"],
    [
      'a type-conversion error: a decrypted number where a string belongs',
      'failed to create typed patch object (n/s1; /v1, Kind=Secret): .data.port: expected string, got &value.valueUnstructured{Value:443}',
      `failed to create typed patch object (n/s1; /v1, Kind=Secret): .data.port: expected string, got ${H}`,
    ],
    [
      'a type-conversion error: a value where a list belongs',
      '.spec.ports: expected list, got &{qx}',
      `.spec.ports: expected list, got ${H}`,
    ],
    [
      'a type-conversion error: a value where a map belongs, braces inside',
      '.data: expected map, got &{q}x{z}',
      `.data: expected map, got ${H}x{z}`,
    ],
    [
      'a type-conversion error: a list printed by Go',
      '.spec.ports[0].name: expected string, got &value.valueUnstructured{Value:[]interface {}{"qxz", "}"}}: x',
      `.spec.ports[0].name: expected string, got ${H}: x`,
    ],
    [
      "a list element's keys in a field path",
      '.spec.ports[port=443,protocol="TCP"].name: expected string',
      `.spec.ports[port=${H},protocol=${H}].name: expected string`,
    ],
    ['an index in a field path stays', 'spec.ports[0].name: expected string', 'spec.ports[0].name: expected string'],
  ])('%s', (_what, text, want) => {
    expect(hideQuotedValues(text)).toBe(want);
  });
});

describe('redactValues (any run)', () => {
  it.each([
    ['a long value everywhere', 'bad value k3ysecret here', ['k3ysecret'], 'bad value *** here'],
    ['a short value quoted', 'Unsupported value: "hun": supported', ['hun'], 'Unsupported value: "***": supported'],
    ['a short value unquoted after the lead', 'Invalid value: 123: must be', ['123'], 'Invalid value: ***: must be'],
    ['a short value inside words stays', 'supported values: "TCP"', ['CP'], 'supported values: "TCP"'],
    ['single-quoted', "invalid character 'x'", ['x'], "invalid character '***'"],
    ['nothing to redact', 'all fine', [], 'all fine'],
    [
      'a short decrypted number in a type-conversion error',
      '.data.port: expected string, got &value.valueUnstructured{Value:443}',
      ['443'],
      '.data.port: expected string, got &value.valueUnstructured{Value:***}',
    ],
    [
      'a short value where a list belongs',
      '.spec.ports: expected list, got &{qx}',
      ['qx'],
      '.spec.ports: expected list, got &{***}',
    ],
    [
      "a short value as a list element's key",
      '.spec.ports[port=443,protocol="TCP"].name: bad',
      ['443'],
      '.spec.ports[port=***,protocol="TCP"].name: bad',
    ],
    ['a short number elsewhere stays', 'took 443 ms, got &{4430}', ['443'], 'took 443 ms, got &{4430}'],
  ])('%s', (_what, text, values, want) => {
    expect(redactValues(text, values)).toBe(want);
  });
});

describe('redactShown (values substituted from ConfigMaps, as Flux redacts them)', () => {
  it.each([
    ['a long value quoted', 'x: Invalid value: "prod-eu-1": bad', ['prod-eu-1'], 'x: Invalid value: "***": bad'],
    [
      'a long value elsewhere stays',
      'PATCH /namespaces/prod-eu-1/x: bad',
      ['prod-eu-1'],
      'PATCH /namespaces/prod-eu-1/x: bad',
    ],
    [
      'unquoted after the lead',
      'replicas: Invalid value: 70000: must be',
      ['70000'],
      'replicas: Invalid value: ***: must be',
    ],
    [
      'a conversion value',
      '.data.n: expected string, got &value.valueUnstructured{Value:70000}',
      ['70000'],
      '.data.n: expected string, got &value.valueUnstructured{Value:***}',
    ],
    ['the longer of two overlapping values first', 'a: "eu-1-b"', ['eu-1', 'eu-1-b'], 'a: "***"'],
    ['an empty value does nothing', 'a: ""', [''], 'a: ""'],
  ])('%s', (_what, text, values, want) => {
    expect(redactShown(text, values)).toBe(want);
  });

  it('redactError applies them after the secret values, in any run', () => {
    const err = new ApiError(422, 'Invalid', 'x: Unsupported value: "eu-west": supported values: "a"');
    expect(redactError(err, { values: [], hideQuoted: false, shown: ['eu-west'] })).toBe(
      'x: Unsupported value: "***": supported values: "a"',
    );
  });
});

describe('redactError', () => {
  const status = (message: string, causes: { field?: string; message?: string; reason?: string }[]) =>
    apiErrorFrom(
      422,
      JSON.stringify({
        kind: 'Status',
        reason: 'Invalid',
        message,
        details: { kind: 'Service', name: 'web', causes },
      }),
      'PATCH /api/v1/namespaces/n/services/web',
    );

  it('renders field and reason from the Status causes, also replacing the top-level message', () => {
    const err = status(
      'Service "web" is invalid: spec.ports[0].protocol: Unsupported value: "hun": supported values: "TCP"',
      [
        {
          field: 'spec.ports[0].protocol',
          reason: 'FieldValueNotSupported',
          message: 'Unsupported value: "hun": supported values: "TCP"',
        },
      ],
    );
    const out = redactError(err, { values: [], hideQuoted: true });
    expect(out).toBe(
      `PATCH /api/v1/namespaces/n/services/web: Service "web" is invalid: spec.ports[0].protocol: Unsupported value: ${H}: supported values: "TCP"`,
    );
    expect(out).not.toContain('hun');
  });

  it('a cause without a message falls back to its reason', () => {
    const err = status('Service "web" is invalid: spec.x: "pw1"', [{ field: 'spec.x', reason: 'FieldValueInvalid' }]);
    expect(redactError(err, { values: [], hideQuoted: true })).toContain('spec.x: FieldValueInvalid');
  });

  it.each([
    ['a Status without causes', new ApiError(500, 'InternalError', 'PATCH x: failed: parsing "ab1": invalid syntax')],
    ['a plain Error', new Error('conversion of "ab1" failed')],
    ['a string', 'value "ab1" refused'],
  ])('%s: quoted values hidden', (_what, err) => {
    const out = redactError(err, { values: [], hideQuoted: true });
    expect(out).not.toContain('ab1');
    expect(out).toContain(H);
  });

  it('where values are hidden, a 3-character secret value goes even unquoted (a webhook echoing it)', () => {
    const err = new Error('admission webhook "v.example" denied the request: bad host qxz here');
    expect(redactError(err, { values: ['qxz'], hideQuoted: true })).toBe(
      `admission webhook ${H} denied the request: bad host *** here`,
    );
    expect(redactError(err, { values: ['qxz'], hideQuoted: false })).toContain('qxz');
  });

  it('outside an untrusted run only the secret values go', () => {
    const err = new ApiError(422, 'Invalid', 'x: Unsupported value: "hun": supported values: "TCP"');
    expect(redactError(err, { values: ['hun'], hideQuoted: false })).toBe(
      'x: Unsupported value: "***": supported values: "TCP"',
    );
    expect(redactError(err, { values: ['zzz'], hideQuoted: false })).toContain('"hun"');
  });
});

describe('messageOf', () => {
  const cm = (data: Record<string, string>, kind = 'ConfigMap'): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name: 'a', namespace: 'n' },
    data,
  });
  const err = new ApiError(422, 'Invalid', 'PATCH x: data.k: Invalid value: "kx9": bad; other "pub"');

  it.each([
    ['untrusted, secret paths', cm({ k: 'kx9' }), { paths: ['/data/k'], untrusted: true }, ['kx9', 'pub'], []],
    ['untrusted, no secret paths: the server text stays', cm({ k: 'kx9' }), { untrusted: true }, [], ['kx9', 'pub']],
    ['trusted, secret paths: only the value', cm({ k: 'kx9' }), { paths: ['/data/k'] }, ['kx9'], ['pub']],
    [
      'untrusted, a Secret',
      cm({ k: Buffer.from('kx9').toString('base64') }, 'Secret'),
      { untrusted: true },
      ['kx9', 'pub'],
      [],
    ],
    ['substituted values, trusted', cm({ k: 'kx9' }), { substituted: ['kx9'] }, ['kx9'], ['pub']],
  ])('%s', (_what, obj, secrets, gone, kept) => {
    const out = messageOf(err, obj, secrets);
    for (const g of gone) expect(out).not.toContain(g);
    for (const k of kept) expect(out).toContain(k);
  });
});
