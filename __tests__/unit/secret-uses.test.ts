// Issue 47, class 3: one base rule for every Secret and secret a Kustomization makes the run use
// (substituteFrom, the remote kubeconfig, decryption keys, secret-vars), as pure tables; and the base
// commit of an untrusted run found in a real git (class 4): a commit of the default branch, fetched
// when the checkout lacks it, never a push's before.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretUseScopesIn, useVerdict, usesOf, type SecretUse } from '../../src/source/secret-uses.js';
import { resolveBase } from '../../src/source/trust-base.js';
import { refusedUse } from '../../src/reconcile/secret-trust.js';
import type { TreeTrust } from '../../src/source/trust.js';
import { commitAll, gitIn } from '../helpers/git-repos.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const ks = (ns: string | undefined, name: string, spec: string) =>
  `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ${name}
${ns ? `  namespace: ${ns}\n` : ''}spec:
  path: ./x
${spec}`;

/** The trust of a preview whose base commit holds `files`. */
const trustOf = (...files: string[]): TreeTrust => ({
  trusted: false,
  reason: 'this run is a preview, whose tree is not trusted',
  base: new Set(files.flatMap(secretUseScopesIn)),
});

const KUBECONFIG = '  kubeConfig:\n    secretRef: {name: prod-kubeconfig}\n';
const KUBECONFIG_KEY = '  kubeConfig:\n    secretRef: {name: prod-kubeconfig, key: value.yaml}\n';
const IDENTITY = '  kubeConfig:\n    configMapRef: {name: prod-identity}\n';
const DECRYPT = '  decryption:\n    provider: sops\n    secretRef: {name: sops-age}\n';
const POSTBUILD = '  postBuild:\n    substitute: {a: b}\n';

