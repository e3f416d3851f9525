import { parse } from 'yaml';

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
 * Merges variable sources, later layers overwriting earlier ones, the way Flux builds its map:
 * every name must be valid (`'<name>' var name is invalid`, plus the source), and every newline is
 * removed from every value, so a multi-line value collapses onto one line.
 */
export function mergeVariables(layers: readonly VariableLayer[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { source, vars } of layers) {
    for (const [name, value] of Object.entries(vars)) {
      if (!NAME.test(name)) {
        throw new Error(
          `${source}: '${name}' var name is invalid (letters, digits and "_", not starting with a digit)`,
        );
      }
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
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new Error(`input "${input}": not valid YAML or JSON: ${(err as Error).message.split('\n')[0] ?? ''}`, {
      cause: err,
    });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new Error(`input "${input}": expected a map of variable names to values, e.g. "cluster_env: production"`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (value === null) out[name] = '';
    else {
      throw new Error(
        `input "${input}": ${name}: expected a text, number or boolean value, got a ${Array.isArray(value) ? 'list' : 'map'}`,
      );
    }
  }
  return out;
}

/** Reads repeated `--var name=value` flags (the value may contain `=`). */
export function parseVarFlags(flags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new Error(`--var ${flag}: expected name=value`);
    out[flag.slice(0, eq)] = flag.slice(eq + 1);
  }
  return out;
}
