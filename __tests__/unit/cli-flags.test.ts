import { describe, expect, it } from 'vitest';
import { parseFlags, rawFromFlags } from '../../src/options/flags.js';
import { settingsOf, type OptionValues } from '../../src/options/settings.js';

const FILES: Record<string, string> = {
  'age.txt': '# created: 2026-01-01\nAGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\n',
};
const read = (path: string) =>
  path in FILES
    ? Promise.resolve(FILES[path]!)
    : Promise.reject(Object.assign(new Error(`no ${path}`), { code: 'ENOENT' }));

/** settingsOf()'s input from a command line's flags. */
async function raw(argv: string[]) {
  return rawFromFlags(parseFlags(argv).values, read);
}

describe('the CLI flag parser', () => {
  it('leaves --root to the CLI: the source root comes from the edge, not the option values', async () => {
    expect(parseFlags(['--root', '/src']).values['root']).toBe('/src');
    expect(await raw(['--root', '/src'])).not.toHaveProperty('root');
  });

  it.each<[string, string[], Partial<OptionValues>]>([
    ['no flags: the default kubeconfig', [], { kubeconfig: { kind: 'default' } }],
    ['--kubeconfig: a path', ['--kubeconfig', 'kc.yaml'], { kubeconfig: { kind: 'path', path: 'kc.yaml' } }],
    ['a string', ['--path', 'app'], { path: 'app' }],
    ['--name=value', ['--name=apps'], { name: 'apps' }],
    ['a boolean', ['--prune'], { prune: true }],
    ['a boolean negated', ['--no-prune'], { prune: false }],
    ['a default-true boolean, negated', ['--no-strict-substitute'], { strictSubstitute: false }],
    ['a default-true boolean, given', ['--strict-substitute'], { strictSubstitute: true }],
    ['--no-sops-verify-mac', ['--no-sops-verify-mac'], { sopsVerifyMac: false }],
    ['--no-cross-namespace-refs', ['--no-cross-namespace-refs'], { noCrossNamespaceRefs: true }],
    ['--wait and --timeout', ['--wait', '--timeout', '2m'], { wait: true, timeout: '2m' }],
    ['--default-service-account', ['--default-service-account', 'deployer'], { defaultServiceAccount: 'deployer' }],
    ['--drift-correction', ['--drift-correction'], { driftCorrection: true }],
    [
      '--kustomizations, repeated and comma-separated',
      ['--kustomizations', 'a.yaml,b/*.yaml', '--kustomizations', 'c.yaml'],
      { kustomizations: ['a.yaml', 'b/*.yaml', 'c.yaml'] },
    ],
    [
      '--sops-vault-addresses, repeated and comma-separated',
      ['--sops-vault-addresses', 'https://a:8200', '--sops-vault-addresses', 'https://b:8200,https://c:8200'],
      { sopsVaultAddresses: ['https://a:8200', 'https://b:8200', 'https://c:8200'] },
    ],
    ['--var, repeated', ['--var', 'a=1', '--var', 'b=x=y'], { vars: { a: '1', b: 'x=y' } }],
    ['--secret-var', ['--secret-var', 'token=s3cret-value'], { secretVars: { token: 's3cret-value' } }],
    ['--sops-age-key: the file read', ['--sops-age-key', 'age.txt'], { sopsAgeKey: FILES['age.txt']! }],
    ['--concurrency as text for normalize', ['--concurrency', '4'], { concurrency: '4' }],
    ['--kustomize-path feeds kustomizeBin', ['--kustomize-path', '/bin/kustomize'], { kustomizeBin: '/bin/kustomize' }],
  ])('%s', async (_, argv, want) => {
    expect(await raw(argv)).toMatchObject(want);
  });

  it.each<[string, string[], string, unknown]>([
    ['-h', ['-h'], 'help', true],
    ['--help', ['--help'], 'help', true],
    ['--output', ['--output', 'json'], 'output', 'json'],
    ['--show-secrets', ['build', '--show-secrets'], 'show-secrets', true],
    ['an absent boolean', [], 'prune', undefined],
  ])('%s: the CLI-only value', (_, argv, name, want) => {
    expect(parseFlags(argv).values[name]).toEqual(want);
  });

  it('keeps the command as a positional', () => {
    expect(parseFlags(['apply', '--path', 'app']).positionals).toEqual(['apply']);
  });

  it.each([
    ['an unknown flag', ['--bogus'], "Unknown option '--bogus'"],
    ['a flag without its value', ['--path'], "Option '--path <value>' argument missing"],
  ])('%s is refused', (_, argv, error) => {
    expect(() => parseFlags(argv)).toThrow(error);
  });

  it.each([
    ['--var without =', ['--var', 'oops'], '--var oops: expected name=value'],
    ['--secret-var without =', ['--secret-var', 'hunter2hunter2'], '--secret-var: expected name=value'],
    [
      '--secret-var with a bad name',
      ['--secret-var', '1x=hunter2hunter2'],
      "--secret-var 1x=: '1x' var name is invalid",
    ],
    ['an unreadable key file', ['--sops-pgp-key', 'missing.asc'], '--sops-pgp-key: cannot read missing.asc: ENOENT'],
  ])('%s is refused', async (_, argv, error) => {
    const err = (await raw(argv).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(error);
    expect(err.message).not.toContain('hunter2');
  });

  it('collects the credentials it read, for the scrubber', async () => {
    const { masked } = await raw(['--secret-var', 'token=s3cret-value', '--sops-age-key', 'age.txt']);
    expect(masked).toContain('s3cret-value');
    expect(masked).toContain('AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ');
    expect(masked).not.toContain('# created: 2026-01-01');
  });

  it('gives settingsOf() what it validates, as the action input does', async () => {
    const s = settingsOf({
      ...(await raw(['--no-cross-namespace-refs', '--drift-correction', '--timeout', '90s', '--wait'])),
      kubeconfig: { kind: 'default' },
      mode: 'drift',
      root: '/ws',
    });
    expect(s).toMatchObject({ noCrossNamespaceRefs: true, driftCorrection: true, wait: true, timeout: 90_000 });
  });
});
