// What `build` prints, as `flux build kustomization` prints it (flux2 internal/build: owner labels,
// then maskSopsData): SOPS-encrypted Secret values masked, nothing else.
import { describe, expect, it } from 'vitest';
import { buildOutput, maskSops, SOPS_MASK } from '../../src/build-output.js';
import type { KubeObject } from '../../src/objects/kube.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const MASK = b64(SOPS_MASK);
const sops = { mac: 'ENC[AES256_GCM,data:abc,type:str]', lastmodified: '2026-01-01T00:00:00Z' };
const secret = (fields: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'n' },
  ...fields,
});
const encryptedFile = 'password: ENC[AES256_GCM,data:x,type:str]\nsops:\n    mac: ENC[AES256_GCM,data:y]\n';

describe('maskSops', () => {
  it.each([
    {
      why: 'an encrypted Secret manifest: every value masked, its sops map dropped',
      input: secret({ sops, data: { a: 'RU5DWy4uLl0=' }, stringData: { b: 'ENC[AES256_GCM,data:z]', c: 'plain' } }),
      want: secret({ data: { a: MASK }, stringData: { b: SOPS_MASK, c: SOPS_MASK } }),
    },
    {
      why: 'an encrypted dockerconfigjson Secret: each value a JSON object holding the mask',
      input: secret({ sops, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'RU5D' } }),
      want: secret({
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64('{"mask":"**SOPS**"}') },
      }),
    },
    {
      why: 'a Secret written in clear: printed as it is (Flux masks nothing of it)',
      input: secret({ data: { a: b64('hunter2') }, stringData: { b: 'hunter3' } }),
      want: secret({ data: { a: b64('hunter2') }, stringData: { b: 'hunter3' } }),
    },
    {
      why: 'a generated Secret: only the values that are SOPS documents are masked (in stringData with the base64 mask, as Flux)',
      input: secret({
        data: { enc: b64(encryptedFile), plain: b64('x') },
        stringData: { enc: encryptedFile, plain: 'y' },
      }),
      want: secret({ data: { enc: MASK, plain: b64('x') }, stringData: { enc: MASK, plain: 'y' } }),
    },
    {
      why: 'a sops map without an encrypted mac is no SOPS document',
      input: secret({ sops: { mac: 'plain' }, data: { a: b64('v') } }),
      want: secret({ sops: { mac: 'plain' }, data: { a: b64('v') } }),
    },
    {
      why: 'other kinds are left alone, encrypted or not',
      input: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, sops, data: { a: 'ENC[x]' } },
      want: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, sops, data: { a: 'ENC[x]' } },
    },
  ])('$why', ({ input, want }) => {
    const before = structuredClone(input);
    expect(maskSops(input)).toEqual(want);
    expect(input).toEqual(before);
  });
});

describe('buildOutput', () => {
  const owner = { name: 'apps', namespace: 'flux-system' };
  const labels = { 'kustomize.toolkit.fluxcd.io/name': 'apps', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };

  it.each([
    { showSecrets: false, data: { a: MASK } },
    { showSecrets: true, data: { a: 'RU5D' } },
  ])('adds the owner labels; masks SOPS values unless showSecrets ($showSecrets)', ({ showSecrets, data }) => {
    const obj = secret({ sops, data: { a: 'RU5D' } });
    obj.metadata.labels = { team: 'x' };
    const [out] = buildOutput([obj], owner, showSecrets);
    expect(out?.metadata.labels).toEqual({ team: 'x', ...labels });
    expect(out?.['data']).toEqual(data);
  });
});
