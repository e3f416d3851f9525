/**
 * kustomize's ConfigMap and Secret generators (`configMapGenerator`, `secretGenerator`,
 * `generatorOptions`) for the in-process overlay build. Each entry makes one object from env files
 * (`envs`, and the older `env`), then `literals`, then `files`, in that order; its options over the
 * kustomization's generatorOptions (local maps win, a global true wins); and is absorbed into what
 * the kustomization accumulated: `create` adds it, `merge` and `replace` take the place of the one
 * object of that kind and name (kustomize's appendReplaceOrMerge). The hash suffix is added at the
 * top (overlay-hash.ts). Everything outside the plain cases (text that is not printable ASCII, keys
 * kustomize might refuse, a name that an earlier object had) leaves the build to kustomize.
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';
import type { At, Built, FieldReader } from './overlay-types.js';

interface Options {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  disableNameSuffixHash?: boolean;
  immutable?: boolean;
}

interface Generated {
  obj: KubeObject;
  behavior: 'create' | 'merge' | 'replace';
  hashSuffix: boolean;
}

/** A data key kustomize takes (a ConfigMap key), of the plain form. */
const KEY = /^[-._a-zA-Z0-9]{1,253}$/;
/** An env file's key of the form every validator takes. */
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** File text kept as it is everywhere (ConfigMap data, not binaryData; printed and read back alike). */
const PLAIN_TEXT = /^[\t\n\x20-\x7E]*$/;

const ARG_FIELDS = ['name', 'namespace', 'behavior', 'literals', 'files', 'envs', 'env', 'options'];

/** `configMapGenerator`, `secretGenerator` and `generatorOptions`. */
export const generatorsReader: FieldReader = {
  fields: ['configMapGenerator', 'secretGenerator', 'generatorOptions'],
  read(k, at) {
    const global = readOptions(k['generatorOptions']);
    if (global === undefined) return undefined;
    const made: Generated[] = [];
    for (const [field, kind] of [
      ['configMapGenerator', 'ConfigMap'],
      ['secretGenerator', 'Secret'],
    ] as const) {
      const list = k[field] ?? [];
      if (!Array.isArray(list)) return undefined;
      for (const entry of list) {
        const g = generate(entry, kind, global, at);
        if (g === undefined) return undefined;
        made.push(g);
      }
    }
    return (built) => {
      for (const g of made) if (!absorb(built, structuredClone(g), at.file)) return undefined;
      return built;
    };
  },
};

function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isRecord(v) || Object.values(v).some((s) => typeof s !== 'string')) return undefined;
  return { ...(v as Record<string, string>) };
}

/** Generator options (of an entry or the kustomization), or undefined when they hold what is not known here. */
function readOptions(v: unknown): Options | undefined {
  if (v === undefined) return {};
  if (!isRecord(v)) return undefined;
  const out: Options = {};
  for (const [key, value] of Object.entries(v)) {
    if (key === 'labels' || key === 'annotations') {
      const map = stringMap(value);
      if (map === undefined) return undefined;
      out[key] = map;
    } else if (key === 'disableNameSuffixHash' || key === 'immutable') {
      if (typeof value !== 'boolean') return undefined;
      out[key] = value;
    } else {
      return undefined;
    }
  }
  return out;
}

/** kustomize's MergeGlobalOptionsIntoLocal: the entry's map entries win; a global true wins. */
function mergeOptions(local: Options, global: Options): Options {
  return {
    labels: global.labels || local.labels ? { ...global.labels, ...local.labels } : undefined,
    annotations: global.annotations || local.annotations ? { ...global.annotations, ...local.annotations } : undefined,
    disableNameSuffixHash: global.disableNameSuffixHash === true || local.disableNameSuffixHash === true,
    immutable: global.immutable === true || local.immutable === true,
  };
}

function stringList(v: unknown): string[] | undefined {
  if (v === undefined) return [];
  return Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : undefined;
}

/** One generator entry's object, or undefined. */
function generate(entry: unknown, kind: 'ConfigMap' | 'Secret', global: Options, at: At): Generated | undefined {
  if (!isRecord(entry)) return undefined;
  const fields = kind === 'Secret' ? [...ARG_FIELDS, 'type'] : ARG_FIELDS;
  if (Object.keys(entry).some((f) => !fields.includes(f))) return undefined;
  const { name, namespace, behavior = 'create', env, type = '' } = entry;
  if (typeof name !== 'string' || name === '') return undefined;
  if (namespace !== undefined && typeof namespace !== 'string') return undefined;
  if (behavior !== 'create' && behavior !== 'merge' && behavior !== 'replace') return undefined;
  if (typeof type !== 'string' || (env !== undefined && typeof env !== 'string')) return undefined;
  const local = readOptions(entry['options']);
  const literals = stringList(entry['literals']);
  const files = stringList(entry['files']);
  const envs = stringList(entry['envs']);
  if (local === undefined || literals === undefined || files === undefined || envs === undefined) return undefined;
  const pairs = kvPairs([...envs, ...(env ? [env] : [])], literals, files, at);
  if (pairs === undefined) return undefined;
  const data: Record<string, string> = {};
  for (const [key, value] of pairs) {
    if (!KEY.test(key) || key === '.' || key === '..' || Object.hasOwn(data, key)) return undefined;
    data[key] = kind === 'Secret' ? Buffer.from(value, 'utf8').toString('base64') : value;
  }
  const options = mergeOptions(local, global);
  const metadata: KubeObject['metadata'] = { name };
  if (namespace) metadata.namespace = namespace;
  if (options.labels && Object.keys(options.labels).length > 0) metadata.labels = options.labels;
  if (options.annotations && Object.keys(options.annotations).length > 0) metadata.annotations = options.annotations;
  const obj: KubeObject = { apiVersion: 'v1', kind, metadata };
  if (kind === 'Secret') obj['type'] = type || 'Opaque';
  // kustomize writes an empty map for a Secret and none for a ConfigMap.
  if (kind === 'Secret' || Object.keys(data).length > 0) obj['data'] = data;
  if (options.immutable) obj['immutable'] = true;
  return { obj, behavior, hashSuffix: options.disableNameSuffixHash !== true };
}

