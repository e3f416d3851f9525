import { parseAllDocuments } from 'yaml';
import { yamlShapeOver } from '../util/yaml-shape.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';
import { encryptedLeftovers } from '../ssa/mask.js';
import { decryptText, decryptTree, formatForPath, isSopsEncrypted } from './decrypt.js';
import { SopsError, type DecryptOptions, type SopsFormat } from './types.js';
import { FLUX_GROUP } from '../objects/flux.js';

export const DECRYPT_KEY = `${FLUX_GROUP}/decrypt`;

/** Flux's opt-out: the annotation `kustomize.toolkit.fluxcd.io/decrypt: Disabled` (any case). */
export function decryptionDisabled(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[DECRYPT_KEY]?.toLowerCase() === 'disabled';
}

/** True when the object carries SOPS metadata with a MAC: the whole resource is encrypted. */
export function isEncryptedResource(obj: KubeObject): boolean {
  const sops = obj['sops'];
  return (
    typeof sops === 'object' &&
    sops !== null &&
    typeof (sops as Record<string, unknown>)['mac'] === 'string' &&
    (sops as Record<string, unknown>)['mac'] !== ''
  );
}

const VALUE_FORMATS: SopsFormat[] = ['yaml', 'json', 'dotenv', 'ini'];

export interface ResourceDecryptOptions extends DecryptOptions {
  /**
   * The source text of an object's file, so that its MAC can be checked there: kustomize changes
   * metadata (namespace, labels) and so the built object no longer matches its own MAC.
   */
  sourceOf?: (obj: KubeObject) => Promise<string | undefined>;
  /** The object's source file relative to the root, for error messages. */
  originOf?: (obj: KubeObject) => string | undefined;
  note?: (line: string) => void;
  /** The fields (JSON pointers) that were ciphertext, of the object at `index`, for each object that has any. */
  onSecretPaths?: (index: number, paths: string[]) => void;
}

/** The JSON pointers of the leaves of an encrypted document that hold SOPS ciphertext (`ENC[…]`). */
export function cipherPaths(doc: unknown, path = ''): string[] {
  if (typeof doc === 'string') return doc.startsWith('ENC[') ? [path] : [];
  if (Array.isArray(doc)) return doc.flatMap((v, i) => cipherPaths(v, `${path}/${i}`));
  if (typeof doc !== 'object' || doc === null) return [];
  return Object.entries(doc).flatMap(([k, v]) =>
    k === 'sops' && path === '' ? [] : cipherPaths(v, `${path}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`),
  );
}

/**
 * Flux's decryption after the build, per resource: a resource with SOPS metadata is decrypted whole
 * (any kind), and each `data` value of a Secret that holds a SOPS document (from a secretGenerator)
 * is decrypted and re-encoded. With verifyMac, a whole resource's MAC is checked on its source file.
 */
