import type { KubeObject } from './objects/kube.js';
import { setOwnerLabels } from './ssa/policy.js';

/**
 * The objects as `build` prints them, as `flux build kustomization` prints them (flux2
 * internal/build): with the owner labels the apply sets, and, unless secrets were asked for, each
 * SOPS-encrypted Secret value replaced by Flux's mask. Flux masks nothing else: a Secret written in
 * clear in the repository is printed as it is there. (Fields written from a postBuild.substituteFrom
 * Secret are masked before this, by maskSecretFields: docs/flux-differences.md.)
 */
export function buildOutput(
  objects: readonly KubeObject[],
  owner: { name: string; namespace: string },
  showSecrets: boolean,
): KubeObject[] {
  const labelled = setOwnerLabels(objects, owner.name, owner.namespace);
  return showSecrets ? labelled : labelled.map(maskSops);
}

/** Flux's mask, and how it appears in a Secret's data (base64) and in a dockerconfigjson value. */
export const SOPS_MASK = '**SOPS**';
const MASK_B64 = Buffer.from(SOPS_MASK).toString('base64');
const DOCKER_MASK = JSON.stringify({ mask: SOPS_MASK });

/**
 * One Secret as Flux's build masks it. An encrypted Secret manifest (a `sops` map whose `mac` is
 * `ENC[...]`) loses that map and has every data and stringData value masked, a
 * `kubernetes.io/dockerconfigjson` one with a JSON object in place of each value. Otherwise only
 * values that are themselves SOPS documents (a generator's encrypted file: its text holds `sops`
 * and `ENC[`) are masked; in stringData too with the base64 mask, as Flux does.
 */
export function maskSops(obj: KubeObject): KubeObject {
  if (obj.kind !== 'Secret') return obj;
  const data = stringMap(obj['data']);
  const strings = stringMap(obj['stringData']);
  const out: KubeObject = { ...obj };
  if (encryptedManifest(obj)) {
    delete out['sops'];
    const docker = obj['type'] === 'kubernetes.io/dockerconfigjson';
    if (data) out['data'] = mapValues(data, () => (docker ? Buffer.from(DOCKER_MASK).toString('base64') : MASK_B64));
    if (strings) out['stringData'] = mapValues(strings, () => (docker ? DOCKER_MASK : SOPS_MASK));
    return out;
  }
  if (data) out['data'] = mapValues(data, (v) => (sopsText(Buffer.from(v, 'base64').toString('utf8')) ? MASK_B64 : v));
  if (strings) out['stringData'] = mapValues(strings, (v) => (sopsText(v) ? MASK_B64 : v));
  return out;
}

function encryptedManifest(obj: KubeObject): boolean {
  const sops = obj['sops'];
  if (typeof sops !== 'object' || sops === null) return false;
  const mac = (sops as Record<string, unknown>)['mac'];
  return typeof mac === 'string' && mac.startsWith('ENC[');
}

function sopsText(text: string): boolean {
  return text.includes('sops') && text.includes('ENC[');
}

function stringMap(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : String(x)]));
}

function mapValues(m: Record<string, string>, fn: (v: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, fn(v)]));
}
