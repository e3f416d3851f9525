import { posix } from 'node:path';

/** One entry of a kustomization that kustomize reads through its loader: a local path or a URL. */
export interface LoadedEntry {
  /** The field, as errors name it (`patches[].path`, `configMapGenerator[].files`). */
  field: string;
  entry: string;
  /** The field's entries may also be kustomization directories. */
  dir: boolean;
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Calls `fn` on every entry of a kustomization that kustomize reads through its loader (see
 * {@link loadedEntries}) and returns a copy with each entry `fn` returns a string for replaced by
 * it (a generator file's `key=` prefix is kept); `changed` says whether any was. The input is not
 * modified.
 */
export function mapLoadedEntries(
  k: Readonly<Record<string, unknown>>,
  fn: (e: LoadedEntry) => string | undefined,
): { kustomization: Record<string, unknown>; changed: boolean } {
  const out: Record<string, unknown> = { ...k };
  let changed = false;
  const one = (field: string, entry: unknown, dir: boolean): unknown => {
    if (typeof entry !== 'string') return entry;
    const next = fn({ field, entry, dir });
    if (next === undefined || next === entry) return entry;
    changed = true;
    return next;
  };
  const strings = (field: string, dir: boolean, skip: (e: string) => boolean = () => false) => {
    if (!Array.isArray(k[field])) return;
    out[field] = asList(k[field]).map((e) => (typeof e === 'string' && skip(e) ? e : one(field, e, dir)));
  };
  for (const field of ['resources', 'bases', 'components']) strings(field, true);
  strings('crds', false);
  for (const field of ['generators', 'transformers', 'validators']) strings(field, true);
  // An entry that spans lines is an inline patch, not a file name.
  strings('patchesStrategicMerge', false, (e) => e.includes('\n'));
  strings('configurations', false);
  for (const field of ['patches', 'patchesJson6902', 'replacements']) {
    if (!Array.isArray(k[field])) continue;
    out[field] = asList(k[field]).map((item) => {
      const path = (item as { path?: unknown } | null)?.path;
      if (typeof path !== 'string') return item;
      const next = one(`${field}[].path`, path, false);
      return next === path ? item : { ...(item as Record<string, unknown>), path: next };
    });
  }
  for (const field of ['configMapGenerator', 'secretGenerator']) {
    if (!Array.isArray(k[field])) continue;
    out[field] = asList(k[field]).map((gen) => {
      if (typeof gen !== 'object' || gen === null) return gen;
      const g = { ...(gen as Record<string, unknown>) };
      if (Array.isArray(g['files'])) {
        g['files'] = asList(g['files']).map((entry) => {
          if (typeof entry !== 'string') return entry;
          // `key=path` names the key; the path is what is loaded.
          const eq = entry.indexOf('=');
          const path = entry.slice(eq + 1);
          const next = one(`${field}[].files`, path, false);
          return next === path ? entry : `${entry.slice(0, eq + 1)}${next as string}`;
        });
      }
      if (Array.isArray(g['envs'])) g['envs'] = asList(g['envs']).map((e) => one(`${field}[].envs`, e, false));
      if (g['env'] !== undefined) g['env'] = one(`${field}[].env`, g['env'], false);
      return g;
    });
  }
  const openapi = k['openapi'];
  if (typeof openapi === 'object' && openapi !== null && !Array.isArray(openapi)) {
    const path = (openapi as { path?: unknown }).path;
    const next = one('openapi.path', path, false);
    if (next !== path) out['openapi'] = { ...openapi, path: next };
  }
  return { kustomization: out, changed };
}

/**
 * Every entry of a kustomization that kustomize reads through its loader, which takes a local path
 * or a URL; `dir` marks the fields whose entries may also be kustomization directories.
 */
export function loadedEntries(k: Readonly<Record<string, unknown>>): LoadedEntry[] {
  const out: LoadedEntry[] = [];
  mapLoadedEntries(k, (e) => {
    out.push(e);
    return undefined;
  });
  return out;
}

/** The name, relative to its directory of copies, under which the `n`th copied file of an entry is kept: its base name kept (a generator's default key). */
export function localName(n: number, entry: string): string {
  return `${n}/${posix.basename(entry.replaceAll('\\', '/'))}`;
}

/**
 * An origin annotation's text with a `path:` that names a copied file (a key of `renamed`, as
 * written into a kustomization) turned back into the entry the user wrote, the path then
 * cleaned as kustomize cleans it (`../base/../shared/x.yaml` is `../shared/x.yaml`).
 */
export function restoreOriginPath(raw: string, renamed: ReadonlyMap<string, string>): string {
  return raw.replace(/^(path:\s*)(.+)$/m, (line, key: string, value: string) => {
    for (const [written, original] of renamed) {
      const at = value.indexOf(written);
      if (at === -1) continue;
      return `${key}${posix.normalize(`${value.slice(0, at)}${original}${value.slice(at + written.length)}`)}`;
    }
    return line;
  });
}
