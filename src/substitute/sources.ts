import type { ClusterClient } from '../cluster/client.js';
import { isNotFound } from '../cluster/errors.js';
import { CONFIGMAPS, get, SECRETS } from '../cluster/verbs.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { VariableLayer } from './variables.js';

/**
 * Reads `postBuild.substituteFrom` from the cluster, in list order (later entries win when the
 * layers are merged): a ConfigMap's `data`, a Secret's `data` base64-decoded, both from the
 * Kustomization's namespace. `optional: true` tolerates NotFound only. Every Secret value goes to
 * `secret` before it is used, so that it can be masked.
 */
export async function readSubstituteFrom(
  client: ClusterClient,
  spec: KustomizationSpec,
  secret: (value: string) => void,
): Promise<VariableLayer[]> {
  const layers: VariableLayer[] = [];
  for (const [i, ref] of (spec.postBuild?.substituteFrom ?? []).entries()) {
    const where = `spec.postBuild.substituteFrom[${i}]`;
    const source = `${ref.kind} ${spec.namespace}/${ref.name}`;
    const resource = ref.kind === 'Secret' ? SECRETS : CONFIGMAPS;
    let obj: { data?: Record<string, string> };
    try {
      obj = await get(client, { resource, namespace: spec.namespace, name: ref.name });
    } catch (err) {
      if (isNotFound(err) && ref.optional) continue;
      if (isNotFound(err)) {
        throw new Error(`${where}: ${source} not found; create it, or set optional: true to allow it to be missing`, {
          cause: err,
        });
      }
      throw new Error(`${where}: reading ${source}: ${(err as Error).message}`, { cause: err });
    }
    const vars: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj.data ?? {})) {
      if (ref.kind === 'Secret') {
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        // Masked whole and line by line: Flux strips newlines, so the used value is the joined lines.
        for (const s of [decoded, decoded.replaceAll('\n', ''), ...decoded.split('\n')]) if (s.length >= 3) secret(s);
        vars[k] = decoded;
      } else {
        vars[k] = v;
      }
    }
    layers.push({ source, vars, ...(ref.kind === 'Secret' ? { secret: true } : {}) });
  }
  return layers;
}
