/**
 * Where a key service may send the runner's credentials. A SOPS file names its key service's
 * endpoint (an Azure `vault_url`, a Vault `vault_address`, the region of an AWS key ARN) and a
 * decryption Secret may carry GCP credentials naming their token endpoints; both come from what a
 * pull request can change. So every such URL is checked here, before any request, against the
 * providers' own hosts (or, for Vault, the `sops-vault-addresses` input). Pure: no I/O.
 *
 * Endpoints the runner's own environment sets (`AWS_ENDPOINT_URL_KMS`, `SOPS_GCP_KMS_ENDPOINT`,
 * `AZURE_AUTHORITY_HOST`, ...) are the workflow's configuration and are not checked here.
 */

/** A URL a key service may contact, or the host it would have contacted and why it may not. */
export type Verdict = { ok: true; url: URL } | { ok: false; host: string; why: string };

export type AzureVerdict = (Verdict & { ok: false }) | { ok: true; url: URL; resource: string };

// ---- the test-only override ----------------------------------------------------------------------

/**
 * TEST-ONLY. `KR_TEST_KMS_ENDPOINTS` lists origins (`http://127.0.0.1:4100`, comma or space
 * separated) that the fake key services of our tests listen on; the checks below admit them as if
 * they were the provider's own hosts. It is read from the process environment the run was started
 * with (never from a repository file, a SOPS file or a Secret), and only loopback origins
 * (127.0.0.0/8, [::1], localhost) are taken, so even when set it cannot send a credential off the
 * machine. Production workflows never set it.
 */
