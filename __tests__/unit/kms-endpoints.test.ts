// The pure endpoint policy of the key services: which hosts a SOPS file (or a decryption Secret)
// may make the runner send its credentials to. Every row is one host a file could name.
import { describe, expect, it } from 'vitest';
import {
  awsEndpoint,
  azureVaultEndpoint,
  googleEndpoint,
  normalizeVaultAddress,
  testOrigins,
  vaultEndpoint,
} from '../../src/sops/kms/endpoints.js';

const NO_TEST: readonly string[] = [];

describe('AWS: kms.<region>.<partition suffix>, the region a real one of the partition', () => {
  it.each([
    { partition: 'aws', region: 'us-east-1', fips: false, host: 'kms.us-east-1.amazonaws.com' },
    { partition: 'aws', region: 'eu-central-2', fips: false, host: 'kms.eu-central-2.amazonaws.com' },
    { partition: 'aws', region: 'il-central-1', fips: false, host: 'kms.il-central-1.amazonaws.com' },
    { partition: 'aws', region: 'mx-central-1', fips: false, host: 'kms.mx-central-1.amazonaws.com' },
    { partition: 'aws', region: 'ap-southeast-7', fips: true, host: 'kms-fips.ap-southeast-7.amazonaws.com' },
    { partition: 'aws-cn', region: 'cn-north-1', fips: false, host: 'kms.cn-north-1.amazonaws.com.cn' },
    { partition: 'aws-cn', region: 'cn-northwest-1', fips: false, host: 'kms.cn-northwest-1.amazonaws.com.cn' },
    { partition: 'aws-us-gov', region: 'us-gov-west-1', fips: false, host: 'kms.us-gov-west-1.amazonaws.com' },
    { partition: 'aws-us-gov', region: 'us-gov-east-1', fips: true, host: 'kms-fips.us-gov-east-1.amazonaws.com' },
    { partition: 'aws-iso', region: 'us-iso-east-1', fips: false, host: 'kms.us-iso-east-1.c2s.ic.gov' },
    { partition: 'aws-iso-b', region: 'us-isob-east-1', fips: false, host: 'kms.us-isob-east-1.sc2s.sgov.gov' },
    { partition: 'aws-iso-e', region: 'eu-isoe-west-1', fips: false, host: 'kms.eu-isoe-west-1.cloud.adc-e.uk' },
    { partition: 'aws-iso-f', region: 'us-isof-south-1', fips: false, host: 'kms.us-isof-south-1.csp.hci.ic.gov' },
    { partition: 'aws-eusc', region: 'eusc-de-east-1', fips: false, host: 'kms.eusc-de-east-1.amazonaws.eu' },
  ])('$partition $region (fips $fips) → $host', ({ partition, region, fips, host }) => {
    const r = awsEndpoint('kms', partition, region, { fips });
    expect(r).toEqual({ ok: true, url: new URL(`https://${host}/`) });
  });

  it('STS has the same shape', () => {
    expect(awsEndpoint('sts', 'aws-cn', 'cn-north-1', { fips: false })).toEqual({
      ok: true,
      url: new URL('https://sts.cn-north-1.amazonaws.com.cn/'),
    });
  });

  it.each([
    { why: 'a host in the region', partition: 'aws', region: 'evil.com/x' },
    { why: 'a dotted region', partition: 'aws', region: 'us-east-1.evil.com' },
    { why: 'a region with an @', partition: 'aws', region: 'x@evil.com' },
    { why: 'a region with a port', partition: 'aws', region: 'us-east-1:8443' },
    { why: 'an uppercase region', partition: 'aws', region: 'US-EAST-1' },
    { why: 'a trailing dot', partition: 'aws', region: 'us-east-1.' },
    { why: 'an IP address', partition: 'aws', region: '169.254.169.254' },
    { why: 'an empty region', partition: 'aws', region: '' },
    { why: 'punycode', partition: 'aws', region: 'xn--us-east-1' },
    { why: 'an unknown geography', partition: 'aws', region: 'zz-east-1' },
    { why: 'a region without its number', partition: 'aws', region: 'us-east' },
    { why: 'a GovCloud region under aws', partition: 'aws', region: 'us-gov-west-1' },
    { why: 'a China region under aws', partition: 'aws', region: 'cn-north-1' },
    { why: 'a commercial region under aws-cn', partition: 'aws-cn', region: 'us-east-1' },
    { why: 'an iso-b region under aws-iso', partition: 'aws-iso', region: 'us-isob-east-1' },
    { why: 'an unknown partition', partition: 'aws-evil', region: 'us-east-1' },
  ])('refuses $why ($partition / $region)', ({ partition, region }) => {
    const r = awsEndpoint('kms', partition, region, { fips: false });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(/region|partition/);
  });

  it.each(['aws-cn', 'aws-iso', 'aws-iso-b', 'aws-iso-e', 'aws-iso-f', 'aws-eusc'])(
    'FIPS is refused for %s, which AWS lists no FIPS KMS endpoint for here',
    (partition) => {
      const region = {
        'aws-cn': 'cn-north-1',
        'aws-iso': 'us-iso-east-1',
        'aws-iso-b': 'us-isob-east-1',
        'aws-iso-e': 'eu-isoe-west-1',
        'aws-iso-f': 'us-isof-south-1',
        'aws-eusc': 'eusc-de-east-1',
      }[partition]!;
      const r = awsEndpoint('kms', partition, region, { fips: true });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.why).toContain('AWS_USE_FIPS_ENDPOINT');
    },
  );
});

