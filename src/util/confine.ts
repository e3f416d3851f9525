/**
 * The one confinement of a path a tree names to the root it belongs to (kustomize-controller's
 * SecureJoin, but refusing). Every path a Kustomization, a source definition or a kustomization names
 * (spec.path, a GitRepository's include, ArtifactGenerator copies, kustomize's entries, SOPS files) is
 * resolved here component by component, each symlink followed the way the kernel follows it (a relative
 * target from the link's directory, an absolute one from `/`), and every step is judged against the
 * root: a `..` above it, or a link whose target lies outside it, is refused, naming the file, the
 * field, the entry and the link with where it points.
 *
 * Why refuse where SecureJoin confines (re-roots `/` and clamps `..` at the root): a pull request that
 * commits `l -> /` or `l -> ../../..` means the runner's files, never the root; re-rooting would build
 * something the author did not write and hide the attempt, where a refusal tells the reviewer. A link
 * inside the root to something inside it (real repositories have them) resolves as the kernel would.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { UserError } from './user-error.js';

/** Where a path is named, for the refusal: the file (relative to the root, or a description) and the field. */
export interface PathRef {
  /** `clusters/prod/app.yaml`; empty for an input that is no file. */
  file: string;
  /** `spec.include[0].fromPath`, `resources entry`, … */
  field: string;
}

/** A symlink met on the way, as the refusal names it: its path from the root and its target as written. */
export interface LinkStep {
  link: string;
  target: string;
}

/** A path that leaves its root; the message is `<file>: <field> "<entry>" <problem>`. */
export class ConfinementError extends UserError {
  constructor(
    readonly ref: PathRef,
    readonly entry: string,
    /** What is wrong, without the file and field: `leaves the source root through a symlink: "l" -> "/"`. */
    readonly problem: string,
    readonly through?: LinkStep,
  ) {
    super(`${ref.file === '' ? '' : `${ref.file}: `}${ref.field} ${JSON.stringify(entry)} ${problem}`);
    this.name = 'ConfinementError';
  }
}

/** Links followed at most, as Linux's ELOOP limit (40): more is a loop. */
export const MAX_LINKS = 40;

export interface ConfineOptions {
  /** The directory `path` is relative to (absolute, inside the root); the root itself when absent. */
  from?: string;
  /** Called with each symlink followed (inside the root), for callers that must know. */
  onLink?: (step: LinkStep) => void;
}

/** One component still to walk, with the link whose target it came from (none: the path as written). */
interface Step {
  name: string;
  via?: LinkStep;
}

const components = (p: string): string[] => p.split(sep === '/' ? '/' : /[\\/]/);

/** `p` relative to `root` as components, or undefined when it is not inside (lexically). */
function within(root: string, p: string): string[] | undefined {
  const rel = relative(root, p);
  if (rel === '') return [];
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return components(rel);
}

/**
 * The real path of `path` (relative to `opts.from`, else to `root`; an absolute path must lie inside
 * the root) with every symlink followed and checked: the root's real path joined with what is left
 * inside it. Components that do not exist are joined as written (a target to create, say `toPath`);
 * whether the result exists is the caller's question. Throws a {@link ConfinementError} when a `..`,
 * an absolute path or a link's target leaves the root, or links loop.
 */
export async function confinedPath(
  root: string,
  path: string,
  ref: PathRef,
  opts: ConfineOptions = {},
): Promise<string> {
  const realRoot = await realpath(root);
  // A path (or a link's absolute target) is inside when it is under the root as given or as resolved.
  const inside = (p: string) => within(realRoot, p) ?? within(root, p);
  const refuse = (problem: string, through?: LinkStep): never => {
    throw new ConfinementError(ref, path, problem, through);
  };
  const leaves = (via: LinkStep | undefined): never =>
    via === undefined
      ? refuse('leaves the source root')
      : refuse(
          `leaves the source root through a symlink: ${JSON.stringify(via.link)} -> ${JSON.stringify(via.target)}`,
          via,
        );

  let at: string[];
  if (isAbsolute(path)) {
    at = inside(path) ?? refuse('leaves the source root (an absolute path outside it)');
  } else if (opts.from !== undefined) {
    at = inside(opts.from) ?? inside(await realpath(opts.from)) ?? refuse('is named from outside the source root');
    at.push(...components(path));
  } else {
    at = components(path);
  }
  // Everything is walked from the root: the start (already judged lexically) is walked as steps too,
  // so that a symlink in `from` itself is followed and judged.
  const queue: Step[] = at.map((name) => ({ name }));
  const done: string[] = [];
  let links = 0;
  let exists = true;
  while (queue.length > 0) {
    const { name, via } = queue.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (done.length === 0) leaves(via);
      done.pop();
      continue;
    }
    done.push(name);
    if (!exists) continue;
    const abs = join(realRoot, ...done);
    const info = await lstat(abs).catch(() => undefined);
    if (info === undefined) {
      // Nothing below a missing entry can be a link: the rest is joined as written.
      exists = false;
      continue;
    }
    if (!info.isSymbolicLink()) continue;
    const step: LinkStep = { link: done.join('/'), target: await readlink(abs) };
    if (++links > MAX_LINKS) {
      refuse(
        `goes through more than ${MAX_LINKS} symlinks (a loop?), the last ${JSON.stringify(step.link)} -> ${JSON.stringify(step.target)}`,
        step,
      );
    }
    done.pop();
    if (isAbsolute(step.target)) {
      const rel = inside(step.target) ?? leaves(step);
      // An absolute target inside the root is walked again from the root: its own links are judged too.
      done.length = 0;
      queue.unshift(...rel.map((n) => ({ name: n, via: step })));
    } else {
      queue.unshift(...components(step.target).map((n) => ({ name: n, via: step })));
    }
    opts.onLink?.(step);
  }
  return join(realRoot, ...done);
}

/**
 * Whether the entry at `rel` (components from the root) is a symlink whose target, followed to the
 * end, leaves the root: the refusal, or undefined when it stays (or is no link).
 */
export async function escapingLink(root: string, rel: readonly string[]): Promise<ConfinementError | undefined> {
  try {
    await confinedPath(root, rel.join('/'), { file: '', field: 'symlink' });
    return undefined;
  } catch (err) {
    if (err instanceof ConfinementError) return err;
    throw err;
  }
}
