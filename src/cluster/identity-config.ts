/**
 * spec.kubeConfig.configMapRef: the ConfigMap that describes a remote cluster reached by workload
 * identity, read as Flux reads it (fluxcd/pkg auth: the keys `provider`, `cluster`, `address`,
 * `ca.crt`, `audiences`, `serviceAccountName`; other keys are ignored). Pure.
 *
 * Provider `generic` is built: a token of a ServiceAccount of the action's cluster, requested with
 * the TokenRequest API for the audiences (the `audiences` key, one a line; else the address as
 * written), is the bearer token at `address` (canonical `https://host:port`, as Flux makes it),
 * verified with `ca.crt` (else the system's roots). `aws`, `azure` and `gcp` exchange that token with
 * the cloud (STS, Entra ID, Google STS) and ask the cloud's cluster API for the address and CA; none
 * of those is emulated here, so they are refused by name with what is missing.
 */
import { UserError } from '../util/user-error.js';

export const IDENTITY_PROVIDERS = ['generic', 'aws', 'azure', 'gcp'] as const;
export type IdentityProvider = (typeof IDENTITY_PROVIDERS)[number];

/** What the ConfigMap asks for, checked. */
export interface IdentityTarget {
  provider: 'generic';
  /** `https://host:port`, lower-cased host, as Flux's ParseClusterAddress makes it. */
  server: string;
  /** The address as the ConfigMap writes it (the default audience). */
  address: string;
  audiences: string[];
  /** PEM, when the ConfigMap gives `ca.crt`. */
  ca?: string;
  /** The ServiceAccount (in the Kustomization's namespace) whose token is requested; absent: the action's own. */
  serviceAccountName?: string;
  /** Whether the ConfigMap has the legacy `audiences` key. */
  legacyAudiences?: boolean;
}

/** What each cloud provider needs that the run cannot do, for the refusal. */
const CLOUD: Record<Exclude<IdentityProvider, 'generic'>, string> = {
  aws:
    "EKS: the token exchanged with AWS STS (AssumeRoleWithWebIdentity, the role of the ServiceAccount's " +
    'eks.amazonaws.com/role-arn annotation), EKS DescribeCluster for the address and CA, and an EKS token ' +
    '(a presigned STS GetCallerIdentity) that only EKS accepts',
  azure:
    "AKS: the token exchanged with Microsoft Entra ID (the ServiceAccount's azure.workload.identity/client-id " +
    'and tenant-id annotations) and the AKS API for the address and CA',
  gcp:
    "GKE: the token exchanged with Google STS (the ServiceAccount's iam.gke.io/gcp-service-account or " +
    'gcp.auth.fluxcd.io/workload-identity-provider annotation) and the GKE API for the address and CA',
};

/**
 * Flux's canonical API server address: `https://` added when the text does not start with `http`,
 * https only, the port 443 when none is given, the host lower-cased, any path dropped.
 */
export function canonicalAddress(address: string): string {
  if (address === '') throw new Error('the address is empty');
  const text = address.startsWith('http') ? address : `https://${address}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`the address '${address}' is not a URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`the address '${address}' must use https`);
  if (url.username !== '' || url.password !== '') throw new Error(`the address '${address}' must not hold user info`);
  return `https://${url.hostname.toLowerCase()}:${url.port === '' ? '443' : url.port}`;
}

/** The `audiences` key: one audience a line, blanks trimmed and empty lines dropped. */
export function audiencesOf(text: string): string[] {
  return text
    .split('\n')
    .map((a) => a.trim())
    .filter((a) => a !== '');
}

const SA_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * The target the ConfigMap's `data` describes; `where` names it in every message
 * (`spec.kubeConfig.configMapRef: ConfigMap apps/edge`). A UserError for what the user must fix.
 */
