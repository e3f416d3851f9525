/**
 * Paths inside the source root, the only place a build may read from: judged with symlinks resolved,
 * as Flux's root-confined file system judges them.
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UserError } from '../util/user-error.js';

/** A path (spec.path, the path input) that cannot be built, and why: the message is `path "<path>" <problem>`. */
export class PathError extends UserError {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`path "${path}" ${problem}`);
    this.name = 'PathError';
  }
}

/** Joins `path` to `root` and refuses a result outside the root, symlinks resolved. */
export async function resolveInsideRoot(root: string, path: string): Promise<string> {
  const realRoot = await realpath(root);
  const joined = resolve(realRoot, path);
  if (!isInside(realRoot, joined)) {
    throw new PathError(path, `leaves the source root ${realRoot}; it must name a directory inside it`);
  }
  let real: string;
  try {
    real = await realpath(joined);
  } catch {
    throw new PathError(path, `does not exist under the source root ${realRoot}`);
  }
  if (!isInside(realRoot, real)) {
    throw new PathError(
      path,
      `leaves the source root ${realRoot} through a symlink; it must name a directory inside it`,
    );
  }
  const info = await stat(real);
  if (!info.isDirectory()) {
    throw new PathError(path, `is a file; it must be a directory (with or without a kustomization.yaml)`);
  }
  return real;
}

export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export function toPosix(p: string): string {
  return p.split(sep).join('/');
}
