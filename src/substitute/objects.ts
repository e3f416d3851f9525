import { isAlias, isMap as isYamlMap, isPair, isScalar, isSeq, parseDocument, stringify, type Node } from 'yaml';
import { parseYamlValue, YamlError } from '../objects/yaml.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';
import { envsubst } from './envsubst.js';
import { EnvsubstError } from './envsubst/errors.js';
import { escapePointer, isMap } from '../ssa/json.js';
import { ObjectError } from '../objects/errors.js';
import { FLUX_GROUP } from '../objects/flux.js';

export const SUBSTITUTE_KEY = `${FLUX_GROUP}/substitute`;

export interface SubstituteOptions {
  /** An unset variable without a default is an error (Flux's default since v1.9). */
  strict: boolean;
  /** WithVariables: substitute only when at least one variable is known; Always: even with none. */
  strategy: 'WithVariables' | 'Always';
  /** Variables from a secret layer: every field one of them goes into, through any function, is secret. */
  secretNames?: ReadonlySet<string>;
  /** The secret fields (JSON pointers) of the object at `index`, reported for each object that has any. */
  onSecretPaths?: (index: number, paths: string[]) => void;
  /** The text each expression that read a secret variable produced (e.g. `${v^^}`), to be masked. */
  onSecret?: (value: string) => void;
  /**
   * A secret variable may fill in a field's value only: one that goes into a key, or into the
   * object's apiVersion, kind, name or namespace (printed everywhere, masked nowhere, and short
   * slices of a value are too short to mask) is an error. Set for untrusted trees.
   */
  secretsOnlyInValues?: boolean;
}

/**
 * Flux's opt-out: the label or annotation `kustomize.toolkit.fluxcd.io/substitute` exactly equal
 * to `disabled` (case-sensitive, unlike Flux's other markers).
 */
export function substitutionDisabled(obj: KubeObject): boolean {
  return (
    obj.metadata.labels?.[SUBSTITUTE_KEY] === 'disabled' || obj.metadata.annotations?.[SUBSTITUTE_KEY] === 'disabled'
  );
}

/**
 * Substitutes variables into each object as Flux does: the object's YAML text is expanded as a
 * whole (keys and multi-line strings included) and read back. Unlike Flux, a value that changes the
 * object's structure (turns a scalar into a list or map, adds or removes keys) is an error naming
 * the object, so that a variable can never smuggle fields into a manifest.
 */
export function substituteObjects(
  objects: readonly KubeObject[],
  vars: ReadonlyMap<string, string>,
  opts: SubstituteOptions,
): KubeObject[] {
  if (vars.size === 0 && opts.strategy !== 'Always') return [...objects];
  return objects.map((obj, i) => (substitutionDisabled(obj) ? obj : substituteObject(obj, i, vars, opts)));
}

function substituteObject(
  obj: KubeObject,
  index: number,
  vars: ReadonlyMap<string, string>,
  opts: SubstituteOptions,
): KubeObject {
  const subject = subjectOf(obj);
  const text = stringify(obj, { lineWidth: 0 });
  if (!text.includes('${')) return obj;
  let expanded: string;
  // Byte ranges of the result produced by expressions that read a secret variable.
  const secretRanges: [number, number][] = [];
  let readSecret = false;
  const lookup = (name: string): string | undefined => {
    if (opts.secretNames?.has(name)) readSecret = true;
    return vars.get(name);
  };
  try {
    expanded = envsubst(text, lookup, {
      strict: opts.strict,
      onExpression: (start, end) => {
        if (readSecret) secretRanges.push([start, end]);
        readSecret = false;
      },
    });
  } catch (err) {
    const unset = err instanceof EnvsubstError ? err.variable : undefined;
    const fix =
      unset === undefined
        ? ''
        : `; set it in spec.postBuild.substitute or in a ConfigMap or Secret of spec.postBuild.substituteFrom, or give it a default: \${${unset}:=value}`;
    throw new ObjectError(subject, `postBuild substitution failed: ${(err as Error).message}${fix}`, {
      cause: err,
    });
  }
  const ranges = charRanges(expanded, secretRanges);
  for (const [start, end] of ranges) if (end > start) opts.onSecret?.(expanded.slice(start, end));
  let result: unknown;
  try {
    // The bounded parser: linear in the object's keys (yaml's uniqueKeys check is quadratic).
    result = parseYamlValue(expanded, subject);
  } catch (err) {
    // The parser quotes the text around the error, which may be a secret value: then only the line.
    const detail =
      ranges.length > 0
        ? `in a field a secret variable went into (${secretFields(expanded, ranges, err)}; its value is not shown)`
        : err instanceof YamlError
          ? err.problem
          : (err as Error).message;
    throw new ObjectError(
      subject,
      `postBuild substitution made invalid YAML (a value with ": " or a quote?): ${detail}`,
      {
        cause: err,
      },
    );
  }
  if (ranges.length > 0) {
    const { paths, keys } = pathsIn(expanded, ranges);
    if (opts.secretsOnlyInValues) {
      const named = paths.filter((p) => IDENTITY.has(p));
      if (named.length > 0 || keys.length > 0) {
        const where =
          named.length > 0
            ? named.map((p) => p.slice(1).replace('/', '.')).join(', ')
            : `a key under ${keys.join(', ') || '/'}`;
        throw new ObjectError(
          subject,
          `a secret variable went into ${where}; in a tree that is not trusted (a pull request), values from Secrets may only fill in field values, never names or keys`,
        );
      }
    }
    opts.onSecretPaths?.(index, paths);
  }
  const problem = structureChange(obj, result, '');
  if (problem) {
    throw new ObjectError(
      subject,
      `postBuild substitution changed the object's structure at ${problem}; a variable may only fill in a value (quote it in the manifest if it must stay text)`,
    );
  }
  return result as KubeObject;
}

