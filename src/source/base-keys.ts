/**
 * Whether an encrypted SOPS data key is one the base commit of a change holds (the edge: git). In an
 * untrusted run, a SOPS file whose data key no base file holds was encrypted by the change's author
 * (a new file gets a new data key) or copied from another repository with the same recipients:
 * either way it is not opened into the build (sops/types.ts, dataKeyOnBase).
 */
import { execFile } from 'node:child_process';
import { trackChild } from '../util/lifecycle.js';

/**
 * The lines of encrypted data keys that identify them: runs of base64 of at least 32 characters (an
 * age or OpenPGP armour line, a KMS blob), random beyond their first bytes. They stand the same in a
 * YAML, JSON, dotenv or INI file, where the line breaks are escaped. Pure.
 */
export function keyLines(encs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const enc of encs) for (const m of enc.matchAll(/[A-Za-z0-9+/=]{32,}/g)) out.add(m[0]);
  return [...out];
}

/** `git grep` over the commit for one fixed line: true when found, false when not, undefined when git failed. */
function grepCommit(root: string, commit: string, line: string): Promise<boolean | undefined> {
  const args = ['grep', '-q', '-I', '-F', '-e', line, commit, '--'];
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      args,
      { cwd: root, timeout: 60_000, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
      (err) => {
        if (!err) resolve(true);
        else resolve((err as { code?: unknown }).code === 1 ? false : undefined);
      },
    );
    trackChild(child, false);
  });
}

/**
 * dataKeyOnBase for the checkout `root` and the base commit `base` (found lazily, once): false when
 * git searched the whole base commit and some line of the keys (keyLines) is not in it. Every key
 * stanza must be on the base: a file that copies one stanza of a base file beside one of its own is
 * still opened with a key its author made. Without a base, or when git fails, a key stays a secret:
 * the values it opens are masked as any other.
 */
export function dataKeysOnBase(
  root: string,
  base: () => Promise<string | undefined>,
): (encs: readonly string[]) => Promise<boolean> {
  const seen = new Map<string, Promise<boolean>>();
  const onBase = (line: string): Promise<boolean> => {
    let found = seen.get(line);
    if (found === undefined) {
      found = base().then(async (commit) =>
        commit === undefined ? true : (await grepCommit(root, commit, line)) !== false,
      );
      seen.set(line, found);
    }
    return found;
  };
  return async (encs) => {
    const lines = keyLines(encs);
    if (lines.length === 0) return true;
    return (await Promise.all(lines.map(onBase))).every(Boolean);
  };
}
