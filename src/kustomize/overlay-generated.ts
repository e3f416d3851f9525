/**
 * Flux's generated kustomization (generate.ts) for a top directory without a kustomization file, in
 * the in-process build (overlay.ts): the parent of the parent/children layout, a plain `apps/` of
 * folders that each hold a kustomization.yaml. Its resources follow Flux's walk (depth first, each
 * directory's entries by name): every `.yaml`/`.yml` file, and a subdirectory with a kustomization
 * file as one resource, not looked into. Read from the listing the build already has (what the
 * artifact holds); undefined when kustomize must say: a symlink on the way, a file kustomize's
 * resource factory would refuse, or no resource at all (Flux's placeholder kustomization).
 */
import { readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { byBytes } from '../util/order.js';
import { KUSTOMIZATION_FILES, manifestFileProblem } from './generate.js';
import type { Lookup } from './overlay-types.js';

/** A file larger than this is left to kustomize (as overlay.ts leaves it). */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/**
 * The generated kustomization of `top` (a posix path from `root`) as its text, or undefined.
 * `children` lists each directory's entry names (`.` for the root).
 */
export function generatedKustomization(
  root: string,
  top: string,
  lookup: Lookup,
  children: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  const resources: string[] = [];
  const relative = (p: string) => `./${top === '.' ? p : p.slice(top.length + 1)}`;
  const walk = (dir: string): boolean => {
    for (const name of [...(children.get(dir) ?? [])].sort(byBytes)) {
      const path = dir === '.' ? name : `${dir}/${name}`;
      const type = lookup(path);
      if (type === undefined) continue;
      if (type === 'symlink') return false;
      if (type === 'dir') {
        if (KUSTOMIZATION_FILES.some((f) => lookup(`${path}/${f}`) !== undefined)) resources.push(relative(path));
        else if (!walk(path)) return false;
        continue;
      }
      if (!/\.ya?ml$/.test(name)) continue;
      const full = posix.join(root, path);
      if (statSync(full).size > MAX_FILE_BYTES) return false;
      if (manifestFileProblem(readFileSync(full, 'utf8'), path) !== undefined) return false;
      resources.push(relative(path));
    }
    return true;
  };
  if (!walk(top) || resources.length === 0) return undefined;
  return JSON.stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources });
}