describe('Azure Key Vault: <vault>.vault.azure.net and the sovereign clouds, Managed HSM', () => {
  it.each([
    { url: 'https://myvault.vault.azure.net', resource: 'https://vault.azure.net' },
    { url: 'https://myvault.vault.azure.net/', resource: 'https://vault.azure.net' },
    { url: 'https://MyVault.Vault.Azure.NET', resource: 'https://vault.azure.net' },
    { url: 'https://myvault.vault.azure.net:443', resource: 'https://vault.azure.net' },
    { url: 'https://my-vault-01.vault.azure.cn', resource: 'https://vault.azure.cn' },
    { url: 'https://myvault.vault.usgovcloudapi.net', resource: 'https://vault.usgovcloudapi.net' },
    { url: 'https://myhsm.managedhsm.azure.net', resource: 'https://managedhsm.azure.net' },
    { url: 'https://myhsm.managedhsm.azure.cn', resource: 'https://managedhsm.azure.cn' },
    { url: 'https://myhsm.managedhsm.usgovcloudapi.net', resource: 'https://managedhsm.usgovcloudapi.net' },
  ])('allows $url (token audience $resource)', ({ url, resource }) => {
    const r = azureVaultEndpoint(new URL(`${url.replace(/\/$/, '')}/keys/k/v/decrypt`), NO_TEST);
    expect(r).toMatchObject({ ok: true, resource });
  });

  it.each([
    { why: 'another host', url: 'https://evil.example.com' },
    { why: 'userinfo before the vault host', url: 'https://evil@vault.azure.net' },
    { why: 'userinfo naming a vault', url: 'https://myvault.vault.azure.net@evil.com' },
    { why: 'the bare suffix', url: 'https://vault.azure.net' },
    { why: 'the suffix under another domain', url: 'https://myvault.vault.azure.net.evil.com' },
    { why: 'a look-alike suffix', url: 'https://myvault.vaultazure.net' },
    { why: 'a suffix as a label prefix', url: 'https://myvault.evilvault.azure.net' },
    { why: 'two labels before the suffix', url: 'https://a.myvault.vault.azure.net' },
    { why: 'http://', url: 'http://myvault.vault.azure.net' },
    { why: 'another port', url: 'https://myvault.vault.azure.net:8443' },
    { why: 'a trailing dot', url: 'https://myvault.vault.azure.net.' },
    { why: 'an IPv4 literal', url: 'https://127.0.0.1' },
    { why: 'an IPv6 literal', url: 'https://[::1]' },
    { why: 'a punycode vault label', url: 'https://xn--myvult-2ve.vault.azure.net' },
    { why: 'a Unicode look-alike suffix', url: 'https://myvault.vаult.azure.net' },
    { why: 'a backslash that moves the host', url: 'https://evil.com\\@myvault.vault.azure.net' },
    { why: 'the closed German cloud', url: 'https://myvault.vault.microsoftazure.de' },
  ])('refuses $why: $url', ({ url }) => {
    let parsed: URL;
    try {
      parsed = new URL(`${url}/keys/k/v/decrypt`);
    } catch {
      return; // not even a URL: nothing could be sent
    }
    const r = azureVaultEndpoint(parsed, NO_TEST);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toContain('Azure Key Vault');
  });
});