export function testOrigins(env: NodeJS.ProcessEnv): string[] {
  const raw = env['KR_TEST_KMS_ENDPOINTS'];
  if (!raw) return [];
  const out: string[] = [];
  for (const item of raw.split(/[\s,]+/)) {
    if (!item) continue;
    let u: URL;
    try {
      u = new URL(item);
    } catch {
      continue;
    }
    if ((u.protocol === 'http:' || u.protocol === 'https:') && isLoopback(u.hostname)) out.push(u.origin);
  }
  return out;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

function isTestOrigin(url: URL, origins: readonly string[]): boolean {
  return origins.length > 0 && url.username === '' && url.password === '' && origins.includes(url.origin);
}

// ---- shared checks -------------------------------------------------------------------------------

/**
 * What every pinned endpoint must be before its host is compared: `https://`, no user name or
 * password (`https://evil@vault.azure.net`), the default port, and no trailing dot. The URL parser
 * has already lower-cased the host, turned Unicode into punycode and resolved backslashes.
 */
function plainHttps(url: URL): string | undefined {
  if (url.protocol !== 'https:') return `it is ${url.protocol}//, not https://`;
  if (url.username !== '' || url.password !== '') return 'it carries a user name or password';
  if (url.port !== '') return `it names port ${url.port}`;
  if (url.hostname.endsWith('.')) return 'its host ends with a dot';
  return undefined;
}

function refused(url: URL, why: string): Verdict & { ok: false } {
  return { ok: false, host: url.host || url.href, why };
}

// ---- AWS -----------------------------------------------------------------------------------------

interface AwsPartition {
  /** The region names of the partition (the SDKs' `regionRegex`, letters only in the middle part). */
  region: RegExp;
  dnsSuffix: string;
  /** AWS publishes `kms-fips.<region>` endpoints in this partition. */
  fips: boolean;
}

/** AWS's partitions (the SDKs' partitions.json): which regions belong to each and its DNS suffix. */
const AWS_PARTITIONS: Readonly<Record<string, AwsPartition>> = {
  aws: { region: /^(?:us|eu|ap|sa|ca|me|af|il|mx)-[a-z]+-\d+$/, dnsSuffix: 'amazonaws.com', fips: true },
  'aws-cn': { region: /^cn-[a-z]+-\d+$/, dnsSuffix: 'amazonaws.com.cn', fips: false },
  'aws-us-gov': { region: /^us-gov-[a-z]+-\d+$/, dnsSuffix: 'amazonaws.com', fips: true },
  'aws-iso': { region: /^us-iso-[a-z]+-\d+$/, dnsSuffix: 'c2s.ic.gov', fips: false },
  'aws-iso-b': { region: /^us-isob-[a-z]+-\d+$/, dnsSuffix: 'sc2s.sgov.gov', fips: false },
  'aws-iso-e': { region: /^eu-isoe-[a-z]+-\d+$/, dnsSuffix: 'cloud.adc-e.uk', fips: false },
  'aws-iso-f': { region: /^us-isof-[a-z]+-\d+$/, dnsSuffix: 'csp.hci.ic.gov', fips: false },
  'aws-eusc': { region: /^eusc-de-[a-z]+-\d+$/, dnsSuffix: 'amazonaws.eu', fips: false },
};

/**
 * The AWS endpoint of `service` for a key's partition and region: `https://kms.<region>.<suffix>/`
 * (`kms-fips.` with `fips`), where the region must be a region name of that partition, so that a
 * region such as `evil.com/x` or `us-east-1.evil.com` cannot choose the host.
 */
export function awsEndpoint(
  service: 'kms' | 'sts',
  partition: string,
  region: string,
  opts: { fips: boolean },
): Verdict {
  const p = Object.hasOwn(AWS_PARTITIONS, partition) ? AWS_PARTITIONS[partition] : undefined;
  const shown = `${service}.${region}`;
  if (!p) {
    return {
      ok: false,
      host: shown,
      why: `partition ${JSON.stringify(partition)} is not an AWS partition (${Object.keys(AWS_PARTITIONS).join(', ')})`,
    };
  }
  if (!p.region.test(region)) {
    return {
      ok: false,
      host: shown,
      why: `region ${JSON.stringify(region)} is not a region name of the ${partition} partition`,
    };
  }
  if (opts.fips && !p.fips) {
    return {
      ok: false,
      host: shown,
      why: `AWS_USE_FIPS_ENDPOINT is set, but the ${partition} partition has no FIPS ${service} endpoints`,
    };
  }
  const prefix = opts.fips && service === 'kms' ? 'kms-fips' : service;
  return { ok: true, url: new URL(`https://${prefix}.${region}.${p.dnsSuffix}/`) };
}

// ---- Azure ---------------------------------------------------------------------------------------

/**
 * Key Vault and Managed HSM DNS suffixes of the Azure clouds, each its token audience. Azure
 * Germany (`vault.microsoftazure.de`) closed in October 2021 and is not listed.
 */
const AZURE_SUFFIXES: readonly string[] = [
  'vault.azure.net',
  'vault.azure.cn',
  'vault.usgovcloudapi.net',
  'managedhsm.azure.net',
  'managedhsm.azure.cn',
  'managedhsm.usgovcloudapi.net',
];

/** A vault or HSM name: 3–24 letters, digits and single dashes, starting with a letter. */
const AZURE_NAME = /^[a-z][a-z0-9-]{1,22}[a-z0-9]$/;

/**
 * Checks the URL a Key Vault request would go to: `https://<name>.<suffix>` of one of the Azure
 * clouds, and returns the token audience of that cloud (`https://vault.azure.net`, ...).
 */
export function azureVaultEndpoint(url: URL, test: readonly string[]): AzureVerdict {
  if (isTestOrigin(url, test)) return { ok: true, url, resource: 'https://vault.azure.net' };
  const expected = `not an Azure Key Vault host (<name>.${AZURE_SUFFIXES.join(', <name>.')})`;
  const bad = plainHttps(url);
  if (bad) return refused(url, `${expected}: ${bad}`);
  const host = url.hostname;
  const dot = host.indexOf('.');
  const name = host.slice(0, dot);
  const suffix = host.slice(dot + 1);
  if (dot < 0 || !AZURE_SUFFIXES.includes(suffix) || !AZURE_NAME.test(name) || name.includes('--')) {
    return refused(url, expected);
  }
  return { ok: true, url, resource: `https://${suffix}` };
}

// ---- Google --------------------------------------------------------------------------------------

/**
 * Google's hosts for each call a credentials JSON can make. (The Cloud KMS endpoint is never named by
 * a SOPS file or a Secret: it is `cloudkms.googleapis.com` unless the runner's environment says.)
 */
const GOOGLE_HOSTS = {
  /** OAuth 2.0 token endpoint of service account keys and user credentials (`token_uri`). */
  token: ['oauth2.googleapis.com', 'accounts.google.com'],
  /** Security Token Service of workload identity federation (`token_url`). */
  sts: ['sts.googleapis.com'],
  /** IAM Credentials, for `service_account_impersonation_url`. */
  impersonation: ['iamcredentials.googleapis.com'],
} as const;

export type GoogleUse = keyof typeof GOOGLE_HOSTS;

/** Checks a URL that Google credentials name for one use against Google's host for that use. */
export function googleEndpoint(use: GoogleUse, text: string, test: readonly string[]): Verdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, host: text.slice(0, 100), why: 'not a URL' };
  }
  if (isTestOrigin(url, test)) return { ok: true, url };
  const hosts: readonly string[] = GOOGLE_HOSTS[use];
  const expected = `not Google's ${use === 'token' ? 'OAuth token' : use} host (${hosts.join(' or ')})`;
  const bad = plainHttps(url);
  if (bad) return refused(url, `${expected}: ${bad}`);
  if (!hosts.includes(url.hostname)) return refused(url, expected);
  return { ok: true, url };
}

