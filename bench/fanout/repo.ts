// The repository bench/fanout.ts reconciles: n Kustomizations in dependsOn levels (the graph, with a
// known critical path), each a plain directory of m ConfigMaps and Secrets, written with their
// Kustomization files (for one cluster or several) and committed with git.
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the Kustomization files of a one-cluster repository are (writeRepo's default). */
export const GLOB = 'ks/*.yaml';

export interface Graph {
  /** Kustomization names in file order (level by level). */
  names: string[];
  /** Each name's dependsOn (names, same namespace). */
  deps: Map<string, string[]>;
  /** The chain along the first column: the known critical path (one dependency each). */
  chain: string[];
  width: number;
  levels: number;
}

/**
 * n Kustomizations in levels of `width` (⌈√n⌉: 10 levels of 10 for 100). Level L > 0, column j
 * depends on column j of level L-1, and odd columns also on column j+1 (mod width): one or two
 * dependencies each. Column 0 is a chain of one dependency each, as long as any: the known critical
 * path.
 */
export function graphFor(n: number): Graph {
  const width = Math.max(1, Math.ceil(Math.sqrt(n)));
  const digits = Math.max(2, String(n - 1).length);
  const name = (i: number) => `k${String(i).padStart(digits, '0')}`;
  const names = Array.from({ length: n }, (_, i) => name(i));
  const deps = new Map<string, string[]>();
  for (let i = 0; i < n; i++) {
    const level = Math.floor(i / width);
    const j = i % width;
    const base = (level - 1) * width;
    const d = level === 0 ? [] : [name(base + j)];
    if (level > 0 && j % 2 === 1 && width > 1) d.push(name(base + ((j + 1) % width)));
    deps.set(name(i), d);
  }
  const chain = names.filter((_, i) => i % width === 0);
  return { names, deps, chain, width, levels: Math.ceil(n / width) };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The objects of one Kustomization: every fifth a Secret, the rest ConfigMaps, in `namespace`. */
function objectsFor(ks: string, m: number, namespace: string): { file: string; text: string }[] {
  return Array.from({ length: m }, (_, i) => {
    const n = String(i).padStart(3, '0');
    const payload = `${ks}/${n} `.repeat(6).trim();
    const secret = i % 5 === 4;
    const text = secret
      ? [
          'apiVersion: v1',
          'kind: Secret',
          'metadata:',
          `  name: ${ks}-secret-${n}`,
          `  namespace: ${namespace}`,
          '  labels:',
          `    app.kubernetes.io/part-of: ${ks}`,
          'type: Opaque',
          'data:',
          `  token: ${b64(`token-${ks}-${n}`)}`,
          `  payload: ${b64(payload)}`,
          '',
        ].join('\n')
      : [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          `  name: ${ks}-cm-${n}`,
          `  namespace: ${namespace}`,
          '  labels:',
          `    app.kubernetes.io/part-of: ${ks}`,
          'data:',
          `  index: "${n}"`,
          `  kustomization: ${ks}`,
          `  payload: ${payload}`,
          '',
        ].join('\n');
    return { file: `${secret ? 'secret' : 'cm'}-${n}.yaml`, text };
  });
}

function kustomizationFile(name: string, namespace: string, deps: readonly string[]): string {
  return [
    'apiVersion: kustomize.toolkit.fluxcd.io/v1',
    'kind: Kustomization',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'spec:',
    '  interval: 10m',
    '  prune: true',
    `  path: ./apps/${name}`,
    '  sourceRef:',
    '    kind: GitRepository',
    '    name: flux-system',
    ...(deps.length > 0 ? ['  dependsOn:', ...deps.map((d) => `    - name: ${d}`)] : []),
    '',
  ].join('\n');
}

export function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${dir}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * A git repository (one commit) with the Kustomization files under `ksDirs` (each gets every
 * Kustomization; `ks` for one cluster, `clusters/<name>` for several) and their plain directories of
 * m objects under apps/. The Kustomizations and their objects live in `namespace`.
 */
export async function writeRepo(
  dir: string,
  graph: Graph,
  m: number,
  namespace: string,
  ksDirs = ['ks'],
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const files: [string, string][] = [];
  for (const name of graph.names) {
    for (const k of ksDirs)
      files.push([join(k, `${name}.yaml`), kustomizationFile(name, namespace, graph.deps.get(name)!)]);
    for (const o of objectsFor(name, m, namespace)) files.push([join('apps', name, o.file), o.text]);
  }
  for (const d of new Set(files.map(([f]) => join(dir, f, '..')))) await mkdir(d, { recursive: true });
  for (let i = 0; i < files.length; i += 256) {
    await Promise.all(files.slice(i, i + 256).map(([f, text]) => writeFile(join(dir, f), text)));
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench tree');
  return git(dir, 'rev-parse', 'HEAD');
}
