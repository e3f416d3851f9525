import { describe, expect, it } from 'vitest';
import { readActionSettings } from '../../src/action/inputs.js';
import { DEFAULT_TIMEOUTS } from '../../src/cluster/timeouts.js';
import { DEFAULT_LIMITS } from '../../src/kustomize/run.js';
import { UserError } from '../../src/util/user-error.js';
import { kubeconfigSource, settingsOf, runInfo } from '../../src/options/settings.js';

const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:6443}\n';

describe('kubeconfigSource', () => {
  it.each([
    { value: '', want: { kind: 'default' } },
    { value: '  ', want: { kind: 'default' } },
    { value: 'kube/config', want: { kind: 'path', path: '/ws/kube/config' } },
    { value: '/etc/kubeconfig', want: { kind: 'path', path: '/etc/kubeconfig' } },
    { value: 'apiVersion: v1\nkind: Config\n', want: { kind: 'content', content: 'apiVersion: v1\nkind: Config\n' } },
    { value: 'clusters: []', want: { kind: 'content', content: 'clusters: []' } },
    { value: '{"apiVersion":"v1"}', want: { kind: 'content', content: '{"apiVersion":"v1"}' } },
    {
      value: Buffer.from(KUBECONFIG).toString('base64'),
      want: { kind: 'content', content: KUBECONFIG },
    },
    {
      // As `base64 -w 76` wraps it.
      value: Buffer.from(KUBECONFIG)
        .toString('base64')
        .replace(/(.{76})/g, '$1\n'),
      want: { kind: 'content', content: KUBECONFIG },
    },
  ])('$value → $want.kind', ({ value, want }) => {
    expect(kubeconfigSource(value, '/ws')).toEqual(want);
  });

  it.each([
    ['base64 of something else', Buffer.from('x'.repeat(40) + 'client-key-data: c2VjcmV0').toString('base64')],
    ['a long token', 'ghp_' + 'A'.repeat(1100)],
  ])('%s is refused without quoting it', (_, value) => {
    let message = '';
    try {
      kubeconfigSource(value, '/ws');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^input kubeconfig (looks base64-encoded|is neither)/);
    expect(message).not.toContain(value.slice(0, 16));
  });
});

describe('runInfo: the branch checked out', () => {
  it.each([
    ['a push', { GITHUB_REPOSITORY: 'acme/fleet', GITHUB_REF: 'refs/heads/main' }, {}, 'main'],
    [
      'a pull request: its base branch',
      { GITHUB_REPOSITORY: 'acme/fleet', GITHUB_REF: 'refs/pull/7/merge', GITHUB_BASE_REF: 'main' },
      {},
      'main',
    ],
    ['a tag', { GITHUB_REPOSITORY: 'acme/fleet', GITHUB_REF: 'refs/tags/v1' }, {}, undefined],
    ['the CLI in a clone', {}, { branch: 'staging' }, 'staging'],
  ])('%s', (_, env, local, want) => {
    expect(runInfo(env, { root: '/ws', ...local }).branch).toBe(want);
  });
});