export async function decryptResources(
  objects: readonly KubeObject[],
  opts: ResourceDecryptOptions,
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const [index, obj] of objects.entries()) {
    if (decryptionDisabled(obj)) {
      out.push(obj);
      continue;
    }
    const subject = subjectOf(obj);
    let current = obj;
    const paths: string[] = [];
    try {
      if (isEncryptedResource(obj)) {
        if (opts.verifyMac) await verifySourceMac(obj, subject, opts);
        current = (await decryptTree(obj, { ...opts, verifyMac: false })) as KubeObject;
        paths.push(...cipherPaths(obj));
      }
      if (current.kind === 'Secret' && current.apiVersion === 'v1') {
        const before = current;
        current = await decryptSecretValues(current, opts);
        const data = (current['data'] ?? {}) as Record<string, unknown>;
        const old = (before['data'] ?? {}) as Record<string, unknown>;
        for (const k of Object.keys(data))
          if (data[k] !== old[k]) paths.push(`/data/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      }
      if (paths.length > 0) opts.onSecretPaths?.(index, paths);
    } catch (err) {
      const origin = opts.originOf?.(obj);
      throw new SopsError(
        `${subject}${origin ? ` (${origin})` : ''}: SOPS decryption failed: ${(err as Error).message}`,
        { cause: err, subject },
      );
    }
    out.push(current);
  }
  return out;
}

async function verifySourceMac(obj: KubeObject, subject: string, opts: ResourceDecryptOptions): Promise<void> {
  const mac = (obj['sops'] as Record<string, unknown>)['mac'];
  const text = await opts.sourceOf?.(obj);
  // The source text whose MAC is the built object's: its own text is checked, so that comments
  // (which decide what a comment rule encrypted), key order and number formats are exactly what
  // sops hashed.
  const signed = text === undefined ? undefined : signedText(text, mac);
  if (signed === undefined) {
    opts.note?.(
      `${subject}: SOPS MAC not verified: its source document was not found (a remote base or a generated object)`,
    );
    return;
  }
  await decryptText(signed, 'yaml', { ...opts, verifyMac: true, onSecret: () => {} });
}

/**
 * The part of a source file that sops signed with `mac`: the document that carries it, with the
 * comments above its first key (the yaml package starts the first document's range after them), or,
 * when several documents carry it, the stream from the first to the last of them (sops encrypts a
 * multi-document file as one, every document holding the same metadata and the MAC covering all).
 */
export function signedText(text: string, mac: unknown): string | undefined {
  if (yamlShapeOver(text) !== undefined) return undefined;
  const docs = parseAllDocuments(text, { uniqueKeys: false, logLevel: 'error' });
  const signed = docs.filter((d) => {
    const js = d.toJS({ maxAliasCount: 100 }) as { sops?: { mac?: unknown } } | null;
    return js?.sops?.mac === mac;
  });
  const first = signed[0];
  const last = signed.at(-1);
  if (first?.range === undefined || last?.range === undefined) return undefined;
  return text.slice(first === docs[0] ? 0 : first.range[0], last.range[2]);
}

async function decryptSecretValues(secret: KubeObject, opts: DecryptOptions): Promise<KubeObject> {
  const data = secret['data'];
  if (typeof data !== 'object' || data === null) return secret;
  let changed = false;
  const next: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    next[key] = value;
    if (typeof value !== 'string') continue;
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const format = VALUE_FORMATS.find((f) => isSopsEncrypted(decoded, f));
    if (!format) continue;
    try {
      // Flux writes the plaintext in the format the key's name calls for (formatForPath): a key
      // without a known extension gets the binary store's value, the document's `data` entry.
      const target = formatForPath(key) === 'binary' && format === 'json' ? 'binary' : format;
      next[key] = Buffer.from(await decryptText(decoded, target, opts), 'utf8').toString('base64');
    } catch (err) {
      throw new Error(`data.${key}: ${(err as Error).message}`, { cause: err });
    }
    changed = true;
  }
  return changed ? { ...secret, data: next } : secret;
}

/**
 * The guard before apply: an object still carrying SOPS metadata would reach the cluster as
 * ciphertext. Returns Flux's message for each (empty when there are none).
 */
export function stillEncrypted(objects: readonly KubeObject[]): string[] {
  return objects
    .filter((o) => isEncryptedResource(o) && !decryptionDisabled(o))
    .map(
      (o) =>
        `${subjectOf(o)} is SOPS encrypted, configuring decryption is required for this ${o.kind === 'Secret' ? 'secret' : 'resource'} to be reconciled (set spec.decryption, or give the sops-age-key / sops-pgp-key input)`,
    );
}

/**
 * After decryption no value may still be SOPS ciphertext: a file whose `sops` metadata was removed
 * (a dotenv without its `sops_*` lines) would otherwise be deployed as `ENC[AES256_GCM,…]` text.
 * Throws naming each object, its source file and the fields. Objects that still carry SOPS metadata
 * are left to {@link stillEncrypted}.
 */
export function refuseCiphertext(
  objects: readonly KubeObject[],
  originOf: (obj: KubeObject) => string | undefined,
): void {
  const problems = objects.flatMap((o) => {
    if (isEncryptedResource(o) || decryptionDisabled(o)) return [];
    const paths = encryptedLeftovers(o);
    if (paths.length === 0) return [];
    const origin = originOf(o);
    return [
      `${subjectOf(o)}${origin ? ` (${origin})` : ''}: ${paths.join(', ')} still hold${paths.length === 1 ? 's' : ''} SOPS ciphertext (ENC[AES256_GCM,…]) after decryption: either no decryption was configured for it (set spec.decryption, or give the sops-age-key / sops-pgp-key input) or its file lost its SOPS metadata (for a dotenv file, its sops_* lines: encrypt it again with sops)`,
    ];
  });
  if (problems.length > 0) throw new SopsError(problems.join('\n'));
}
