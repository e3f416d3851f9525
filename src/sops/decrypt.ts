/**
 * Native SOPS decryption: the data key is recovered from the master keys in the `sops` metadata
 * (through the key services, with Shamir secret sharing across key groups), every value is
 * decrypted with AES-256-GCM, and the MAC is recomputed and compared, as `sops decrypt` does.
 * This file is the entry (format detection, `decryptText`, `decryptTree`); the parts, as sops
 * v3.13.2 has them: the stores in `stores/` (`stores/{yaml,json,dotenv,ini}/store.go`), the tree
 * (`tree.ts`), the metadata and its flattening (`metadata.ts`: `stores/stores.go`,
 * `stores/flatten.go`), key groups (`datakey.ts`) and `shamir.ts`, the values (`cipher.ts`:
 * `aes/cipher.go`), the walk and MAC (`walk.ts`: `sops.go`), and Go's scalar formats
 * (`goformat.ts`). Errors never contain a decrypted value or the data key.
 */
import { decryptDotenv } from './stores/dotenv.js';
import { decryptIni } from './stores/ini.js';
import { decryptBinary, decryptJson } from './stores/json.js';
import { decryptYaml } from './stores/yaml.js';
import { isRecord } from '../util/record.js';
import { jsToTree, toPlainJs, type MapNode } from './tree.js';
import { SopsError, type DecryptOptions, type SopsFormat } from './types.js';
import { decryptLoaded } from './walk.js';

// ---------------------------------------------------------------------------------------------
// Format detection (Flux's rules)

/** Flux's marker bytes per format (`kustomize-controller internal/decryptor`). */
const MARKERS: Readonly<Record<SopsFormat, string>> = {
  yaml: 'mac: ENC[',
  json: '"mac": "ENC[',
  binary: '"mac": "ENC[',
  dotenv: 'sops_mac=ENC[',
  ini: '[sops]',
};

/** True when `text` carries the SOPS marker bytes of `format`, as Flux decides which files to decrypt. */
export function isSopsEncrypted(text: string, format: SopsFormat): boolean {
  return text.includes(MARKERS[format]);
}

/** The SOPS format Flux uses for a file or Secret key name: by suffix, `.dockerconfigjson` being JSON, else binary. */
export function formatForPath(path: string): SopsFormat {
  if (path.endsWith('.dockerconfigjson')) return 'json';
  if (path.endsWith('.yaml') || path.endsWith('.yml')) return 'yaml';
  if (path.endsWith('.json')) return 'json';
  if (path.endsWith('.env')) return 'dotenv';
  if (path.endsWith('.ini')) return 'ini';
  return 'binary';
}

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * Decrypts a whole SOPS file and returns the plaintext in the same format, without the `sops`
 * metadata. YAML keeps its key order, comments and layout (through the `yaml` package); JSON,
 * dotenv and INI are written as `sops decrypt` writes them; binary returns the stored content.
 */
export async function decryptText(text: string, format: SopsFormat, opts: DecryptOptions): Promise<string> {
  switch (format) {
    case 'yaml':
      return decryptYaml(text, opts);
    case 'json':
      return decryptJson(text, opts);
    case 'binary':
      return decryptBinary(text, opts);
    case 'dotenv':
      return decryptDotenv(text, opts);
    case 'ini':
      return decryptIni(text, opts);
  }
}

/**
 * Decrypts a parsed document with a top-level `sops` map (e.g. a Kubernetes object after the
 * kustomize build) and returns it without `sops`. Integers come back as numbers. Key order is the
 * object's, so the MAC only verifies when that is the file's order (callers after kustomize pass
 * `verifyMac: false`, as Flux does). A parsed document has no comments: a file encrypted with
 * `encrypted_comment_regex` or `unencrypted_comment_regex` has every value in the SOPS envelope
 * decrypted (kustomize-controller v1.10), and its MAC cannot be checked on the tree (an error with
 * `verifyMac`).
 */
export async function decryptTree(
  tree: Record<string, unknown>,
  opts: DecryptOptions,
): Promise<Record<string, unknown>> {
  const { sops, ...data } = tree;
  if (!isRecord(sops)) throw new SopsError('sops metadata not found');
  const branch = jsToTree(data, 0) as MapNode;
  await decryptLoaded([branch], sops, opts, true);
  return toPlainJs(branch) as Record<string, unknown>;
}
