/**
 * Whether a kustomize build must learn each object's file from kustomize itself (origin
 * annotations, which cost it 16–42 % more CPU) before anything fails: only when a consumer reads
 * the files of objects that built: a parent's Flux Kustomization objects (its children are found by
 * the file they came from, reconcile/children.ts) and SOPS-encrypted objects (decrypted with the
 * file they came from, sops/resources.ts). Any other object's file is needed only for a check-run
 * annotation when it fails: then the build is traced again (BuildResult.traceOrigins in build.ts).
 * Judged on the text of the files the build reads (the copy holds only those), generously: a
 * mention in a comment asks too.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Text that may make an object whose file is read before anything fails. */
const NEEDS = /kustomize\.toolkit\.fluxcd\.io|ENC\[|^\s*sops:/m;

/** Whether `text` (a file a build reads) may hold an object whose file a consumer reads. */
export function textNeedsOrigins(text: string): boolean {
  return NEEDS.test(text);
}

/** Files read at once. */
const CONCURRENCY = 16;

/**
 * Whether any regular file below `dir` (a build's copy) needs origins (textNeedsOrigins). Links are
 * not followed (the copy keeps none that leave it; kustomize reads through the ones inside, whose
 * targets are read here as files).
 */
export async function copyNeedsOrigins(dir: string): Promise<boolean> {
  const files: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  await walk(dir);
  let found = false;
  let next = 0;
  const worker = async () => {
    while (!found && next < files.length) {
      const text = await readFile(files[next++]!, 'utf8').catch(() => '');
      if (textNeedsOrigins(text)) found = true;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return found;
}
