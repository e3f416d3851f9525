/**
 * Flux's variable substitution (`github.com/fluxcd/pkg/envsubst`, a fork of drone/envsubst), re-implemented in
 * TypeScript. kustomize-controller runs it over the YAML text of every resource (`spec.postBuild`).
 *
 * The goal is byte-for-byte parity with the Go library (checked against envsubst v1.10.0), quirks included. The
 * Go package is a hand-written scanner whose edge cases are defined by its mechanics more than by any grammar, so
 * this module models the same scanner state (byte position, width of the last rune read, escape removal) and
 * every answer in `__tests__/unit/envsubst.test.ts` comes from running the real Go library.
 *
 * Internally every Go `string` is a "byte string": a JS string whose char codes are bytes (0-255). Slicing,
 * lengths, `indexOf` and comparisons on such strings are exactly Go's byte-level operations. Templates and
 * variable values are UTF-8 encoded on the way in (a lone UTF-16 surrogate, which UTF-8 cannot hold, becomes
 * U+FFFD); the result is decoded on the way out.
 *
 * Invalid UTF-8 in the result: Go strings may hold any bytes and several operations below cut inside a multi-byte
 * character. Such bytes are rendered as U+FFFD, one U+FFFD per invalid byte, which is what Go's own decoders
 * (`for range`, `[]rune(s)`, `encoding/json`) produce. (This is not the WHATWG `TextDecoder` rule, which folds a
 * truncated sequence into a single U+FFFD.)
 *
 * Where Flux differs from bash (all confirmed with the Go library):
 * - Only `${...}` is expanded. `$var` is plain text; `$$` is an escape for `$`, so `$${v}` produces `${v}` and
 *   `$$v` produces `$v`. Outside `${}` a backslash is plain text. Inside `${}` escapes (`$$`, `\/`, `\\`) exist
 *   only in the two arguments of the replace forms; in defaults, offsets and trim patterns they are literal text
 *   (`${e:-$$}` gives `$$`), and trim patterns see `\` as a glob escape.
 * - `${v-d}`, `${v+d}`, `${v?d}` are not recognised: after a name only `}`, `:`, `=`, `,`, `^`, `/`, `#`, `%` may
 *   follow, so these fail with "missing closing brace". (Flux's docs list them as supported or "unsupported"; in
 *   fact they break the whole resource.)
 * - `${v=d}`, `${v:=d}`, `${v:-d}` and the parse-only `${v:+d}`, `${v:?d}` all mean the same thing: "use d when
 *   the value is EMPTY". Unset and empty are not distinguished, nothing is assigned, `:+` is not "alternate value"
 *   and `:?` never raises an error.
 * - Default arguments are evaluated eagerly, before the variable is looked up: `${set:-${unset}}` fails in strict
 *   mode although the default is not used.
 * - Strict mode rejects an unset variable in `${v}` and in every value-reading form (`${#v}`, `${v^^}`, `${v:1}`,
 *   `${v/a/b}`, `${v#p}` ...), but not in the default forms (`=`, `:=`, `:-`, `:+`, `:?`).
 * - Lengths, offsets and substrings count UTF-8 bytes, not characters: `${#v}` of "héllo" is 6, `${v:1:2}` of
 *   "héllo" is "é", `${v:1}` of "日本" starts inside a character (rendered as U+FFFD).
 * - `${v:off:len}`: a non-numeric offset or length returns the value unchanged; an offset past the end gives "";
 *   a negative length counts back from the end (`${v:1:-1}`), but gives "" if it ends before the offset. The
 *   numbers are Go `strconv.Atoi` (optional sign, ASCII digits, 64-bit). Offset + length overflowing 64 bits is a
 *   Go runtime panic; here it throws `EnvsubstError` with the panic text. A negative offset counts from the end,
 *   but can only be written through a nested expression (`${v:${n}}`): `${v:-3}` is a default and `${v: -3}`
 *   is not a number.
 * - `${v: -1}` is not bash's "last character" (the space makes the offset non-numeric: value unchanged) and
 *   `${v:-1}` is the default form (default "1").
 * - A non-ASCII character right after `${v:` (e.g. `${v:é}`) is "bad substitution": the scanner steps back by the
 *   width of the peeked rune instead of the `:`.
 * - `${v#p}`, `${v##p}`, `${v%p}`, `${v%%p}` use a modified Go `path.Match`: `*` and `?` DO match `/`, a trailing
 *   `*` matches everything, `[...]` classes use `^` (not `!`) for negation, `\` escapes. A malformed pattern
 *   (`[`, `[]`, trailing `\`) leaves the value unchanged. Prefixes are tried at every byte length but the empty
 *   prefix is never tried, so `${v#*}` removes the first byte (bash removes nothing), `${v%*}` the last
 *   character, and `?` may match a single byte of a multi-byte character (leaving invalid UTF-8).
 * - `%` and `%%` reverse the value AND the pattern rune by rune and strip a prefix, so patterns are read
 *   backwards: `${v%[0-9]}` becomes `]9-0[` (malformed, value unchanged) and `${v%\.txt}` becomes `txt.\`
 *   (a lone trailing backslash: malformed). Simple patterns like `.*`, `/*`, `-*` work as in bash. A cut inside a
 *   character of the reversed value comes back as real U+FFFD characters (`${v%?}` of "日本" is "日" + two
 *   U+FFFD).
 * - `${v/p/r}`, `${v//p/r}`, `${v/#p/r}`, `${v/%p/r}` use literal substrings, not globs. In the pattern and the
 *   replacement `\/` is `/`, `\\` is `\` and `$$` is `$`. The pattern ends at the first `/` only, not at `}`:
 *   `${v/a}` is "bad substitution" and `${v/a} b/c}` replaces "a} b" with "c". An empty replacement deletes for
 *   `/` and `//`, but `${v/#p/}` and `${v/%p/}` leave the value unchanged. An empty pattern (from a nested
 *   `${}`) inserts the replacement before the value (`/`, `/#`), after it (`/%`) or between every character
 *   (`//`).
 * - `${v^}`, `${v^^}`, `${v,}`, `${v,,}` use Go's simple (one rune to one rune) Unicode case mapping: `ß`
 *   stays `ß`, `ﬁ` stays `ﬁ`, and there is no final-sigma rule. Any other mix of up to two `^`/`,` (`${v^,}`)
 *   returns the value unchanged.
 * - Names are Unicode letters, digits and `_` (`${日本}` and `${1a}` are valid references). `${}` and `${-x}` are
 *   "unable to parse variable name".
 * - `${#v}` must be exactly that; `${#}`, `${##v}` and `${#v:1}` are "bad substitution". In the trim forms
 *   `${v###}` strips a literal `#`.
 * - A NUL character in the template ends it: the rest of the text is dropped (inside `${` it is an error).
 *   Go's scanner uses rune 0 as its end-of-input marker.
 * - The whole template is parsed before anything is evaluated, so a syntax error anywhere wins over a strict-mode
 *   error earlier in the text.
 */

