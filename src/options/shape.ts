/**
 * The types derived from the option table (table.ts): what each option gives in Settings, and what an
 * edge gives for it. Type-only.
 */
import type { InputTable } from './table.js';
import type { ParsedBy, Parser } from './types.js';

// Settings, derived from the option table: each option's key (`setting`, else `field`) and the
// type of the value its kind or parser gives; GROUP.KEY settings make a group. An option whose
// value may be absent (text left empty, without a default) is optional.
export type Entry = InputTable[number];
type KeyIn<O> = O extends { setting: infer S extends string }
  ? S
  : O extends { field: infer F extends string }
    ? F
    : never;
type ValueOf<O> = O extends { parse: infer P extends Parser }
  ? ParsedBy[P]
  : O extends { kind: 'boolean' }
    ? boolean
    : O extends { kind: 'enum'; values: readonly (infer V)[] }
      ? V
      : O extends { kind: 'number' | 'share' | 'size' | 'duration' }
        ? number
        : O extends { kind: 'list' }
          ? string[]
          : O extends { kind: 'map' }
            ? Record<string, string>
            : string;
type Absent<O> = O extends { parse: 'checkout-source' | 'flux-duration' }
  ? true
  : O extends { parse: Parser }
    ? false
    : O extends { kind: 'string' | 'multiline' }
      ? O extends { fallback: string }
        ? false
        : O extends { default: infer D extends string }
          ? D extends `${string}\${{${string}`
            ? true
            : false
          : true
      : false;
type Under<O, Prefix extends string, Optional extends boolean> =
  KeyIn<O> extends `${Prefix}${infer K}`
    ? K extends `${string}.${string}`
      ? never
      : Absent<O> extends Optional
        ? K
        : never
    : never;
type Fields<Prefix extends string> = { [O in Entry as Under<O, Prefix, false>]: ValueOf<O> } & {
  [O in Entry as Under<O, Prefix, true>]?: ValueOf<O>;
};
type Group<K> = K extends `${infer G}.${string}` ? G : never;
/** The settings the option table declares, each parsed (parse.ts) and checked (rules.ts). */
export type ParsedSettings = Fields<''> & { [G in Group<KeyIn<Entry>>]: Fields<`${G}.`> };

/** A value as an edge reads it: text, or a boolean flag, a list or a map read already, a kubeconfig located. */
export type RawOf<O> = O extends { parse: 'located' }
  ? ParsedBy['located']
  : O extends { kind: 'boolean' }
    ? string | boolean
    : O extends { kind: 'list' }
      ? string | readonly string[]
      : O extends { kind: 'map' }
        ? Readonly<Record<string, string>>
        : string;
