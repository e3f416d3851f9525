import { parseYamlValue, YamlError } from '../objects/yaml.js';
import { UserError } from '../util/user-error.js';

/** Flux's rule for variable names given to postBuild (`^[_[:alpha:]][_[:alpha:][:digit:]]*$`, ASCII). */
const NAME = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

/** One source of variables, named for error messages (e.g. `ConfigMap flux-system/vars`). */
export interface VariableLayer {
  source: string;
  vars: Readonly<Record<string, string>>;
  /** Its values are secret (secret-vars, a substituteFrom Secret): the fields they go into are masked. */
  secret?: boolean;
}

/** The names whose value comes from a secret layer once the layers are merged (the last layer setting a name wins). */
export function secretNames(layers: readonly VariableLayer[]): Set<string> {
  const out = new Set<string>();
  for (const { vars, secret } of layers) {
    for (const name of Object.keys(vars)) {
      if (secret) out.add(name);
      else out.delete(name);
    }
  }
  return out;
}

/**
 * A variable, or a source of variables, refused: where it comes from (`ConfigMap flux-system/vars`,
 * `--var a=b`, `input "vars"`) and why, its message built from the two. A UserError: the source
 * must change.
 */
export class VariableError extends UserError {
  constructor(
    readonly source: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${source}: ${problem}`, options);
    this.name = 'VariableError';
  }
}

/** A name as shown in an error: control characters escaped, so that the message stays one readable line. */
function shown(name: string): string {
  const text = JSON.stringify(name).slice(1, -1);
  return text.length > 100 ? `${text.slice(0, 100)}… (${name.length} characters)` : text;
}

function checkName(name: string, source: string): void {
  if (!NAME.test(name)) {
    throw new VariableError(
      source,
      `'${shown(name)}' var name is invalid (letters, digits and "_", not starting with a digit)`,
    );
  }
}

/**
 * Sets `name` as an own property even when it is `__proto__`, which an assignment would take as a
 * change of the object's prototype (dropping the variable): Flux accepts it as an ordinary name.
 */
function setOwn(target: Record<string, string>, name: string, value: string): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Merges variable sources, later layers overwriting earlier ones, the way Flux builds its map:
 * every name must be valid (`'<name>' var name is invalid`, plus the source), and every newline is
 * removed from every value, so a multi-line value collapses onto one line.
 */
export function mergeVariables(layers: readonly VariableLayer[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { source, vars } of layers) {
    for (const [name, value] of Object.entries(vars)) {
      checkName(name, source);
      out.set(name, value.replaceAll('\n', ''));
    }
  }
  return out;
}

/**
 * Reads the `vars` / `secret-vars` inputs: a YAML or JSON map of names to scalar values. Numbers
 * and booleans become their text (`replicas: 3` gives "3"); lists and maps are refused.
 */
export function parseVarsInput(text: string, input: string): Record<string, string> {
  if (text.trim() === '') return {};
  const source = `input "${input}"`;
  let doc: unknown;
  try {
    doc = parseYamlValue(text, source);
  } catch (err) {
    const problem = err instanceof YamlError ? err.problem : (err as Error).message;
    throw new VariableError(source, `not valid YAML or JSON: ${problem}`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new VariableError(source, 'expected a map of variable names to values, e.g. "cluster_env: production"');
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof value === 'string') setOwn(out, name, value);
    else if (typeof value === 'number' || typeof value === 'boolean') setOwn(out, name, String(value));
    else if (value === null) setOwn(out, name, '');
    else {
      throw new VariableError(
        source,
        `${shown(name)}: expected a text, number or boolean value, got a ${Array.isArray(value) ? 'list' : 'map'}`,
      );
    }
  }
  return out;
}

/**
 * Reads repeated `--var name=value` flags (the value may contain `=`; a repeated name: the last
 * wins); `flag` names them in errors (`--var`, `--secret-var`).
 */
export function parseVarFlags(values: readonly string[], flag = 'var'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const source = `--${flag} ${shown(value)}`;
    const eq = value.indexOf('=');
    if (eq <= 0) throw new VariableError(source, 'expected name=value');
    const name = value.slice(0, eq);
    checkName(name, source);
    setOwn(out, name, value.slice(eq + 1));
  }
  return out;
}