/**
 * Compares the shape of an object before and after substitution: maps keep their keys (a key that
 * held `${` may change its name), lists keep their length, scalars stay scalars. Returns the path
 * of the first difference, or undefined.
 */
export function structureChange(before: unknown, after: unknown, path: string): string | undefined {
  const here = path || '/';
  if (Array.isArray(before)) {
    if (!Array.isArray(after) || after.length !== before.length) return here;
    for (let i = 0; i < before.length; i++) {
      const p = structureChange(before[i], after[i], `${path}/${i}`);
      if (p) return p;
    }
    return undefined;
  }
  if (isMap(before)) {
    if (!isMap(after)) return here;
    const bKeys = Object.keys(before);
    const aKeys = Object.keys(after);
    if (aKeys.length !== bKeys.length) return here;
    const renamed = bKeys.filter((k) => !Object.hasOwn(after, k));
    const added = aKeys.filter((k) => !Object.hasOwn(before, k));
    if (renamed.some((k) => !k.includes('${')) || added.length !== renamed.length) return here;
    for (const k of bKeys) {
      if (!Object.hasOwn(after, k)) continue;
      const p = structureChange(before[k], after[k], `${path}/${escapePointer(k)}`);
      if (p) return p;
    }
    return undefined;
  }
  // A scalar may become another scalar (text "3" → number 3 is the point of substitution).
  return isMap(after) || Array.isArray(after) ? here : undefined;
}

/** UTF-8 byte ranges of `text` as string (UTF-16) ranges. */
function charRanges(text: string, byteRanges: readonly [number, number][]): [number, number][] {
  if (byteRanges.length === 0) return [];
  const bytes = Buffer.from(text, 'utf8');
  const toChar = (b: number) => bytes.subarray(0, b).toString('utf8').length;
  return byteRanges.map(([s, e]) => [toChar(s), toChar(e)]);
}

/** Where a secret went into text that no longer parses: its fields where the parser gets that far, else the line. */
function secretFields(text: string, ranges: readonly [number, number][], err: unknown): string {
  // A key a secret went into holds the secret's text: the map it is in is named instead.
  const { paths, keys, keyPaths } = pathsIn(text, ranges);
  const shown = [...paths.filter((p) => !keyPaths.includes(p)), ...keys.map((k) => `a key under ${k}`)];
  if (shown.length > 0) return shown.join(', ');
  const line = (err as { linePos?: [{ line: number }] }).linePos?.[0]?.line;
  return line === undefined ? 'position unknown' : `line ${line}`;
}

/**
 * The JSON pointers of the fields of the YAML `text` that overlap `ranges`: scalars (or, when the
 * range is in a key, the whole value of that key). An empty range marks the scalar it sits in.
 */
/** The fields an identity is made of: a secret there would be printed with every mention of the object. */
const IDENTITY = new Set(['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace', '/metadata/generateName']);

/**
 * The JSON pointers of the fields `ranges` of `text` fall in, and (`keys`) the pointers of the maps
 * whose keys they fall in (the key itself left out: it holds the secret text).
 */
function pathsIn(
  text: string,
  ranges: readonly [number, number][],
): { paths: string[]; keys: string[]; keyPaths: string[] } {
  const doc = parseDocument(text, { logLevel: 'error' });
  const out = new Set<string>();
  const keys = new Set<string>();
  const keyPaths = new Set<string>();
  const hits = (node: Node | null | undefined): boolean => {
    const r = node?.range;
    if (!r) return false;
    return ranges.some(([s, e]) => (e > s ? s < r[1] && r[0] < e : r[0] <= s && s <= r[1]));
  };
  const visit = (node: unknown, path: string): void => {
    if (isYamlMap(node)) {
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
        const p = `${path}/${escapePointer(key)}`;
        if (isScalar(item.key) && hits(item.key)) {
          out.add(p);
          keyPaths.add(p);
          keys.add(path || '/');
        } else visit(item.value, p);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        visit(item, `${path}/${i}`);
      });
    } else if ((isScalar(node) || isAlias(node)) && hits(node)) out.add(path || '/');
  };
  visit(doc.contents, '');
  return { paths: [...out], keys: [...keys], keyPaths: [...keyPaths] };
}