describe('credential inputs are masked when read', () => {
  const secretKey = 'LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUlrZXk=';
  const kubeconfig = `apiVersion: v1\nkind: Config\nclusters: []\nusers:\n- name: u\n  user:\n    client-key-data: ${secretKey}\n`;
  it.each([
    ['as YAML', kubeconfig],
    ['base64-encoded', Buffer.from(kubeconfig).toString('base64')],
  ])('a kubeconfig given %s: whole, by its credentials and decoded, not line by line', (_, value) => {
    const s = readActionSettings(
      (name) =>
        ({ kubeconfig: value, 'secret-vars': 'db_password: |\n  first-line-secret\n  second-line-secret\n' })[name] ??
        '',
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(s.masked).toContain(value.trim());
    expect(s.masked).toContain(kubeconfig.trim());
    expect(s.masked).toContain(secretKey);
    expect(s.masked).not.toContain(`client-key-data: ${secretKey}`);
    expect(s.masked).not.toContain('kind: Config');
    expect(s.masked).toContain('first-line-secret');
    expect(s.masked).toContain('second-line-secret');
  });
});

describe('settingsOf', () => {
  const base = { kubeconfig: { kind: 'default' as const }, root: '/ws' };
  it('fills Flux-compatible defaults', () => {
    expect(settingsOf(base)).toEqual({
      mode: 'apply',
      kubeconfig: { kind: 'default' },
      clusterTimeouts: { connectMs: 10_000, requestMs: 60_000 },
      root: '/ws',
      path: '.',
      gitCredentials: {},
      registryCredentials: {},
      kustomizations: [],
      exclude: [],
      select: [],
      unchangedDependencies: [],
      dependencyTimeoutMs: 30 * 60_000,
      reports: [],
      wait: false,
      allowRemoteBases: false,
      vars: {},
      secretVars: {},
      strictSubstitute: true,
      sopsVerifyMac: true,
      sopsVaultAddresses: [],
      env: {},
      fieldManager: 'kustomize-controller',
      kustomizeBin: 'kustomize',
      concurrency: 8,
      alwaysDryRun: false,
      overrideManagerBeforeDryRun: [],
      prune: false,
      force: false,
      pruneMaxShare: 0.5,
      allowLargePrune: false,
      allowPrivateSourceHosts: false,
      removedKustomizations: 'report',
      driftCorrection: false,
      github: { comment: true, checkRun: true },
      noCrossNamespaceRefs: false,
      lockTimeoutMs: 600_000,
      lockLeaseMs: 30_000,
      buildLimits: { timeoutMs: 300_000, memoryBytes: 2 * 1024 ** 3 },
      actionsCache: true,
      run: {
        holder: expect.stringMatching(/ pid \d+$/) as string,
        source: 'local:/ws',
        sourceFrom: 'the source root, which has no git remote origin',
      },
      masked: [],
    });
  });
  it.each([
    [{ mode: 'sync' }, 'mode must be one of apply, preview, drift, plan, report; got "sync"'],
    [{ connectTimeout: 'fast' }, 'connect-timeout must be a duration such as 90s or 10m; got "fast"'],
    [{ requestTimeout: '0s' }, 'request-timeout must be longer than 0, such as 5s or 1m; got "0s"'],
    [{ concurrency: '0' }, 'concurrency must be a whole number from 1 to 64; got "0"'],
    [
      { kustomizations: ['ks.yaml'], select: ['apps'] },
      'select: "apps" is not NAMESPACE/NAME of a Kustomization (e.g. flux-system/apps)',
    ],
    [{ cluster: 'prod' }, 'cluster needs kustomizations: it picks among the Kustomization files'],
    [{ select: ['flux-system/apps'] }, 'select needs kustomizations: it picks among the Kustomization files'],
    [
      { kustomizations: ['ks.yaml'], cluster: '../prod' },
      'cluster must be the name of a directory under clusters/ (letters, digits, - _ .); got "../prod"',
    ],
    [{ kustomizations: ['ks.yaml'], dependencyTimeout: 'soon' }, /dependency-timeout/],
    [{ concurrency: 'many' }, 'concurrency must be a whole number from 1 to 64; got "many"'],
    [{ fieldManager: 'x'.repeat(129) }, 'field-manager must be at most 128 characters'],
    [{ path: 'deploy', kustomizations: ['ks.yaml'] }, 'set either path ("deploy") or kustomizations, not both'],
    [{ kustomizations: ['ks.yaml'], targetNamespace: 'x' }, 'target-namespace applies to path'],
    [{ kustomizations: ['ks.yaml'], wait: 'true' }, 'wait and timeout apply to path'],
    [{ kustomizations: ['ks.yaml'], timeout: '0s' }, 'wait and timeout apply to path'],
    [{ wait: 'yes' }, 'wait must be true or false; got "yes"'],
    [{ allowRemoteBases: 'yes' }, 'allow-remote-bases must be true or false; got "yes"'],
    [{ kustomizations: ['ks.yaml'], prune: 'true' }, 'prune and force apply to path'],
    [{ inventoryNamespace: 'Team_A' }, 'inventory-namespace must be a namespace name (DNS-1123 label); got "Team_A"'],
    [{ pruneMaxShare: '150%' }, 'prune-max-share must be a percentage from 0% to 100% (or a fraction 0–1); got "150%"'],
    [{ pruneMaxShare: 'half' }, 'prune-max-share must be a percentage'],
    [{ removedKustomizations: 'purge' }, 'removed-kustomizations must be one of report, delete; got "purge"'],
    [{ removedKustomizations: 'delete' }, 'removed-kustomizations: delete needs kustomizations'],
    [{ driftCorrection: 'true' }, "drift-correction applies to mode: drift; this run's mode is apply"],
    [{ driftCorrection: 'yes', mode: 'drift' }, 'drift-correction must be true or false; got "yes"'],
    [{ defaultServiceAccount: 'Deployer!' }, 'default-service-account must be a ServiceAccount name'],
    [{ noCrossNamespaceRefs: 'maybe' }, 'no-cross-namespace-refs must be true or false; got "maybe"'],
    [{ kustomizations: ['ks.yaml'], name: 'apps' }, 'name applies to path'],
    [{ lockTimeout: 'soon' }, 'lock-timeout must be a duration such as 90s or 10m; got "soon"'],
    [
      { registryCredentials: { 'ghcr.io': 'just-a-token' } },
      'registry-credentials: the value for ghcr.io must be USERNAME:PASSWORD',
    ],
    [
      { registryCredentials: { 'https://ghcr.io': 'u:p' } },
      'registry-credentials: "https://ghcr.io" is not a host name',
    ],
    [{ gitCredentials: { 'github.com/acme': 't' } }, 'git-credentials: "github.com/acme" is not a host name'],
    [{ sopsVaultAddresses: 'vault.example.com:8200' }, 'sops-vault-addresses: "vault.example.com:8200" must start'],
    [{ sopsVaultAddresses: ['https://u:p@vault.example.com'] }, 'must not carry a user name or password'],
    [{ buildTimeout: 'soon' }, 'build-timeout must be a duration such as 90s or 10m; got "soon"'],
    [{ buildTimeout: '0s' }, 'build-timeout must be longer than 0, such as 5s or 1m; got "0s"'],
    [{ timeout: 'soon' }, 'timeout must be a duration such as 90s or 10m; got "soon"'],
    // Checked here once: the Kustomization of the path input takes it in milliseconds (flux/from-inputs.ts).
    [{ timeout: '5 minutes' }, 'timeout must be a duration such as 90s or 10m; got "5 minutes"'],
    [{ timeout: '5' }, 'timeout must be a duration such as 90s or 10m; got "5"'],
    [{ timeout: '1d' }, 'timeout must be a duration such as 90s or 10m; got "1d"'],
    [{ buildMemoryLimit: 'lots' }, 'build-memory-limit must be a size such as 512Mi or 2Gi; got "lots"'],
    [{ buildMemoryLimit: '1Mi' }, 'build-memory-limit must be at least 64Mi; got "1Mi"'],
  ])('%j is refused', (raw, error) => {
    expect(() => settingsOf({ ...base, ...raw })).toThrow(error);
    // The input's mistake, said whole: the edges print it as it is.
    expect(() => settingsOf({ ...base, ...raw })).toThrow(UserError);
  });
});

describe('the option table holds the defaults of the libraries', () => {
  it('cluster timeouts and build limits', () => {
    const s = settingsOf({ root: '/ws' });
    expect(s.clusterTimeouts).toEqual(DEFAULT_TIMEOUTS);
    expect(s.buildLimits).toEqual(DEFAULT_LIMITS);
  });
});

describe('build limits', () => {
  it.each([
    [{ buildTimeout: '90s' }, { timeoutMs: 90_000, memoryBytes: 2 * 1024 ** 3 }],
    [{ buildMemoryLimit: '512Mi' }, { timeoutMs: 300_000, memoryBytes: 512 * 1024 ** 2 }],
    [
      { buildTimeout: '1h', buildMemoryLimit: '8Gi' },
      { timeoutMs: 3_600_000, memoryBytes: 8 * 1024 ** 3 },
    ],
  ])('%j', (raw, want) => {
    expect(settingsOf({ kubeconfig: { kind: 'default' }, root: '/ws', ...raw }).buildLimits).toEqual(want);
  });
});

describe('readActionSettings', () => {
  const inputs = (m: Record<string, string>) => (name: string) => m[name] ?? '';
  it('reads inputs and the workspace', () => {
    const s = readActionSettings(inputs({ path: 'deploy', mode: 'preview', kubeconfig: 'kc.yaml' }), {
      GITHUB_WORKSPACE: '/ws',
    });
    expect(s).toMatchObject({
      mode: 'preview',
      path: 'deploy',
      root: '/ws',
      kubeconfig: { kind: 'path', path: '/ws/kc.yaml' },
    });
  });
  it('reads the tenancy inputs', () => {
    const s = readActionSettings(inputs({ 'default-service-account': 'deployer', 'no-cross-namespace-refs': 'true' }), {
      GITHUB_WORKSPACE: '/ws',
    });
    expect(s).toMatchObject({ defaultServiceAccount: 'deployer', noCrossNamespaceRefs: true });
  });
  it('reads the prune, inventory and lock inputs, and the run from the environment', () => {
    const s = readActionSettings(
      inputs({
        prune: 'true',
        'inventory-namespace': 'gitops',
        'prune-max-share': '20%',
        'allow-large-prune': 'true',
        'lock-timeout': '90s',
        'connect-timeout': '3s',
        'request-timeout': '2m',
      }),
      {
        GITHUB_WORKSPACE: '/ws',
        GITHUB_SHA: 'abc123',
        GITHUB_REPOSITORY: 'org/repo',
        GITHUB_RUN_ID: '42',
        GITHUB_RUN_ATTEMPT: '2',
        GITHUB_JOB: 'deploy',
      },
    );
    expect(s).toMatchObject({
      prune: true,
      inventoryNamespace: 'gitops',
      pruneMaxShare: 0.2,
      allowLargePrune: true,
      lockTimeoutMs: 90_000,
      clusterTimeouts: { connectMs: 3_000, requestMs: 120_000 },
      run: {
        revision: 'abc123',
        source: 'org/repo',
        url: 'https://github.com/org/repo/actions/runs/42',
        holder: 'https://github.com/org/repo/actions/runs/42 attempt 2 job deploy',
      },
    });
  });
  it('reads sops-vault-addresses (one per line or comma-separated), normalised', () => {
    const s = readActionSettings(
      inputs({
        'sops-vault-addresses':
          'https://Vault.example.com:8200/\nhttp://127.0.0.1:8200, https://vault.example.com:8200',
      }),
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(s.sopsVaultAddresses).toEqual(['https://vault.example.com:8200', 'http://127.0.0.1:8200']);
  });

  it('reads kustomizations (one per line or comma-separated) and allow-remote-bases', () => {
    const s = readActionSettings(
      inputs({ kustomizations: 'clusters/a.yaml\n# comment\nclusters/b/*.yaml, c.yaml', 'allow-remote-bases': 'true' }),
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(s.kustomizations).toEqual(['clusters/a.yaml', 'clusters/b/*.yaml', 'c.yaml']);
    expect(s.allowRemoteBases).toBe(true);
  });
  it('reads vars and secret-vars as maps, and strict-substitute', () => {
    const s = readActionSettings(
      inputs({
        vars: 'cluster_env: prod\nreplicas: 3',
        'secret-vars': '{"token": "abc123"}',
        'strict-substitute': 'false',
      }),
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(s.vars).toEqual({ cluster_env: 'prod', replicas: '3' });
    expect(s.secretVars).toEqual({ token: 'abc123' });
    expect(s.strictSubstitute).toBe(false);
  });
  it('accepts the neutral value of a later-stage input', () => {
    expect(() =>
      readActionSettings(inputs({ prune: 'false', wait: 'false' }), { GITHUB_WORKSPACE: '/ws' }),
    ).not.toThrow();
  });
});

describe('registry-credentials', () => {
  it('keeps each registry login by host, lower case, split at the first colon', () => {
    const settings = settingsOf({
      kubeconfig: { kind: 'default' },
      root: '/ws',
      registryCredentials: { 'GHCR.io': 'bot:pa:ss', 'registry.local:5000': 'u:p' },
    });
    expect(settings.registryCredentials).toEqual({
      'ghcr.io': { username: 'bot', password: 'pa:ss' },
      'registry.local:5000': { username: 'u', password: 'p' },
    });
  });
});
