import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { classifySecretKeys, maskLines } from '../../src/sops/keys.js';
import { decryptionDisabled, isEncryptedResource, stillEncrypted } from '../../src/sops/resources.js';

const obj = (extra: Record<string, unknown>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'n', ...(annotations ? { annotations } : {}) },
  ...extra,
});

describe('classifySecretKeys (Flux decryption Secret entries)', () => {
  it('sorts entries by name, ignoring unknown ones', () => {
    expect(
      classifySecretKeys({
        'a.agekey': 'AGE-1',
        'b.agekey': 'AGE-2',
        'team.asc': 'PGP',
        'sops.vault-token': '  hvs.token \n',
        'sops.aws-kms': 'aws',
        'sops.azure-kv': 'az',
        'sops.gcp-kms': 'gcp',
        'README.md': 'ignored',
      }),
    ).toEqual({
      age: ['AGE-1', 'AGE-2'],
      pgp: ['PGP'],
      vaultToken: 'hvs.token',
      awsKms: 'aws',
      azureKv: 'az',
      gcpKms: 'gcp',
    });
  });
});

describe('maskLines', () => {
  it.each([
    [
      '# created: 2026\n# public key: age1xyz\nAGE-SECRET-KEY-1ABCDEF\n',
      ['# created: 2026\n# public key: age1xyz\nAGE-SECRET-KEY-1ABCDEF', 'AGE-SECRET-KEY-1ABCDEF'],
    ],
    ['short', []],
    ['', []],
  ])('%j', (text, want) => {
    const got: string[] = [];
    maskLines(text, (s) => got.push(s));
    expect(got).toEqual(want);
  });
});

describe('encrypted resources', () => {
  it.each([
    { why: 'sops metadata with a MAC', o: obj({ sops: { mac: 'ENC[AES256_GCM,data:x]' } }), encrypted: true },
    { why: 'an empty MAC', o: obj({ sops: { mac: '' } }), encrypted: false },
    { why: 'no sops field', o: obj({ data: {} }), encrypted: false },
    { why: 'any kind', o: { ...obj({ sops: { mac: 'ENC[x]' } }), kind: 'ConfigMap' }, encrypted: true },
  ])('$why → $encrypted', ({ o, encrypted }) => {
    expect(isEncryptedResource(o)).toBe(encrypted);
  });

  it.each([
    [{ 'kustomize.toolkit.fluxcd.io/decrypt': 'Disabled' }, true],
    [{ 'kustomize.toolkit.fluxcd.io/decrypt': 'disabled' }, true],
    [{ 'kustomize.toolkit.fluxcd.io/decrypt': 'Enabled' }, false],
    [undefined, false],
  ])('decrypt annotation %j → disabled %s (case-insensitive, as Flux)', (annotations, want) => {
    expect(decryptionDisabled(obj({}, annotations))).toBe(want);
  });

  it('the guard names each still-encrypted object with Flux’s hint, skipping opted-out ones', () => {
    const messages = stillEncrypted([
      obj({ sops: { mac: 'ENC[x]' } }),
      { ...obj({ sops: { mac: 'ENC[x]' } }), kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' } },
      obj({ sops: { mac: 'ENC[x]' } }, { 'kustomize.toolkit.fluxcd.io/decrypt': 'disabled' }),
      obj({ data: {} }),
    ]);
    expect(messages).toEqual([
      'Secret/n/s is SOPS encrypted, configuring decryption is required for this secret to be reconciled (set spec.decryption, or give the sops-age-key / sops-pgp-key input)',
      'ConfigMap/n/c is SOPS encrypted, configuring decryption is required for this resource to be reconciled (set spec.decryption, or give the sops-age-key / sops-pgp-key input)',
    ]);
  });
});