/** The key/value pairs of env files, literals and files, in kustomize's order, or undefined. */
function kvPairs(envs: string[], literals: string[], files: string[], at: At): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const path of envs) {
    const file = at.read(path);
    if (file === undefined || !PLAIN_TEXT.test(file.text)) return undefined;
    for (const raw of file.text.split('\n')) {
      // bufio's lines; leading white space trimmed, blank lines and comments skipped.
      if (raw.length > 60_000) return undefined;
      const line = raw.replace(/^[\t ]+/, '');
      if (line === '' || line.startsWith('#')) continue;
      const eq = line.indexOf('=');
      const key = eq === -1 ? line : line.slice(0, eq);
      if (!ENV_KEY.test(key)) return undefined;
      out.push([key, eq === -1 ? '' : line.slice(eq + 1)]);
    }
  }
  for (const literal of literals) {
    const eq = literal.indexOf('=');
    if (eq <= 0) return undefined;
    const value = literal.slice(eq + 1);
    const quoted = value.length >= 2 && value[0] === value.at(-1) && (value[0] === '"' || value[0] === "'");
    out.push([literal.slice(0, eq), quoted ? value.slice(1, -1) : value]);
  }
  for (const source of files) {
    const parts = source.split('=');
    if (parts.length > 2 || parts.some((p) => p === '')) return undefined;
    const path = parts.at(-1)!;
    const key = parts.length === 2 ? parts[0]! : path.slice(path.lastIndexOf('/') + 1);
    const file = at.read(path);
    if (file === undefined || !PLAIN_TEXT.test(file.text)) return undefined;
    out.push([key, file.text]);
  }
  return out;
}

/** The names an object has had: kustomize matches a generator's id against any of them. */
export function namesOf(b: Built): string[] {
  return [b.obj.metadata.name, b.fileName, ...(b.previousNames ?? [])];
}

/**
 * kustomize's appendReplaceOrMerge of a generated object into `built` (in place), or false when
 * its answer is not certain here: `create` adds it when no object of its kind had its name;
 * `merge`/`replace` take the place of the one such object, unrenamed, in the same namespace.
 */
function absorb(built: Built[], g: Generated, file: string): boolean {
  const { obj } = g;
  const name = obj.metadata.name;
  const same = built.filter((b) => b.obj.kind === obj.kind && namesOf(b).includes(name));
  if (g.behavior === 'create') {
    if (same.length > 0) return false;
    built.push({ obj, origin: file, fileName: name, hashSuffix: g.hashSuffix });
    return true;
  }
  if (same.length !== 1) return false;
  const old = same[0]!;
  const o = old.obj;
  if (o.apiVersion !== 'v1' || o.metadata.name !== name || old.fileName !== name || old.previousNames?.length) {
    return false;
  }
  if ((o.metadata.namespace || 'default') !== (obj.metadata.namespace || 'default')) return false;
  const oldLabels = stringMap(o.metadata.labels ?? {});
  const oldAnnotations = stringMap(o.metadata.annotations ?? {});
  if (oldLabels === undefined || oldAnnotations === undefined) return false;
  const labels = { ...oldLabels, ...obj.metadata.labels };
  const annotations = { ...oldAnnotations, ...obj.metadata.annotations };
  const metadata: KubeObject['metadata'] = { name };
  if (o.metadata.namespace !== undefined) metadata.namespace = o.metadata.namespace;
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  const merged: KubeObject = { ...obj, metadata };
  if (g.behavior === 'merge') {
    for (const field of ['data', 'binaryData']) {
      const before = o[field] === undefined ? {} : stringMap(o[field]);
      if (before === undefined || (field === 'binaryData' && obj.kind === 'Secret' && o[field] !== undefined)) {
        return false;
      }
      const after = { ...before, ...(obj[field] as Record<string, string> | undefined) };
      if (Object.keys(after).length > 0) merged[field] = after;
    }
    // An empty data map is written in a way not known here.
    if (merged['data'] === undefined && merged['binaryData'] === undefined) return false;
  }
  const index = built.indexOf(old);
  built[index] = {
    obj: merged,
    origin: g.behavior === 'merge' ? old.origin : file,
    fileName: old.fileName,
    // The old object's mark stays only if the new one asks for the hash too.
    hashSuffix: old.hashSuffix === true && g.hashSuffix,
  };
  return true;
}