describe('a use is allowed only when the base commit’s Kustomization of that name uses it the same way', () => {
  const kube = (secret: string, key?: string): SecretUse => ({ use: 'kubeConfig', secret, ...(key ? { key } : {}) });
  const decrypt = (secret?: string, sa?: string): SecretUse => ({
    use: 'decryption',
    decryption: {
      provider: 'sops',
      ...(secret ? { secretRef: { name: secret } } : {}),
      ...(sa ? { serviceAccountName: sa } : {}),
    },
  });
  it.each<[string, string[], string, string, SecretUse, boolean]>([
    ['kubeConfig: the same Secret', [ks('apps', 'web', KUBECONFIG)], 'apps', 'web', kube('prod-kubeconfig'), true],
    [
      'kubeConfig: a new Kustomization',
      [ks('apps', 'web', KUBECONFIG)],
      'apps',
      'evil',
      kube('prod-kubeconfig'),
      false,
    ],
    [
      'kubeConfig: another namespace',
      [ks('apps', 'web', KUBECONFIG)],
      'flux-system',
      'web',
      kube('prod-kubeconfig'),
      false,
    ],
    [
      'kubeConfig: a key the base does not name',
      [ks('apps', 'web', KUBECONFIG)],
      'apps',
      'web',
      kube('prod-kubeconfig', 'value'),
      false,
    ],
    [
      'kubeConfig: the key the base names',
      [ks('apps', 'web', KUBECONFIG_KEY)],
      'apps',
      'web',
      kube('prod-kubeconfig', 'value.yaml'),
      true,
    ],
    ['kubeConfig: the key dropped', [ks('apps', 'web', KUBECONFIG_KEY)], 'apps', 'web', kube('prod-kubeconfig'), false],
    ['kubeConfig: another Secret', [ks('apps', 'web', KUBECONFIG)], 'apps', 'web', kube('admin-kubeconfig'), false],
    [
      'kubeConfig: the default namespace',
      [ks(undefined, 'web', KUBECONFIG)],
      'flux-system',
      'web',
      kube('prod-kubeconfig'),
      true,
    ],
    // Issue 51: a token of the action's cluster, for the address a ConfigMap of the cluster names.
    ...(
      [
        ['configMapRef: the same ConfigMap', [ks('apps', 'web', IDENTITY)], 'apps', 'web', 'prod-identity', true],
        ['configMapRef: a new Kustomization', [ks('apps', 'web', IDENTITY)], 'apps', 'evil', 'prod-identity', false],
        ['configMapRef: another namespace', [ks('apps', 'web', IDENTITY)], 'team', 'web', 'prod-identity', false],
        ['configMapRef: another ConfigMap', [ks('apps', 'web', IDENTITY)], 'apps', 'web', 'admin-identity', false],
        [
          'configMapRef: where the base has a secretRef',
          [ks('apps', 'web', KUBECONFIG)],
          'apps',
          'web',
          'prod-kubeconfig',
          false,
        ],
        ['configMapRef: where the base has none', [ks('apps', 'web', '')], 'apps', 'web', 'prod-identity', false],
        [
          'configMapRef: the default namespace',
          [ks(undefined, 'web', IDENTITY)],
          'flux-system',
          'web',
          'prod-identity',
          true,
        ],
      ] as const
    ).map(
      ([title, base, ns, name, cm, allowed]) =>
        [title, [...base], ns, name, { use: 'kubeConfigMap', configMap: cm }, allowed] as [
          string,
          string[],
          string,
          string,
          SecretUse,
          boolean,
        ],
    ),
    ['decryption: the same block', [ks('apps', 'web', DECRYPT)], 'apps', 'web', decrypt('sops-age'), true],
    ['decryption: a new Kustomization', [ks('apps', 'web', DECRYPT)], 'apps', 'evil', decrypt('sops-age'), false],
    ['decryption: added where the base has none', [ks('apps', 'web', '')], 'apps', 'web', decrypt('sops-age'), false],
    ['decryption: the Secret changed', [ks('apps', 'web', DECRYPT)], 'apps', 'web', decrypt('sops-gpg'), false],
    [
      'decryption: the Secret dropped (the inputs’ keys)',
      [ks('apps', 'web', DECRYPT)],
      'apps',
      'web',
      decrypt(),
      false,
    ],
    [
      'decryption: a service account added',
      [ks('apps', 'web', DECRYPT)],
      'apps',
      'web',
      decrypt('sops-age', 'kms'),
      false,
    ],
    [
      'decryption: none, as on the base',
      [ks('apps', 'web', '')],
      'apps',
      'web',
      { use: 'decryption', decryption: undefined },
      true,
    ],
    [
      'decryption: none, a new Kustomization',
      [ks('apps', 'web', '')],
      'apps',
      'evil',
      { use: 'decryption', decryption: undefined },
      false,
    ],
    ['secret-vars: postBuild on the base', [ks('apps', 'web', POSTBUILD)], 'apps', 'web', { use: 'secretVars' }, true],
    ['secret-vars: no postBuild on the base', [ks('apps', 'web', '')], 'apps', 'web', { use: 'secretVars' }, false],
    ['secret-vars: a new Kustomization', [ks('apps', 'web', POSTBUILD)], 'apps', 'evil', { use: 'secretVars' }, false],
    [
      'secret-vars: another Kustomization’s name in a v1beta1 file',
      [ks('apps', 'web', POSTBUILD).replace('/v1\n', '/v1beta2\n')],
      'apps',
      'web',
      { use: 'secretVars' },
      true,
    ],
    [
      'substituteFrom: the same Secret',
      [ks('apps', 'web', '  postBuild:\n    substituteFrom: [{kind: Secret, name: db}]\n')],
      'apps',
      'web',
      { use: 'substituteFrom', secret: 'db' },
      true,
    ],
    [
      'substituteFrom: a ConfigMap on the base',
      [ks('apps', 'web', '  postBuild:\n    substituteFrom: [{kind: ConfigMap, name: db}]\n')],
      'apps',
      'web',
      { use: 'substituteFrom', secret: 'db' },
      false,
    ],
    [
      'a ConfigMap named like a Kustomization',
      ['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: apps}\nspec:\n  postBuild: {}\n'],
      'apps',
      'web',
      { use: 'secretVars' },
      false,
    ],
    [
      'a JSON document in a YAML file',
      [
        JSON.stringify({
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'web', namespace: 'apps' },
          spec: { postBuild: {} },
        }),
      ],
      'apps',
      'web',
      { use: 'secretVars' },
      true,
    ],
    [
      'another group’s Kustomization',
      [ks('apps', 'web', POSTBUILD).replace('kustomize.toolkit.fluxcd.io', 'kustomize.config.k8s.io')],
      'apps',
      'web',
      { use: 'secretVars' },
      false,
    ],
  ])('%s', (_, base, ns, name, use, allowed) => {
    const v = useVerdict(ns, name, use, trustOf(...base));
    expect(v.use).toBe(allowed);
    expect(useVerdict(ns, name, use, { trusted: true }).use).toBe(true);
  });

  it('says which Kustomization was refused what, and why', () => {
    const v = useVerdict(
      'apps',
      'evil',
      { use: 'kubeConfig', secret: 'prod-kubeconfig' },
      trustOf(ks('apps', 'web', KUBECONFIG)),
    );
    expect(v).toEqual({
      use: false,
      why: "refused Secret apps/prod-kubeconfig for spec.kubeConfig.secretRef: this run is a preview, whose tree is not trusted, and the base commit's Kustomization apps/evil does not use it (the same Secret and key): secrets are used only as the base branch uses them",
    });
    const token = useVerdict('apps', 'evil', { use: 'kubeConfigMap', configMap: 'edge' }, trustOf());
    expect(token.use ? '' : token.why).toMatch(
      /^refused a ServiceAccount token for the cluster of ConfigMap apps\/edge for spec\.kubeConfig\.configMapRef: .* does not name that ConfigMap in spec\.kubeConfig\.configMapRef: /,
    );
    const vars = useVerdict('apps', 'evil', { use: 'secretVars' }, trustOf());
    expect(vars.use ? '' : vars.why).toMatch(/^refused the workflow's secret-vars for spec\.postBuild: /);
    const keys = useVerdict('apps', 'evil', { use: 'decryption', decryption: undefined }, trustOf());
    expect(keys.use ? '' : keys.why).toMatch(/^refused the workflow's decryption keys \(sops-age-key, sops-pgp-key/);
  });

  it('no base: nothing is used', () => {
    const v = useVerdict('apps', 'web', { use: 'secretVars' }, { trusted: false, reason: 'r', base: { problem: 'p' } });
    expect(v).toEqual({ use: false, why: "refused the workflow's secret-vars for spec.postBuild: r, and p" });
  });

  it('lists the uses of a spec with configMapRef', () => {
    expect(usesOf({ kubeConfig: { configMapRef: { name: 'edge' } } })).toEqual([
      { use: 'kubeConfigMap', configMap: 'edge' },
      { use: 'decryption', decryption: undefined },
    ]);
  });

  it('lists the uses of a spec', () => {
    expect(
      usesOf({
        kubeConfig: { secretRef: { name: 'k', key: 'v' } },
        decryption: { provider: 'sops' },
        postBuild: {
          substitute: {},
          substituteFrom: [
            { kind: 'Secret', name: 's', optional: false },
            { kind: 'ConfigMap', name: 'c', optional: false },
          ],
          substituteStrategy: 'WithVariables',
        },
      }),
    ).toEqual([
      { use: 'kubeConfig', secret: 'k', key: 'v' },
      { use: 'decryption', decryption: { provider: 'sops' } },
      { use: 'substituteFrom', secret: 's' },
      { use: 'secretVars' },
    ]);
  });
});

describe('refusedUse: where the run asks', () => {
  const untrustedTree = { reason: 'this run is a preview, whose tree is not trusted', root: '/nonexistent' };
  it.each([
    // No base commit known: a Kustomization file gets nothing; the path input's is the workflow's own.
    ['a Kustomization file, no base', { untrustedTree }, { kind: 'file', file: 'k.yaml', document: 0 }, true],
    ['the path input, no base', { untrustedTree }, { kind: 'inputs' }, false],
    ['a trusted run', {}, { kind: 'file', file: 'k.yaml', document: 0 }, false],
  ] as const)('%s', async (_, settings, origin, refused) => {
    const why = await refusedUse(settings, { namespace: 'apps', name: 'web', origin }, { use: 'secretVars' });
    expect(why !== undefined).toBe(refused);
    if (refused) expect(why).toContain('the base commit is not known');
  });
});

describe('the base commit, on the default branch', () => {
  /** origin (a bare repository) with main; a clone whose feature branch has two pushes on top. */
  async function repos(): Promise<{ origin: string; clone: string; mainSha: string; first: string; second: string }> {
    const work = await mkdtemp(join(tmpdir(), 'kr-trust-base-'));
    const origin = join(work, 'origin.git');
    const seed = join(work, 'seed');
    gitIn(work, 'init', '-q', '--bare', '-b', 'main', origin);
    gitIn(work, 'init', '-q', '-b', 'main', seed);
    await writeFile(join(seed, 'a.yaml'), 'a: 1\n');
    const mainSha = commitAll(seed, 'main');
    gitIn(seed, 'checkout', '-q', '-b', 'feature');
    await writeFile(join(seed, 'b.yaml'), 'b: 1\n');
    const first = commitAll(seed, 'first push');
    await writeFile(join(seed, 'c.yaml'), 'c: 1\n');
    const second = commitAll(seed, 'second push');
    gitIn(seed, 'push', '-q', origin, 'main', 'feature');
    // The checkout of a push to feature, as actions/checkout makes it: one branch, one commit deep.
    const clone = join(work, 'clone');
    gitIn(work, 'clone', '-q', '--depth=1', '--branch', 'feature', '--single-branch', `file://${origin}`, clone);
    return { origin, clone, mainSha, first, second };
  }

  it('is the merge-base with the default branch, fetched (and deepened) when missing, never the before', async () => {
    const { clone, mainSha, first } = await repos();
    // The push's before (the first push) is what the old rule took: the same pusher wrote it.
    expect(await resolveBase(clone, { onBranch: 'main' })).toEqual({ commit: mainSha });
    expect(await resolveBase(clone, { onBranch: 'main' })).not.toEqual({ commit: first });
  });

  it('a pull request’s base commit is fetched when the checkout lacks it', async () => {
    const { clone, mainSha } = await repos();
    expect(await resolveBase(clone, { base: mainSha })).toEqual({ commit: mainSha });
    expect(gitIn(clone, 'cat-file', '-t', mainSha).trim()).toBe('commit');
  });

  it.each([
    ['a branch name that is an option', { onBranch: '-x' }, /is not a branch name/],
    ['a branch that climbs', { onBranch: 'a/../b' }, /is not a branch name/],
    ['a base that is an option', { base: '--output=/tmp/x' }, /is not a commit name/],
    ['no base at all', {}, /is not known/],
    ['a default branch origin does not have', { onBranch: 'nothere' }, /could not be found/],
  ])('%s: no base, saying why', async (_, untrusted, why) => {
    const { clone } = await repos();
    const got = await resolveBase(clone, untrusted);
    expect('problem' in got ? got.problem : '').toMatch(why);
  });
});
