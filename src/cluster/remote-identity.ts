/**
 * spec.kubeConfig.configMapRef with provider generic: the remote cluster is reached with a token of a
 * ServiceAccount of the action's cluster (the management cluster), as Flux's generic provider does
 * it. The ConfigMap is read from the management cluster with the action's identity (never from the
 * tree: a pull request cannot choose where the token goes); the token is asked of the TokenRequest
 * API for the ConfigMap's `serviceAccountName` in the Kustomization's namespace, else for the
 * action's own identity when that is a ServiceAccount (Flux: the controller's own). The remote
 * cluster must trust the management cluster's service-account issuer (a JWT authenticator).
 */
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { UserError } from '../util/user-error.js';
import type { ClusterClient } from './client.js';
import { isNotFound } from './errors.js';
import { identityAudiences, identityTarget, serviceAccountOf, type IdentityTarget } from './identity-config.js';

const CM_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** A remote cluster reached by workload identity: its kubeconfig (bearer token) and how it was made. */
export interface IdentityKubeConfig {
  kc: KubeConfig;
  target: IdentityTarget;
  /** `namespace/name` of the ServiceAccount whose token it is. */
  serviceAccount: string;
  /** The token (a secret: registered by the caller). */
  token: string;
}

async function readConfigMap(management: ClusterClient, namespace: string, name: string, where: string) {
  if (!CM_NAME.test(name)) throw new UserError(`${where}: the name is not a ConfigMap name (DNS-1123 subdomain)`);
  try {
    const cm = await management.request<{ data?: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`,
    );
    return cm.data ?? {};
  } catch (err) {
    if (isNotFound(err)) throw new UserError(`${where} not found`, { cause: err });
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
}

/** The ServiceAccount the action authenticates as, from a SelfSubjectReview; undefined for another user. */
async function ownServiceAccount(
  management: ClusterClient,
): Promise<{ user: string; sa?: { namespace: string; name: string } }> {
  const review = await management.request<{ status?: { userInfo?: { username?: string } } }>(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
  );
  const user = review.status?.userInfo?.username ?? '';
  const sa = serviceAccountOf(user);
  return sa ? { user, sa } : { user };
}

/** A token of ServiceAccount `namespace/name` for `audiences`, from the TokenRequest API. */
async function requestToken(
  management: ClusterClient,
  sa: { namespace: string; name: string },
  audiences: string[],
  where: string,
): Promise<string> {
  const path = `/api/v1/namespaces/${encodeURIComponent(sa.namespace)}/serviceaccounts/${encodeURIComponent(sa.name)}/token`;
  try {
    const answer = await management.request<{ status?: { token?: string } }>('POST', path, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences } },
    });
    const token = answer.status?.token;
    if (!token) throw new Error('the TokenRequest answer holds no token');
    return token;
  } catch (err) {
    const account = `ServiceAccount ${sa.namespace}/${sa.name}`;
    if (isNotFound(err)) throw new UserError(`${where}: ${account} not found`, { cause: err });
    throw new Error(`${where}: requesting a token of ${account}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Reads ConfigMap `namespace/ref.name` of the management cluster and returns a kubeconfig for the
 * cluster it names, with a fresh token of its ServiceAccount. `note` hears which account and audiences.
 */
export async function identityKubeConfig(
  management: ClusterClient,
  namespace: string,
  ref: { name: string },
  note: (line: string) => void,
): Promise<IdentityKubeConfig> {
  const where = `spec.kubeConfig.configMapRef: ConfigMap ${namespace}/${ref.name}`;
  const target = identityTarget(await readConfigMap(management, namespace, ref.name, where), where);
  let sa: { namespace: string; name: string };
  if (target.serviceAccountName !== undefined) {
    sa = { namespace, name: target.serviceAccountName };
  } else {
    const own = await ownServiceAccount(management);
    if (own.sa === undefined) {
      throw new UserError(
        `${where} has no key 'serviceAccountName', and the action's identity (${own.user || 'unknown'}) is not ` +
          "a ServiceAccount whose token could be requested (Flux uses the controller's own ServiceAccount): " +
          'name the ServiceAccount in the ConfigMap',
      );
    }
    sa = own.sa;
  }
  // Flux v1.10's object identity: the ServiceAccount's annotations may choose the audiences. A read the
  // action may not make leaves the ConfigMap's (the TokenRequest then says what is wrong with the account).
  const account = await management
    .request<{ metadata?: { annotations?: Record<string, string> } }>(
      'GET',
      `/api/v1/namespaces/${encodeURIComponent(sa.namespace)}/serviceaccounts/${encodeURIComponent(sa.name)}`,
    )
    .catch(() => undefined);
  const chosen = identityAudiences(target, target.legacyAudiences === true, account?.metadata?.annotations, where);
  if (chosen.note !== undefined) note(chosen.note);
  const audiences = chosen.audiences;
  const token = await requestToken(management, sa, audiences, where);
  note(
    `${where}: provider generic, a token of ServiceAccount ${sa.namespace}/${sa.name} for ` +
      `audience${audiences.length === 1 ? '' : 's'} ${audiences.join(', ')} presented to ${target.server}`,
  );
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'remote',
        server: target.server,
        skipTLSVerify: false,
        ...(target.ca !== undefined ? { caData: Buffer.from(target.ca).toString('base64') } : {}),
      },
    ],
    users: [{ name: 'remote', token }],
    contexts: [{ name: 'remote', cluster: 'remote', user: 'remote' }],
    currentContext: 'remote',
  });
  return { kc, target, serviceAccount: `${sa.namespace}/${sa.name}`, token };
}