import { EnvsubstError } from './envsubst/errors.js';
import { Evaluator } from './envsubst/eval.js';
import { parseTemplate } from './envsubst/parse.js';
import { fromBytes, toBytes } from './envsubst/utf8.js';

export { EnvsubstError };

/** Options of {@link envsubst}. */
export interface EnvsubstOptions {
  /** Flux's `StrictPostBuildSubstitutions`: an unset variable read without a default is an error. */
  strict: boolean;
  /**
   * Called after each top-level `${...}` expression is evaluated, with the UTF-8 byte range of its
   * output in the result; the lookups it made came just before (for provenance: which fields a
   * variable went into).
   */
  onExpression?: (start: number, end: number) => void;
}

/**
 * Expands the `${...}` expressions of `template` like Flux. `lookup` returns undefined for an unset variable.
 * Throws {@link EnvsubstError}.
 */
export function envsubst(
  template: string,
  lookup: (name: string) => string | undefined,
  options: EnvsubstOptions,
): string {
  const nodes = parseTemplate(toBytes(template));
  const evaluator = new Evaluator(lookup, options.strict);
  const parts: string[] = [];
  let at = 0;
  for (const n of nodes) {
    const out = evaluator.evaluate(n);
    if (n.kind !== 'text') options.onExpression?.(at, at + out.length);
    parts.push(out);
    at += out.length;
  }
  return fromBytes(parts.join(''));
}