describe('Google: the token and KMS hosts of each use', () => {
  it.each([
    { use: 'token' as const, url: 'https://oauth2.googleapis.com/token' },
    { use: 'token' as const, url: 'https://accounts.google.com/o/oauth2/token' },
    { use: 'sts' as const, url: 'https://sts.googleapis.com/v1/token' },
    {
      use: 'impersonation' as const,
      url: 'https://iamcredentials.googleapis.com/v1/projects/-/sa:generateAccessToken',
    },
    { use: 'token' as const, url: 'https://OAUTH2.googleapis.com:443/token' },
  ])('allows $use at $url', ({ use, url }) => {
    expect(googleEndpoint(use, url, NO_TEST)).toMatchObject({ ok: true });
  });

  it.each([
    { use: 'token' as const, url: 'https://evil.example.com/token' },
    { use: 'token' as const, url: 'http://oauth2.googleapis.com/token' },
    { use: 'token' as const, url: 'https://oauth2.googleapis.com:8443/token' },
    { use: 'token' as const, url: 'https://evil@oauth2.googleapis.com/token' },
    { use: 'token' as const, url: 'https://oauth2.googleapis.com.evil.com/token' },
    { use: 'token' as const, url: 'https://oauth2.googleapis.com./token' },
    { use: 'token' as const, url: 'https://sts.googleapis.com/v1/token' },
    { use: 'sts' as const, url: 'https://oauth2.googleapis.com/token' },
    { use: 'sts' as const, url: 'https://127.0.0.1:9/v1/token' },
    { use: 'impersonation' as const, url: 'https://iamcredentials.googleapis.com.evil.com/x' },
    { use: 'impersonation' as const, url: 'https://xn--iamcredentials-xyz.googleapis.com/x' },
    { use: 'token' as const, url: 'not a url' },
  ])('refuses $use at $url', ({ use, url }) => {
    const r = googleEndpoint(use, url, NO_TEST);
    expect(r.ok).toBe(false);
  });
});

describe('Vault: only the addresses of the sops-vault-addresses input', () => {
  const allowed = ['https://vault.example.com:8200', 'http://127.0.0.1:8200/', 'https://vault.example.com/team-a'].map(
    normalizeVaultAddress,
  );

  it.each([
    'https://vault.example.com:8200',
    'https://VAULT.example.com:8200/',
    'http://127.0.0.1:8200',
    'https://vault.example.com/team-a',
    'https://vault.example.com/team-a/',
  ])('allows %s', (address) => {
    expect(vaultEndpoint(address, allowed)).toMatchObject({ ok: true });
  });

  it.each([
    'https://vault.example.com',
    'https://vault.example.com:8201',
    'http://vault.example.com:8200',
    'https://127.0.0.1:8200',
    'https://evil@vault.example.com:8200',
    'https://vault.example.com:8200.evil.com',
    'https://vault.example.com.:8200',
    'https://vault.example.com/team-b',
    'https://vault.example.com/team-a/../team-b',
    'https://vault.example.com/team-ab',
    'https://evil.example.com:8200',
    'not a url',
  ])('refuses %s, naming the input to set (or saying it is no URL)', (address) => {
    const r = vaultEndpoint(address, allowed);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(/sops-vault-addresses|is not a URL/);
  });

  it('refuses every address when the input is empty', () => {
    const r = vaultEndpoint('https://vault.example.com:8200', []);
    expect(r).toMatchObject({ ok: false, host: 'vault.example.com:8200' });
  });

  it.each([
    { entry: 'vault.example.com:8200', why: 'http:// or https://' },
    { entry: 'https://user:pw@vault.example.com', why: 'user name' },
    { entry: 'https://vault.example.com/?x=1', why: 'query' },
    { entry: 'ftp://vault.example.com', why: 'http:// or https://' },
  ])('a bad input entry $entry is an error saying why', ({ entry, why }) => {
    expect(() => normalizeVaultAddress(entry)).toThrow(why);
  });
});

describe('the test-only override KR_TEST_KMS_ENDPOINTS', () => {
  it('admits the loopback origins it lists, and nothing else', () => {
    const origins = testOrigins({
      KR_TEST_KMS_ENDPOINTS: 'http://127.0.0.1:4100, http://[::1]:4200 http://localhost:4300',
    });
    expect(origins).toEqual(['http://127.0.0.1:4100', 'http://[::1]:4200', 'http://localhost:4300']);
    expect(azureVaultEndpoint(new URL('http://127.0.0.1:4100/keys/k/decrypt'), origins)).toMatchObject({ ok: true });
    expect(googleEndpoint('sts', 'http://[::1]:4200/v1/token', origins)).toMatchObject({ ok: true });
    expect(azureVaultEndpoint(new URL('http://127.0.0.1:4101/keys/k/decrypt'), origins).ok).toBe(false);
  });

  it.each(['https://evil.example.com', 'http://10.0.0.1:80', 'http://127.0.0.1.evil.com:80', 'garbage'])(
    'ignores an origin that is not loopback: %s',
    (origin) => {
      expect(testOrigins({ KR_TEST_KMS_ENDPOINTS: origin })).toEqual([]);
    },
  );

  it('is empty when unset', () => {
    expect(testOrigins({})).toEqual([]);
  });
});
