/**
 * Shared shapes of the SOPS decryption stage. A SOPS document carries, under its `sops` key, the
 * data key encrypted to one or more master keys (grouped for Shamir secret sharing); a key service
 * recovers the data key from the master keys it knows how to open.
 */

import type { PlainValue } from './canary.js';

/** The formats SOPS stores, as Flux picks them from file names (`formatForPath`). */
export type SopsFormat = 'yaml' | 'json' | 'dotenv' | 'ini' | 'binary';

/** The master-key kinds SOPS writes in its metadata, by their metadata field name. */
export type MasterKeyKind = 'age' | 'pgp' | 'kms' | 'gcp_kms' | 'azure_kv' | 'hc_vault';

/** One master key entry of the `sops` metadata: its kind, the encrypted data key, and its other fields (recipient, ARN, vault address...). */
export interface MasterKey {
  kind: MasterKeyKind;
  /** The data key, encrypted to this master key (`enc`). */
  enc: string;
  /** Every other field of the entry as SOPS wrote it (`recipient`, `fp`, `arn`, `resource_id`, `vault_address`, ...). */
  fields: Readonly<Record<string, unknown>>;
}

/**
 * Something that can open master keys of some kinds: age identities, OpenPGP private keys, a
 * cloud KMS with credentials. `decrypt` returns the 32-byte data key, or undefined when this
 * service does not hold a matching key (so that the next service is tried); it throws when a key
 * it should open fails (wrong credentials, a network error), with a message naming the key.
 */
export interface KeyService {
  /** For messages: "age", "OpenPGP", "AWS KMS", ... */
  readonly name: string;
  canOpen(key: MasterKey): boolean;
  decrypt(key: MasterKey): Promise<Uint8Array | undefined>;
}

export interface DecryptOptions {
  keyServices: readonly KeyService[];
  /** Verify the MAC over the plaintext (ours: on by default; Flux skips it). */
  verifyMac: boolean;
  /** Receives every decrypted leaf value (and the data key), so that the caller can mask it. */
  onSecret?: (value: string) => void;
  /**
   * In an untrusted run: whether the base commit holds every one of these encrypted data keys (`enc`
   * of each master key). When it does not, the change made the data key (and knows every value) or
   * copied the file from elsewhere (and must not see one): the values are replaced by stand-ins
   * (stand-in.ts) and only those are given to onSecret, so that the change can neither read them
   * nor pick text to mask (the name of an object it deletes). Unset: every value is a secret.
   */
  dataKeyOnBase?: (encs: readonly string[]) => Promise<boolean>;
  /**
   * The provenance render only: after the MAC is checked, every decrypted value is replaced by what
   * this returns (a canary of the same shape, src/sops/canary.ts), so the build sees no secret.
   */
  canary?: (value: PlainValue) => PlainValue;
}

/** A decryption failure; the message says which document, key kind and key failed, never a value. */
export class SopsError extends Error {
  /** The object it is about (`Kind/namespace/name`), when it is about one. */
  readonly subject?: string;

  constructor(message: string, options?: { cause?: unknown; subject?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SopsError';
    if (options?.subject !== undefined) this.subject = options.subject;
  }
}
