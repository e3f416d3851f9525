/**
 * The parity corpus (test/parity/corpus/<case>/{case.yaml,tree/}; format in its README.md): loading
 * and applying a step's edits to a working copy of a tree.
 */
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';

export const CORPUS = resolve(import.meta.dirname, 'corpus');

export interface KustomizationCase {
  name: string;
  spec: Record<string, unknown>;
}

export type Step =
  | { git: { write?: Record<string, string>; delete?: string[] } }
  | {
      drift: {
        apiVersion: string;
        kind: string;
        namespace?: string;
        name: string;
        patch: Record<string, unknown>;
      };
    }
  | { noop: Record<string, never> };

/**
 * Kustomizations that the case's own apply: a parent's build produces their objects (Flux's monorepo
 * layout). Flux reconciles the objects its parent applied; ours is given their files beside the
 * parent's and reconciles each from the object the parent's build produces.
 */
export interface Children {
  /** Their Kustomization files (globs relative to tree/), passed to ours with `--kustomizations`. */
  files: string[];
  /** Their names (all in flux-system), whose outcome, verdicts and inventory are compared too. */
  names: string[];
}

export interface ParityCase {
  name: string;
  dir: string;
  description: string;
  kustomizations: KustomizationCase[];
  children: Children;
  setup: Record<string, unknown>[];
  steps: Step[];
  expect: 'ready' | 'failed';
}

/** Every Kustomization of a case whose reconcile is compared: its own, then their children. */
export function reconciled(c: Pick<ParityCase, 'kustomizations' | 'children'>): string[] {
  return [...c.kustomizations.map((k) => k.name), ...c.children.names];
}

export async function loadCases(root = CORPUS): Promise<ParityCase[]> {
  const names = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const out: ParityCase[] = [];
  for (const name of names) {
    const dir = join(root, name);
    const raw = parse(await readFile(join(dir, 'case.yaml'), 'utf8')) as Partial<ParityCase> | null;
    out.push({
      name,
      dir,
      description: raw?.description ?? '',
      kustomizations: raw?.kustomizations ?? [],
      children: { files: raw?.children?.files ?? [], names: raw?.children?.names ?? [] },
      setup: raw?.setup ?? [],
      steps: raw?.steps ?? [],
      expect: raw?.expect ?? 'ready',
    });
  }
  return out;
}

/** The label a step has in reports: apply, noop, git, drift; numbered from 1. */
export function stepLabel(step: Step | 'apply' | 'noop', i: number): string {
  const kind = typeof step === 'string' ? step : Object.keys(step)[0]!;
  return `${i + 1}-${kind}`;
}

/** Copies a case's tree to `dest` (replacing it). */
export async function copyTree(c: ParityCase, dest: string): Promise<void> {
  await rm(dest, { recursive: true, force: true });
  await mkdir(dirname(dest), { recursive: true });
  await cp(join(c.dir, 'tree'), dest, { recursive: true });
}

/** Applies a git step's writes and deletions to a working copy. */
export async function applyGitStep(
  dest: string,
  git: { write?: Record<string, string>; delete?: string[] },
): Promise<void> {
  for (const [rel, text] of Object.entries(git.write ?? {})) {
    await mkdir(dirname(join(dest, rel)), { recursive: true });
    await writeFile(join(dest, rel), text);
  }
  for (const rel of git.delete ?? []) await rm(join(dest, rel), { recursive: true, force: true });
}