// ---- HashiCorp Vault -----------------------------------------------------------------------------

/**
 * One entry of the `sops-vault-addresses` input, as compared: `http(s)://host[:port][/path]`,
 * lower-cased host, default port and trailing slashes dropped. Throws a sentence naming the input.
 */
export function normalizeVaultAddress(entry: string): string {
  let u: URL;
  try {
    u = new URL(entry.trim());
  } catch {
    throw new Error(
      `sops-vault-addresses: "${entry}" is not a URL: give a base URL such as https://vault.example.com:8200`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`sops-vault-addresses: "${entry}" must start with http:// or https://`);
  }
  if (u.username !== '' || u.password !== '') {
    throw new Error(`sops-vault-addresses: "${u.host}" must not carry a user name or password`);
  }
  if (u.search !== '' || u.hash !== '') {
    throw new Error(`sops-vault-addresses: "${entry}" must be a base URL without a query or fragment`);
  }
  return canonicalVault(u);
}

function canonicalVault(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/**
 * Checks a key's `vault_address` against the normalised `sops-vault-addresses`: the same scheme,
 * host, port and path, exactly. Vault receives the runner's token, so no other host is contacted.
 */
export function vaultEndpoint(address: string, allowed: readonly string[]): Verdict {
  const input = 'the sops-vault-addresses input (CLI --sops-vault-addresses)';
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    return { ok: false, host: address.slice(0, 100), why: 'vault_address is not a URL' };
  }
  const canonical = canonicalVault(u);
  const plain = u.username === '' && u.password === '' && u.search === '' && u.hash === '';
  if ((u.protocol === 'http:' || u.protocol === 'https:') && plain && allowed.includes(canonical)) {
    return { ok: true, url: u };
  }
  return {
    ok: false,
    host: u.host || address.slice(0, 100),
    why:
      allowed.length === 0
        ? `no Vault address is allowed: list ${canonical} in ${input} if this Vault may receive the runner's Vault token`
        : `${canonical} is not listed in ${input}; add it there if this Vault may receive the runner's Vault token`,
  };
}

/** The sentence a key service puts after the key's name for a refused endpoint. */
export function refusal(v: { host: string; why: string }, field: string): string {
  return `refused to contact ${v.host} (from ${field}): ${v.why}; no request was sent`;
}
