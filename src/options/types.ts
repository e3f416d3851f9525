/**
 * The shape of one option in the option table (table.ts). Type-only: scripts/readme-tables.mjs
 * imports the table with Node's own TypeScript support, which cannot follow runtime imports.
 */
import type { RawSettings } from './settings.js';

/**
 * What an option's value is. Every kind reaches normalize() as text (it validates and converts),
 * except list (split into entries, one per line or comma-separated) and map (a YAML or JSON map
 * from the action input, NAME=VALUE flags from the CLI).
 */
export type Kind =
  'boolean' | 'string' | 'multiline' | 'list' | 'map' | 'duration' | 'number' | 'share' | 'size' | 'enum';

/**
 * How a credential-bearing value is masked the moment it is read: whole (trimmed), whole and line
 * by line (key files, kubeconfigs), or each value of a map whole and line by line.
 */
export type SecretForm = 'whole' | 'lines' | 'values';

export interface Flag {
  /**
   * The long flag without `--`, when it is not the input's name; a default-true boolean is shown as
   * `--no-NAME`, and both spellings work.
   */
  name?: string;
  short?: string;
  /** The value's placeholder in the usage text (FILE, NS, D); absent for booleans. */
  arg?: string;
  /** Repeatable; the values of every occurrence are collected. */
  multiple?: boolean;
  /**
   * How the CLI reads the value where it differs from the action input: a file path (kubeconfig),
   * a file whose content is the value (key files), or NAME=VALUE pairs (variables).
   */
  value?: 'path' | 'file' | 'var' | 'pairs';
  /** One line of usage text (wrapped when printed). */
  help: string;
  /** The default as the usage text says it, where the option has none of its own or the CLI's differs. */
  defaultText?: string;
}

export interface Option {
  /** The action input (action.yml); absent for flags the CLI alone has. */
  input?: string;
  /** The normalize() input (RawSettings) it fills; absent for flags the CLI handles itself. */
  field?: keyof RawSettings;
  /** The Settings field it ends up in, where that is not `field` (for the reader of this table). */
  setting?: string;
  kind: Kind;
  /** The allowed values of an enum. */
  values?: readonly string[];
  /** action.yml's default, as written there. */
  default?: string;
  required?: boolean;
  /** action.yml's description (the README's inputs table and the Marketplace show it). */
  description?: string;
  secret?: SecretForm;
  /** The CLI flag; absent only with noFlag. */
  flag?: Flag;
  /** Why the CLI has no flag for this input. */
  noFlag?: string;
}
