/**
 * How a flag is spelled and explained, for the usage text and the README's flags table. No runtime
 * imports: scripts/readme-tables.mjs loads it with Node's own TypeScript support.
 */
import type { Option } from './types.js';

/** The CLI flag's name (without `--`) of an option, if it has one. */
export function flagName(option: Option): string | undefined {
  return option.flag ? (option.flag.name ?? option.input) : undefined;
}

/** A flag as typed: `--no-NAME` for a boolean that is on by default, with its short form and placeholder. */
export function flagSpelling(option: Option): string {
  const name = flagName(option) ?? '';
  const negated = option.kind === 'boolean' && option.default === 'true' ? `--no-${name}` : `--${name}`;
  const short = option.flag?.short ? `-${option.flag.short}, ` : '';
  return `${short}${negated}${option.flag?.arg ? ` ${option.flag.arg}` : ''}`;
}

/** The help of a flag, with the default it takes when not given. */
export function flagHelp(option: Option): string {
  const help = option.flag?.help ?? '';
  if (option.flag?.defaultText) return `${help} (default: ${option.flag.defaultText})`;
  if (option.kind !== 'boolean' && option.default !== undefined) return `${help} (default ${option.default})`;
  return help;
}