export function identityTarget(data: Readonly<Record<string, string>>, where: string): IdentityTarget {
  const provider = data['provider'];
  if (provider === undefined || provider === '') {
    throw new UserError(`${where} has no key 'provider' (one of ${IDENTITY_PROVIDERS.join(', ')})`);
  }
  if (!(IDENTITY_PROVIDERS as readonly string[]).includes(provider)) {
    throw new UserError(`${where}: provider '${provider}' is not one of ${IDENTITY_PROVIDERS.join(', ')}`);
  }
  if (provider !== 'generic') {
    const p = provider as Exclude<IdentityProvider, 'generic'>;
    throw new UserError(
      `${where}: provider ${p} is not supported here: it needs ${CLOUD[p]}, which no emulator here serves, so ` +
        'it is not built. Use provider generic (the cluster trusting the service-account issuer of the ' +
        "action's cluster as an OIDC identity provider) or spec.kubeConfig.secretRef with a static kubeconfig",
    );
  }
  const address = data['address'];
  if (address === undefined || address === '') {
    throw new UserError(
      `${where} has no key 'address' (the API server of the remote cluster; provider generic needs it)`,
    );
  }
  let server: string;
  try {
    server = canonicalAddress(address);
  } catch (e) {
    throw new UserError(`${where}, key 'address': ${(e as Error).message}`);
  }
  const audiences = audiencesOf(data['audiences'] ?? '');
  const ca = data['ca.crt'];
  if (ca !== undefined && ca !== '' && !ca.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UserError(`${where}, key 'ca.crt': not a PEM certificate`);
  }
  const sa = data['serviceAccountName'];
  if (sa !== undefined && !SA_NAME.test(sa)) {
    throw new UserError(`${where}, key 'serviceAccountName': '${sa}' is not a ServiceAccount name`);
  }
  return {
    provider: 'generic',
    server,
    address,
    audiences: audiences.length > 0 ? audiences : [address],
    ...(audiences.length > 0 ? { legacyAudiences: true } : {}),
    ...(ca !== undefined && ca !== '' ? { ca } : {}),
    ...(sa !== undefined ? { serviceAccountName: sa } : {}),
  };
}

/** The ServiceAccount of a username `system:serviceaccount:<namespace>:<name>`; undefined for another user. */
export function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  const parts = username.split(':');
  if (parts.length !== 4 || parts[0] !== 'system' || parts[1] !== 'serviceaccount') return undefined;
  if (!parts[2] || !parts[3]) return undefined;
  return { namespace: parts[2], name: parts[3] };
}

/** Flux v1.10's object identity: the ServiceAccount's annotations choose the credential and its audiences. */
export const CREDENTIAL_PROVIDER_ANNOTATION = 'credential.auth.fluxcd.io/provider';
export const CREDENTIAL_AUDIENCES_ANNOTATION = 'credential.auth.fluxcd.io/audiences';

/**
 * The audiences of the token, as kustomize-controller v1.10 takes them: a ServiceAccount that opts in
 * with `credential.auth.fluxcd.io/provider` gets `credential.auth.fluxcd.io/audiences` (comma- or
 * line-separated; else the address), and the ConfigMap's legacy `audiences` key is not read; without
 * the annotation, the ConfigMap's. Only the `kubernetes` credential provider (TokenRequest) is built.
 */
export function identityAudiences(
  target: IdentityTarget,
  legacy: boolean,
  annotations: Readonly<Record<string, string>> | undefined,
  where: string,
): { audiences: string[]; note?: string } {
  const provider = annotations?.[CREDENTIAL_PROVIDER_ANNOTATION];
  if (provider === undefined) return { audiences: target.audiences };
  if (provider !== 'kubernetes') {
    throw new UserError(
      `${where}: the ServiceAccount's annotation ${CREDENTIAL_PROVIDER_ANNOTATION}: ${JSON.stringify(provider.slice(0, 60))} ` +
        "is not supported: only 'kubernetes' (a token from the TokenRequest API) is; 'spiffe' needs Flux's SPIFFE broker",
    );
  }
  const listed = (annotations?.[CREDENTIAL_AUDIENCES_ANNOTATION] ?? '')
    .split(/[,\n]/)
    .map((a) => a.trim())
    .filter((a) => a !== '');
  return {
    audiences: listed.length > 0 ? listed : [target.address],
    ...(legacy
      ? {
          note: `${where}: key 'audiences' is not read, since the ServiceAccount sets ${CREDENTIAL_PROVIDER_ANNOTATION} (use ${CREDENTIAL_AUDIENCES_ANNOTATION}, as Flux v1.10)`,
        }
      : {}),
  };
}
