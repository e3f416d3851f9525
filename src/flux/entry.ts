/**
 * Flux's entry point decides what runs. Under Flux, what the cluster's root Kustomization (flux
 * bootstrap's flux-system, whose spec.path holds its own file) applies is applied, through its
 * children and theirs; a Kustomization file that no parent lists any more is never applied. Named
 * alone in `kustomizations` (a file, not a glob), a root makes the run follow what it applies: every
 * Flux Kustomization file its build reads, and the files those builds read, as long as they build
 * from the root's source; a file `exclude` matches is neither loaded nor followed.
 */
import { builtFiles } from './applied-by.js';
import { parseKustomizationFile } from './parse.js';
import { fluxKustomizationTexts } from './repository.js';
import type { KustomizationSpec } from './types.js';

/** Whether `spec`, defined in `file`, builds its own file: the cluster's root, as `flux bootstrap` writes it. */
export async function isEntryPoint(root: string, spec: KustomizationSpec, file: string): Promise<boolean> {
  return (await builtFiles(root, spec, [file])).has(file);
}

type SourceRef = KustomizationSpec['sourceRef'];

/** The same source, or none written (a child leaving spec.sourceRef to its parent takes the parent's). */
function sameSource(child: SourceRef, entry: SourceRef): boolean {
  if (child === undefined) return true;
  return child.kind === entry?.kind && child.name === entry.name && (child.namespace ?? '') === (entry.namespace ?? '');
}

/**
 * The Flux Kustomization files (relative to `root`, sorted) that the `entries` (with their files)
 * reach through their builds and their children's, other than `known` (already loaded) and those
 * `excluded` picks. A file that does not parse is still listed: the load reports it.
 */
export async function followEntryPoints(
  root: string,
  entries: readonly { spec: KustomizationSpec; file: string }[],
  known: ReadonlySet<string>,
  excluded: (file: string) => boolean,
): Promise<string[]> {
  const texts = new Map((await fluxKustomizationTexts(root)).map(({ file, text }) => [file, text]));
  const candidates = [...texts.keys()];
  const reached = new Set<string>();
  const visited = new Set(entries.map((e) => e.file));
  for (const { spec } of entries) {
    let frontier: KustomizationSpec[] = [spec];
    while (frontier.length > 0) {
      const next: KustomizationSpec[] = [];
      for (const parent of frontier) {
        for (const file of (await builtFiles(root, parent, candidates)).keys()) {
          if (visited.has(file) || excluded(file)) continue;
          const text = texts.get(file);
          if (text === undefined) continue;
          visited.add(file);
          if (!known.has(file)) reached.add(file);
          const specs = parseLenient(text, file);
          next.push(...specs.filter((s) => sameSource(s.sourceRef, spec.sourceRef)));
        }
      }
      frontier = next;
    }
  }
  return [...reached].sort();
}

function parseLenient(text: string, file: string): KustomizationSpec[] {
  try {
    return parseKustomizationFile(text, file, { lenient: true }).specs;
  } catch {
    return [];
  }
}

/**
 * The entry points among `specs` (those defined in a file named alone, `named`, built from this
 * checkout, whose build reads their own file), the files they reach beyond `known`, and a note for
 * each entry followed.
 */
export async function followFrom(
  root: string,
  specs: readonly KustomizationSpec[],
  named: ReadonlySet<string>,
  known: ReadonlySet<string>,
  excluded: (file: string) => boolean,
  fromCheckout: (spec: KustomizationSpec) => Promise<boolean> = () => Promise.resolve(true),
): Promise<{ files: string[]; notes: string[] }> {
  const entries: { spec: KustomizationSpec; file: string }[] = [];
  for (const spec of specs) {
    const file = spec.origin.kind === 'file' ? spec.origin.file : undefined;
    if (file === undefined || !named.has(file) || !(await isEntryPoint(root, spec, file))) continue;
    // One built from another source (a tenant's sync.yaml, path ./ of its own repository) builds no file here.
    if (await fromCheckout(spec)) entries.push({ spec, file });
  }
  if (entries.length === 0) return { files: [], notes: [] };
  const files = await followEntryPoints(root, entries, known, excluded);
  const notes = entries.map(
    ({ spec, file }) =>
      `${file}: Kustomization ${spec.namespace}/${spec.name} builds its own file, Flux's entry point: the run follows what it applies (${files.length} more Kustomization file${files.length === 1 ? '' : 's'}${files.length > 0 ? `: ${shortList(files)}` : ''})`,
  );
  return { files, notes };
}

/** At most this many files are named in a note; the rest are counted. */
const NAMED = 10;

function shortList(files: readonly string[]): string {
  return files.slice(0, NAMED).join(', ') + (files.length > NAMED ? `, and ${files.length - NAMED} more` : '');
}

/** The one note on the files a glob matched that no Kustomization applies and that cannot stand alone. */
export function unreachedNotes(files: readonly string[]): string[] {
  if (files.length === 0) return [];
  return [
    `${files.length} Kustomization file${files.length === 1 ? '' : 's'} matched by a glob left out: no Kustomization applies ${files.length === 1 ? 'it' : 'them'} and ${files.length === 1 ? 'it leaves' : 'they leave'} fields to a parent, so Flux would never apply ${files.length === 1 ? 'it' : 'them'} (${shortList(files)}); name a file to have it refused instead, or exclude them`,
  ];
}
