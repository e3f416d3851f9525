import type { ClusterClient } from '../cluster/client.js';
import { isNotFound } from '../cluster/errors.js';
import { get, SECRETS } from '../cluster/verbs.js';
import type { KustomizationSpec } from '../flux/types.js';
import { ageKeyService } from './age.js';
import { awsKmsKeyService } from './kms/aws.js';
import { azureKeyVaultKeyService } from './kms/azure.js';
import { gcpKmsKeyService } from './kms/gcp.js';
import { vaultTransitKeyService } from './kms/vault.js';
import { pgpKeyService } from './pgp.js';
import type { KeyService } from './types.js';

/** Key material given to the run itself (action inputs or CLI flags). */
export interface InputKeys {
  /** Text of one or more age identity files. */
  age?: string;
  /** One or more ASCII-armoured OpenPGP private keys. */
  pgp?: string;
  /**
   * The Vault addresses a SOPS file's `hc_vault` key may name (the `sops-vault-addresses` input,
   * normalised): Vault receives the runner's token, so any other address is not contacted.
   */
  vaultAddresses?: readonly string[];
}

/** The decryption Secret's entries, as Flux reads them (`*.agekey`, `*.asc`, `sops.*`). */
export interface SecretKeys {
  age: string[];
  pgp: string[];
  vaultToken?: string;
  awsKms?: string;
  azureKv?: string;
  gcpKms?: string;
}

/** Sorts a decryption Secret's decoded data into key kinds; unknown entries are ignored, as in Flux. */
export function classifySecretKeys(data: Readonly<Record<string, string>>): SecretKeys {
  const out: SecretKeys = { age: [], pgp: [] };
  for (const [name, value] of Object.entries(data)) {
    if (name.endsWith('.agekey')) out.age.push(value);
    else if (name.endsWith('.asc')) out.pgp.push(value);
    else if (name === 'sops.vault-token') out.vaultToken = value.trim();
    else if (name === 'sops.aws-kms') out.awsKms = value;
    else if (name === 'sops.azure-kv') out.azureKv = value;
    else if (name === 'sops.gcp-kms') out.gcpKms = value;
  }
  return out;
}

/**
 * Reads `spec.decryption.secretRef` from the Kustomization's namespace and hands every value to
 * `secret` for masking before anything else sees it.
 */
export async function readDecryptionSecret(
  client: ClusterClient,
  spec: KustomizationSpec,
  secret: (v: string) => void,
): Promise<SecretKeys | undefined> {
  const name = spec.decryption?.secretRef?.name;
  if (!name) return undefined;
  let obj: { data?: Record<string, string> };
  try {
    obj = await get(client, { resource: SECRETS, namespace: spec.namespace, name });
  } catch (err) {
    const why = isNotFound(err) ? 'not found' : (err as Error).message;
    throw new Error(`spec.decryption.secretRef: Secret ${spec.namespace}/${name}: ${why}`, { cause: err });
  }
  const decoded: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj.data ?? {})) {
    decoded[k] = Buffer.from(v, 'base64').toString('utf8');
    maskLines(decoded[k], secret);
  }
  return classifySecretKeys(decoded);
}

/**
 * The key services for one Kustomization, most specific first: the decryption Secret's keys, the
 * run's own keys, then the cloud KMS services with the runner's ambient credentials (OIDC-federated
 * environment variables), which open only the master keys of their kind.
 */
export function keyServices(
  inputs: InputKeys,
  fromSecret: SecretKeys | undefined,
  env: NodeJS.ProcessEnv,
): KeyService[] {
  const services: KeyService[] = [];
  const age = [...(fromSecret?.age ?? []), inputs.age ?? ''].filter((t) => t.trim() !== '').join('\n');
  const pgp = [...(fromSecret?.pgp ?? []), inputs.pgp ?? ''].filter((t) => t.trim() !== '').join('\n');
  if (age) services.push(ageKeyService(age));
  if (pgp) services.push(pgpKeyService(pgp));
  services.push(awsKmsKeyService(fromSecret?.awsKms ? parseAwsCredentials(fromSecret.awsKms) : undefined, env));
  services.push(gcpKmsKeyService(fromSecret?.gcpKms, env));
  services.push(azureKeyVaultKeyService(fromSecret?.azureKv, env));
  services.push(vaultTransitKeyService(fromSecret?.vaultToken, env, inputs.vaultAddresses ?? []));
  return services;
}

/** Flux's `sops.aws-kms` entry: YAML `{aws_access_key_id, aws_secret_access_key, aws_session_token?}`. */
function parseAwsCredentials(text: string): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
  const field = (name: string) => new RegExp(`^\\s*${name}\\s*:\\s*["']?([^"'\\s]+)["']?\\s*$`, 'm').exec(text)?.[1];
  const accessKeyId = field('aws_access_key_id');
  const secretAccessKey = field('aws_secret_access_key');
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('sops.aws-kms: expected YAML with aws_access_key_id and aws_secret_access_key');
  }
  const sessionToken = field('aws_session_token');
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/** Masks a key text whole and line by line (identity files hold several keys). */
export function maskLines(text: string, secret: (v: string) => void): void {
  if (text.trim().length >= 6) secret(text.trim());
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (l.length >= 6 && !l.startsWith('#') && !l.startsWith('-----')) secret(l);
  }
}
