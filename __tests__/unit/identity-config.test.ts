// Issue 51: spec.kubeConfig.configMapRef's ConfigMap read as Flux's generic provider reads it
// (fluxcd/pkg auth/utils/restconfig.go, auth/restconfig.go, auth/generic/provider.go).
import { describe, expect, it } from 'vitest';
import {
  audiencesOf,
  canonicalAddress,
  identityAudiences,
  identityTarget,
  serviceAccountOf,
} from '../../src/cluster/identity-config.js';
import { isUserError } from '../../src/util/user-error.js';

const W = 'spec.kubeConfig.configMapRef: ConfigMap apps/edge';
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('canonicalAddress (Flux: https://<lower-case host>:<port>)', () => {
  it.each([
    ['https://edge.example:6443', 'https://edge.example:6443'],
    ['edge.example', 'https://edge.example:443'],
    ['Edge.EXAMPLE:6443', 'https://edge.example:6443'],
    ['https://edge.example/some/path', 'https://edge.example:443'],
    ['https://127.0.0.1:35111', 'https://127.0.0.1:35111'],
    ['https://[::1]:6443', 'https://[::1]:6443'],
  ])('%s → %s', (address, want) => {
    expect(canonicalAddress(address)).toBe(want);
  });

  it.each([
    ['', 'the address is empty'],
    ['http://edge.example', "the address 'http://edge.example' must use https"],
    ['https://u:p@edge.example', "the address 'https://u:p@edge.example' must not hold user info"],
    ['https://exa mple', "the address 'https://exa mple' is not a URL"],
  ])('%j is refused', (address, message) => {
    expect(() => canonicalAddress(address)).toThrow(message);
  });
});

describe('audiencesOf (one a line)', () => {
  it.each([
    ['a', ['a']],
    ['a\nb\n', ['a', 'b']],
    ['  a  \n\n b\r\n', ['a', 'b']],
    ['\n \n', []],
  ])('%j', (text, want) => {
    expect(audiencesOf(text)).toEqual(want);
  });
});

describe('identityTarget', () => {
  it.each([
    [
      'generic: the address is the default audience, as written',
      { provider: 'generic', address: 'Edge.example:6443' },
      {
        provider: 'generic',
        server: 'https://edge.example:6443',
        address: 'Edge.example:6443',
        audiences: ['Edge.example:6443'],
      },
    ],
    [
      'generic: audiences, CA and ServiceAccount',
      {
        provider: 'generic',
        address: 'https://edge.example',
        audiences: 'remote\nother\n',
        'ca.crt': CA,
        serviceAccountName: 'deployer',
        cluster: 'ignored by generic',
        unknown: 'ignored',
      },
      {
        provider: 'generic',
        server: 'https://edge.example:443',
        address: 'https://edge.example',
        audiences: ['remote', 'other'],
        legacyAudiences: true,
        ca: CA,
        serviceAccountName: 'deployer',
      },
    ],
    [
      'generic: blank audiences fall back to the address',
      { provider: 'generic', address: 'https://edge.example', audiences: '\n' },
      {
        provider: 'generic',
        server: 'https://edge.example:443',
        address: 'https://edge.example',
        audiences: ['https://edge.example'],
      },
    ],
  ])('%s', (_, data, want) => {
    expect(identityTarget(data, W)).toEqual(want);
  });

  it.each([
    [{}, `${W} has no key 'provider' (one of generic, aws, azure, gcp)`],
    [{ provider: 'kubernetes' }, `${W}: provider 'kubernetes' is not one of generic, aws, azure, gcp`],
    [
      { provider: 'generic' },
      `${W} has no key 'address' (the API server of the remote cluster; provider generic needs it)`,
    ],
    [{ provider: 'generic', address: 'http://edge' }, `${W}, key 'address': the address 'http://edge' must use https`],
    [{ provider: 'generic', address: 'edge', 'ca.crt': 'not pem' }, `${W}, key 'ca.crt': not a PEM certificate`],
    [
      { provider: 'generic', address: 'edge', serviceAccountName: 'Deployer!' },
      `${W}, key 'serviceAccountName': 'Deployer!' is not a ServiceAccount name`,
    ],
    [
      { provider: 'aws', cluster: 'arn:aws:eks:eu-central-1:123456789012:cluster/prod' },
      `${W}: provider aws is not supported here: it needs EKS: the token exchanged with AWS STS (AssumeRoleWithWebIdentity`,
    ],
    [
      { provider: 'azure' },
      `${W}: provider azure is not supported here: it needs AKS: the token exchanged with Microsoft Entra ID`,
    ],
    [
      { provider: 'gcp' },
      `${W}: provider gcp is not supported here: it needs GKE: the token exchanged with Google STS`,
    ],
  ])('refuses %j', (data, message) => {
    let thrown: unknown;
    try {
      identityTarget(data, W);
    } catch (e) {
      thrown = e;
    }
    expect((thrown as Error).message.startsWith(message)).toBe(true);
    expect(isUserError(thrown)).toBe(true);
  });
});

describe('serviceAccountOf', () => {
  it.each([
    [
      'system:serviceaccount:flux-system:kustomize-controller',
      { namespace: 'flux-system', name: 'kustomize-controller' },
    ],
    ['admin', undefined],
    ['system:serviceaccount:ns', undefined],
    ['system:serviceaccount::name', undefined],
    ['system:node:kwok-node-0', undefined],
  ])('%s', (user, want) => {
    expect(serviceAccountOf(user)).toEqual(want);
  });
});

describe('identityAudiences (Flux v1.10: the ServiceAccount opts in by annotation)', () => {
  const target = identityTarget({ provider: 'generic', address: 'https://edge:6443', audiences: 'legacy' }, W);
  const plain = identityTarget({ provider: 'generic', address: 'https://edge:6443' }, W);
  const P = 'credential.auth.fluxcd.io/provider';
  const A = 'credential.auth.fluxcd.io/audiences';
  it.each<{ why: string; t: typeof target; ann: Record<string, string> | undefined; want: string[]; note: boolean }>([
    { why: 'no annotation: the ConfigMap key', t: target, ann: undefined, want: ['legacy'], note: false },
    { why: 'no key, no annotation: the address', t: plain, ann: {}, want: ['https://edge:6443'], note: false },
    {
      why: 'opted in: the annotation',
      t: target,
      ann: { [P]: 'kubernetes', [A]: 'a, b\nc' },
      want: ['a', 'b', 'c'],
      note: true,
    },
    {
      why: 'opted in without audiences: the address',
      t: plain,
      ann: { [P]: 'kubernetes' },
      want: ['https://edge:6443'],
      note: false,
    },
    {
      why: 'audiences without opting in: the ConfigMap key',
      t: target,
      ann: { [A]: 'x' },
      want: ['legacy'],
      note: false,
    },
  ])('$why', ({ t, ann, want, note }) => {
    const got = identityAudiences(t, t.legacyAudiences === true, ann, W);
    expect(got.audiences).toEqual(want);
    expect(got.note !== undefined).toBe(note);
  });

  it('refuses a credential provider other than kubernetes, naming it', () => {
    let err: unknown;
    try {
      identityAudiences(plain, false, { [P]: 'spiffe' }, W);
    } catch (e) {
      err = e;
    }
    expect(isUserError(err)).toBe(true);
    expect((err as Error).message).toContain('"spiffe" is not supported');
  });
});
