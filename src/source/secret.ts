/** Reading a GitRepository's spec.secretRef Secret from the action's cluster (the edge). */
import type { ClusterClient } from '../cluster/client.js';
import { get, SECRETS } from '../cluster/verbs.js';

/** The Secret's data, decoded, as fetchGitRepository's readSecret wants it. */
export function secretReader(
  client: ClusterClient,
): (namespace: string, name: string) => Promise<Record<string, string>> {
  return async (namespace, name) => {
    const secret = await get<{ data?: Record<string, string> }>(client, { resource: SECRETS, namespace, name });
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
    return out;
  };
}
