/**
 * The shape of one option in the option table (table.ts). Type-only: scripts/readme-tables.mjs
 * imports the table with Node's own TypeScript support, which cannot follow runtime imports.
 */
import type { KubeconfigSource } from '../cluster/kubeconfig.js';

/**
 * What an option's value is, and so how parse.ts reads it: text is trimmed, and empty text takes
 * the default. boolean: true or false (YAML 1.2 core); number: a whole number; duration: a Flux
 * duration (90s, 10m), in milliseconds; share: 50% or 0.5; size: 512Mi, 2Gi, in bytes; enum: one of
 * `values`; list: entries one per line or comma-separated (the CLI: the flag repeated); map: a YAML
 * or JSON map from the action input, NAME=VALUE flags from the CLI; string and multiline: the text,
 * absent when empty.
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

/** A registry login from registry-credentials. */
export interface RegistryLogin {
  username: string;
  password: string;
}

/**
 * Parsers for values whose shape is more than their kind (options/parse.ts has them), and the
 * value each gives. hosts: a map of host to token; logins: a map of registry host to USER:PASSWORD;
 * checkout-source: [KIND/]NS/NAME, in its normal form; vault-addresses: Vault base URLs;
 * kustomization-names: NAMESPACE/NAME entries, each once; located: a kubeconfig the edge found
 * (kubeconfigSource); flux-duration: a Flux duration (spec.timeout), in milliseconds.
 */
export interface ParsedBy {
  hosts: Record<string, string>;
  logins: Record<string, RegistryLogin>;
  'checkout-source': string;
  'vault-addresses': string[];
  'kustomization-names': string[];
  located: KubeconfigSource;
  'flux-duration': number;
}
export type Parser = keyof ParsedBy;

/** What a value must be beyond its kind; the error says `expects` (or the bounds) and the value given. */
export interface Check {
  /** Bounds of a number. */
  min?: number;
  max?: number;
  /** Longest text, in characters. */
  maxLength?: number;
  /** A regular expression the whole text must match, and what it is in words. */
  pattern?: string;
  expects?: string;
}

export interface Option {
  /** The action input (action.yml); absent for flags the CLI alone has. */
  input?: string;
  /**
   * The option's name in code: its key in the values an edge reads (OptionValues) and, unless
   * `setting` says otherwise, in Settings. Absent for flags the CLI handles itself.
   */
  field?: string;
  /** Where the value goes in Settings when not at `field`: another key, or GROUP.KEY. */
  setting?: string;
  kind: Kind;
  /** A parser for a value whose shape is more than its kind (see ParsedBy). */
  parse?: Parser;
  check?: Check;
  /** The allowed values of an enum. */
  values?: readonly string[];
  /**
   * action.yml's default, as written there; also the value of an empty input, unless it is an
   * expression the runner evaluates (`${{ github.token }}`).
   */
  default?: string;
  /** The value of an empty input where action.yml gives no default (kustomize on PATH). */
  fallback?: string;
  required?: boolean;
  /** action.yml's description (the README's inputs table and the Marketplace show it). */
  description?: string;
  secret?: SecretForm;
  /** The CLI flag; absent only with noFlag. */
  flag?: Flag;
  /** Why the CLI has no flag for this input. */
  noFlag?: string;
}
