import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { stringify } from 'yaml';
import { generateKustomization, KUSTOMIZATION_FILES, type Entry } from './generate.js';
import { parseManifests, type KubeObject } from './parse.js';

export interface BuildOptions {
  /** The source root (the workspace); `path` is relative to it and may not leave it. */
  root: string;
  /** Directory to build, relative to `root`. */
  path: string;
  /** The kustomize binary: a path, or a name looked up on PATH. */
  kustomizeBin: string;
}

export interface BuildResult {
  objects: KubeObject[];
  /** True when `path` had no kustomization file and one was generated over its YAML files. */
  generated: boolean;
  /** YAML files left out of a generated kustomization because they hold no Kubernetes objects. */
  skipped: string[];
}

/** Directories never scanned for manifests (Flux's default source-ignore set). */
const IGNORED_DIRS = new Set(['.git', '.github', '.circleci']);
const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

/** Builds `path` with the real kustomize, generating a kustomization over plain YAML when there is none. */
export async function build(opts: BuildOptions): Promise<BuildResult> {
  const dir = await resolveInsideRoot(opts.root, opts.path);
  if (await findKustomizationFile(dir)) {
    const text = await runKustomize(opts.kustomizeBin, dir, opts.path);
    return { objects: parseManifests(text, `kustomize build ${opts.path}`), generated: false, skipped: [] };
  }
  // Never write into the user's tree: generate over a temporary copy.
  const work = await mkdtemp(join(tmpdir(), 'kr-build-'));
  try {
    await cp(dir, work, { recursive: true, filter: (src) => !IGNORED_DIRS.has(src.split(sep).pop() ?? '') });
    const entries = await scan(work, '');
    const { kustomization, skipped } = generateKustomization(
      entries.map((e) => (e.kind === 'file' ? { ...e, path: e.path } : e)),
    );
    await writeFile(join(work, 'kustomization.yaml'), stringify(kustomization));
    const text = await runKustomize(opts.kustomizeBin, work, opts.path);
    return { objects: parseManifests(text, `kustomize build ${opts.path}`), generated: true, skipped };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Joins `path` to `root` and refuses a result outside the root, symlinks resolved. */
export async function resolveInsideRoot(root: string, path: string): Promise<string> {
  const realRoot = await realpath(root);
  const joined = resolve(realRoot, path);
  let real: string;
  try {
    real = await realpath(joined);
  } catch {
    throw new Error(`path "${path}" does not exist under the source root ${realRoot}`);
  }
  const rel = relative(realRoot, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || resolve(realRoot, rel) !== real) {
    throw new Error(`path "${path}" leaves the source root ${realRoot}; it must name a directory inside it`);
  }
  const info = await stat(real);
  if (!info.isDirectory()) {
    throw new Error(`path "${path}" is a file; it must be a directory (with or without a kustomization.yaml)`);
  }
  return real;
}

async function findKustomizationFile(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) return name;
  }
  return undefined;
}

/** Lists YAML files and kustomization sub-directories below `dir`, paths relative to the top. */
async function scan(top: string, rel: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const dirents = await readdir(join(top, rel), { withFileTypes: true });
  for (const d of dirents.sort((a, b) => a.name.localeCompare(b.name))) {
    const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) {
      if (IGNORED_DIRS.has(d.name)) continue;
      if (await findKustomizationFile(join(top, childRel))) {
        out.push({ kind: 'dir', path: childRel, hasKustomization: true });
      } else {
        out.push(...(await scan(top, childRel)));
      }
    } else if (d.isFile() && /\.ya?ml$/.test(d.name)) {
      out.push({ kind: 'file', path: childRel, text: await readFile(join(top, childRel), 'utf8') });
    }
  }
  return out;
}

function runKustomize(bin: string, dir: string, shownPath: string): Promise<string> {
  const args = ['build', dir, '--load-restrictor=LoadRestrictionsRootOnly'];
  return new Promise((resolvePromise, reject) => {
    execFile(bin, args, { maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          reject(
            new Error(
              `kustomize binary "${bin}" not found: install kustomize v5 or set the kustomize-path input / --kustomize-path flag`,
            ),
          );
          return;
        }
        const detail = stderr.trim() || err.message;
        reject(new Error(`kustomize build ${shownPath} failed: ${detail.replaceAll(dir, shownPath)}`));
        return;
      }
      resolvePromise(stdout);
    });
  });
}
