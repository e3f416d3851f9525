/**
 * Paths inside the source root, the only place a build may read from: judged with symlinks resolved,
 * as Flux's root-confined file system judges them.
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { ConfinementError, confinedPath } from '../util/confine.js';
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

/**
 * Joins `path` to `root` and refuses a result outside the root, every symlink on the way followed and
 * judged (util/confine.ts); the directory's real path.
 */
export async function resolveInsideRoot(root: string, path: string): Promise<string> {
  const realRoot = await realpath(root);
  let real: string;
  try {
    real = await confinedPath(realRoot, path, { file: '', field: 'path' });
  } catch (err) {
    if (err instanceof ConfinementError) {
      throw new PathError(path, `${err.problem}; it must name a directory inside it`);
    }
    throw err;
  }
  const info = await stat(real).catch(() => undefined);
  if (info === undefined) throw new PathError(path, `does not exist under the source root ${realRoot}`);
  if (!info.isDirectory()) {
    throw new PathError(path, `is a file; it must be a directory (with or without a kustomization.yaml)`);
  }
  return real;
}

/**
 * The real path of the kustomization file `file` of `dir` (in the copy below `root`; `shown` names it),
 * refused, naming the link, when a symlink takes it out of the root: kustomize would read it, and
 * the merged kustomization be written over it.
 */
export async function kustomizationFileInside(root: string, dir: string, file: string, shown: string): Promise<string> {
  try {
    return await confinedPath(root, file, { file: shown, field: 'kustomization file' }, { from: dir });
  } catch (err) {
    if (!(err instanceof ConfinementError)) throw err;
    const link = err.through ? ` (${JSON.stringify(err.through.link)} -> ${JSON.stringify(err.through.target)})` : '';
    throw new UserError(`${shown} is a symlink that leaves the source root; it is not read${link}`, { cause: err });
  }
}

export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export function toPosix(p: string): string {
  return p.split(sep).join('/');
}
