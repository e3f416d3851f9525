/**
 * The CLI's flag parser, generated from the option table: parseArgs options from each flag, and
 * settingsOf()'s input from the values (key files read, variables parsed, credentials collected for
 * scrubbing). Pure but for the injected file reader.
 */
import { parseArgs, type ParseArgsOptionDescriptor } from 'node:util';
import { splitPatterns } from '../flux/load.js';
import type { OptionValues } from './settings.js';
import { parseVarFlags } from '../substitute/variables.js';
import { maskSecret } from './read.js';
import { flagName } from './spelling.js';
import { UserError } from '../util/user-error.js';
import { OPTIONS } from './table.js';
import type { Option } from './types.js';

export type FlagValue = string | boolean | string[] | undefined;
/** Parsed values by flag name (as the table spells it: `no-cross-namespace-refs` is true when given). */
export type FlagValues = Readonly<Record<string, FlagValue>>;

/** The name parseArgs knows a flag by: a `no-NAME` boolean as NAME, so that `--no-NAME` sets it false. */
function parseKey(option: Option): string {
  const name = flagName(option)!;
  return option.kind === 'boolean' && name.startsWith('no-') ? name.slice(3) : name;
}

/** parseArgs's options for every flag of the table; `--no-X` negates any boolean X (allowNegative). */
export function parseArgsOptions(options: readonly Option[] = OPTIONS): Record<string, ParseArgsOptionDescriptor> {
  const out: Record<string, ParseArgsOptionDescriptor> = {};
  for (const o of options) {
    if (!o.flag) continue;
    out[parseKey(o)] = {
      type: o.kind === 'boolean' ? 'boolean' : 'string',
      ...(o.flag.multiple ? { multiple: true } : {}),
      ...(o.flag.short ? { short: o.flag.short } : {}),
    };
  }
  return out;
}

/** The command line's positionals and flag values; throws parseArgs's error on an unknown or malformed flag. */
export function parseFlags(argv: readonly string[]): { positionals: string[]; values: FlagValues } {
  const parsed = parseArgs({
    args: [...argv],
    allowPositionals: true,
    allowNegative: true,
    options: parseArgsOptions(),
  });
  const values: Record<string, FlagValue> = {};
  for (const o of OPTIONS) {
    const name = flagName(o);
    if (!name) continue;
    // No flag is a repeatable boolean, so a list holds strings.
    const v = parsed.values[parseKey(o)] as FlagValue;
    values[name] = parseKey(o) !== name && typeof v === 'boolean' ? !v : v;
  }
  return { positionals: parsed.positionals, values };
}

/**
 * `--var`/`--secret-var` values as a map. A secret's name is checked with its value left out, so
 * that no error can quote the value.
 */
function varFlags(flag: string, list: readonly string[], secret: boolean): Record<string, string> {
  if (secret) {
    if (list.some((item) => item.indexOf('=') <= 0)) {
      throw new UserError(`--${flag}: expected name=value (the argument is not shown: it may be the secret)`);
    }
    parseVarFlags(
      list.map((item) => item.slice(0, item.indexOf('=') + 1)),
      flag,
    );
  }
  return parseVarFlags(list, flag);
}

/**
 * `--git-credential HOST=TOKEN`-style values as a map: the key is a host (any text but "="), the
 * value a credential, which no error shows.
 */
export function pairFlags(flag: string, list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UserError(`--${flag}: expected HOST=VALUE (the argument is not shown: it may be a secret)`);
    Object.defineProperty(out, item.slice(0, eq), {
      value: item.slice(eq + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

async function readKeyFile(path: string, flag: string, read: (path: string) => Promise<string>): Promise<string> {
  try {
    return await read(path);
  } catch (err) {
    throw new UserError(`--${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      cause: err,
    });
  }
}

/** A flag's value as settingsOf() takes it; undefined when the flag was not given. */
async function fromFlag(
  option: Option,
  name: string,
  value: FlagValue,
  read: (path: string) => Promise<string>,
): Promise<unknown> {
  const text = typeof value === 'string' && value !== '' ? value : undefined;
  switch (option.flag?.value) {
    case 'path':
      return text ? { kind: 'path', path: text } : { kind: 'default' };
    case 'file':
      return text ? readKeyFile(text, name, read) : undefined;
    case 'var':
      return varFlags(name, Array.isArray(value) ? value : [], option.secret !== undefined);
    case 'pairs':
      return pairFlags(name, Array.isArray(value) ? value : []);
    default:
      return Array.isArray(value) ? value.flatMap(splitPatterns) : value;
  }
}

/**
 * settingsOf()'s input from the flags (mode, root, env and run are the caller's); `masked` holds
 * every credential a flag brought (key files, secret variables), for the report's scrubber.
 */
export async function rawFromFlags(
  values: FlagValues,
  read: (path: string) => Promise<string>,
): Promise<Omit<OptionValues, 'root'> & { masked: string[] }> {
  const masked: string[] = [];
  const raw: Record<string, unknown> = {};
  for (const o of OPTIONS) {
    const name = flagName(o);
    if (!name || !o.field) continue;
    const value = await fromFlag(o, name, values[name], read);
    if (value === undefined) continue;
    if (o.secret && o.flag?.value !== 'path') {
      maskSecret(o.secret, value as string | Record<string, string>, (v) => masked.push(v));
    }
    raw[o.field] = value;
  }
  // Every key is a field of the table.
  return { ...(raw as Omit<OptionValues, 'root'>), masked };
}
