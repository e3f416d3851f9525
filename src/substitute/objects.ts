import { stringify } from 'yaml';
import { parseYamlValue } from '../kustomize/yaml.js';
import { subjectOf, type KubeObject } from '../kustomize/parse.js';
import { envsubst } from './envsubst.js';
import { escapePointer, isMap } from '../ssa/json.js';

export const SUBSTITUTE_KEY = 'kustomize.toolkit.fluxcd.io/substitute';

export interface SubstituteOptions {
  /** An unset variable without a default is an error (Flux's default since v1.9). */
  strict: boolean;
  /** WithVariables: substitute only when at least one variable is known; Always: even with none. */
  strategy: 'WithVariables' | 'Always';
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
  return objects.map((obj) => (substitutionDisabled(obj) ? obj : substituteObject(obj, vars, opts)));
}

function substituteObject(obj: KubeObject, vars: ReadonlyMap<string, string>, opts: SubstituteOptions): KubeObject {
  const subject = subjectOf(obj);
  const text = stringify(obj, { lineWidth: 0 });
  if (!text.includes('${')) return obj;
  let expanded: string;
  try {
    expanded = envsubst(text, (name) => vars.get(name), { strict: opts.strict });
  } catch (err) {
    throw new Error(`${subject}: postBuild substitution failed: ${(err as Error).message}`, { cause: err });
  }
  let result: unknown;
  try {
    // The bounded parser: linear in the object's keys (yaml's uniqueKeys check is quadratic).
    result = parseYamlValue(expanded, subject);
  } catch (err) {
    const reason = (err as Error).message.slice(subject.length).replace(/^(, document \d+)?: /, '');
    throw new Error(`${subject}: postBuild substitution made invalid YAML (a value with ": " or a quote?): ${reason}`, {
      cause: err,
    });
  }
  const problem = structureChange(obj, result, '');
  if (problem) {
    throw new Error(
      `${subject}: postBuild substitution changed the object's structure at ${problem}; a variable may only fill in a value (quote it in the manifest if it must stay text)`,
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
