// Substitution provenance: every field into which a variable of a secret layer was substituted, through
// any envsubst function, is a secret path; the transformed text is reported for masking.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { substituteObjects } from '../../src/substitute/objects.js';
import { mergeVariables, secretNames, type VariableLayer } from '../../src/substitute/variables.js';

const PW = 'db-Pass-w0rd';
const cm = (data: Record<string, unknown>, meta: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...meta },
  data,
});

function run(objects: KubeObject[]) {
  const layers: VariableLayer[] = [
    { source: 'input "vars"', vars: { env: 'prod', pw: 'overridden' } },
    { source: 'input "secret-vars"', vars: { pw: PW, other: 'zz' }, secret: true },
    { source: 'spec.postBuild.substitute', vars: { other: 'not-secret' } },
  ];
  const vars = mergeVariables(layers);
  const paths: string[][] = objects.map(() => []);
  const seen: string[] = [];
  const out = substituteObjects(objects, vars, {
    strict: false,
    strategy: 'WithVariables',
    secretNames: secretNames(layers),
    onSecretPaths: (i, p) => {
      paths[i] = p;
    },
    onSecret: (v) => {
      seen.push(v);
    },
  });
  return { out, paths, seen };
}

describe('secret provenance of substituted fields', () => {
  it.each<{ why: string; data: Record<string, unknown>; paths: string[]; seen?: string[] }>([
    { why: 'a plain reference', data: { a: '${pw}', b: '${env}' }, paths: ['/data/a'], seen: [PW] },
    { why: 'upper-cased', data: { a: '${pw^^}' }, paths: ['/data/a'], seen: [PW.toUpperCase()] },
    { why: 'a substring', data: { a: 'x-${pw:0:4}-y' }, paths: ['/data/a'], seen: ['db-P'] },
    { why: 'a replacement', data: { a: '${pw/Pass/Word}' }, paths: ['/data/a'], seen: ['db-Word-w0rd'] },
    { why: 'a length', data: { a: '${#pw}' }, paths: ['/data/a'] },
    { why: 'in a default', data: { a: '${unset:-${pw}}' }, paths: ['/data/a'], seen: [PW] },
    { why: 'a later non-secret layer wins', data: { a: '${other}' }, paths: [] },
    {
      why: 'multi-line block scalar',
      data: { a: 'line1\npass=${pw}\nline3\n', b: 'plain' },
      paths: ['/data/a'],
    },
    { why: 'two fields', data: { a: '${pw}', b: 'k ${pw,,}' }, paths: ['/data/a', '/data/b'] },
    {
      why: 'after multi-byte text (byte offsets mapped to characters)',
      data: { a: '日'.repeat(40), b: 'x', c: 'ü-${pw}', d: '${env}' },
      paths: ['/data/c'],
    },
  ])('$why', ({ data, paths, seen }) => {
    const res = run([cm(data)]);
    expect(res.paths[0]).toEqual(paths);
    if (seen) expect(res.seen).toEqual(expect.arrayContaining(seen));
  });

  it('a secret in a label', () => {
    const res = run([cm({}, { labels: { team: '${pw}' } })]);
    expect(res.paths[0]).toEqual(['/metadata/labels/team']);
  });

  it('a secret value that breaks the YAML is not quoted in the error', () => {
    const layers: VariableLayer[] = [
      { source: 'input "secret-vars"', vars: { pw: '*alias-secret-value' }, secret: true },
    ];
    const run = () =>
      substituteObjects([cm({ a: '${pw}' })], mergeVariables(layers), {
        strict: false,
        strategy: 'WithVariables',
        secretNames: secretNames(layers),
      });
    expect(run).toThrow(/ConfigMap\/n\/c: postBuild substitution made invalid YAML .*\/data\/a/);
    expect(run).not.toThrow(/alias-secret/);
  });
});

describe('an untrusted tree: secrets only in values', () => {
  const layers: VariableLayer[] = [
    { source: 'Secret kube-system/db-admin', vars: { password: PW }, secret: true },
    { source: 'spec.postBuild.substitute', vars: { env: 'prod' } },
  ];
  const substitute = (obj: KubeObject, secretsOnlyInValues = true) =>
    substituteObjects([obj], mergeVariables(layers), {
      strict: true,
      strategy: 'WithVariables',
      secretNames: secretNames(layers),
      secretsOnlyInValues,
    });

  it.each<[string, KubeObject, string | undefined]>([
    ['a value', cm({ a: '${password}' }), undefined],
    ['a slice in a value', cm({ a: 'x-${password:0:3}' }), undefined],
    ['a plain variable in the name', cm({ a: 'b' }, { name: 'c-${env}' }), undefined],
    [
      'a slice in the name',
      cm({ a: 'b' }, { name: 'p0-${password:0:3}' }),
      'a secret variable went into metadata.name',
    ],
    [
      'the namespace',
      cm({ a: 'b' }, { namespace: '${password:3:3}' }),
      'a secret variable went into metadata.namespace',
    ],
    ['a data key', cm({ 'k-${password:0:3}': 'v' }), 'a secret variable went into a key under /data'],
    ['a label key', cm({ a: 'b' }, { labels: { '${password:1:2}': 'x' } }), 'a key under /metadata/labels'],
  ])('%s', (_, obj, refused) => {
    if (refused === undefined) {
      expect(() => substitute(obj)).not.toThrow();
      return;
    }
    let message = '';
    try {
      substitute(obj);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(refused);
    expect(message).toContain('values from Secrets may only fill in field values, never names or keys');
    // No 3-character piece of the value, outside the expressions the message quotes from the manifest.
    const said = message.replace(/\$\{[^}]*\}/g, '');
    for (let i = 0; i + 3 <= PW.length; i++) expect(said).not.toContain(PW.slice(i, i + 3));
    // A trusted tree (an apply after review) substitutes as Flux does.
    expect(() => substitute(obj, false)).not.toThrow();
  });
});
