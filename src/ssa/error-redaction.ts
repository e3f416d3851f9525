/**
 * API error texts about an object that holds secret-derived values (substituted from a Secret or
 * secret-vars, decrypted by SOPS, or a v1 Secret's data). The API server quotes what it refuses
 * (`Unsupported value: "hun"`), so a pull request can slice a secret a few characters at a time into
 * fields the server refuses and read each slice in the preview: too short for any mask or scrub.
 * Two rules, pure:
 * - always, every secret-derived value of the object is redacted from the text, whatever its
 *   length where it stands quoted or as a refused value, and everywhere from MIN_SECRET_LENGTH up;
 * - in an untrusted run, no value the server quotes is shown at all: the field path and the
 *   server's reason stay, taken from the Status' causes where it sent them.
 */
import { MIN_SECRET_LENGTH, scrub } from '../objects/secret.js';

/** What replaces a value the server quoted, in an untrusted run. */
export const HIDDEN_VALUE = '(value hidden: the object holds secret-derived values)';

export interface ErrorRedaction {
  /** The object's secret-derived values (its secret paths' values, a Secret's data). */
  values: readonly string[];
  /** Hide every value the server quotes (an untrusted run, an object holding secret-derived values). */
  hideQuoted: boolean;
  /**
   * Values that are not secret but are not quoted either: the substituteFrom ConfigMaps' (Flux v1.9.6+
   * redacts every substituteFrom value from apply errors). Redacted where the server shows a value.
   */
  shown?: readonly string[];
}

/** The parts of an ApiError (cluster/errors.ts) a redaction reads; kept structural so that any error passes. */
interface StatusLike {
  message: string;
  request?: string;
  details?: {
    name?: string;
    kind?: string;
    causes?: readonly { field?: string; message?: string; reason?: string }[];
  };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The words before a value the server prints unquoted (`Invalid value: -1: must be…`). */
const VALUE_LEAD = '(?:Invalid|Unsupported|Duplicate|Forbidden|Required) value: ';

/**
 * Where a type-conversion error prints the value it could not take, unquoted, as Go's %v of it
 * (structured-merge-diff: `.data.port: expected string, got &value.valueUnstructured{Value:443}`,
 * `.spec.ports: expected list, got &{qxz}`): a decrypted number where a string belongs, or any value
 * where a map or a list belongs.
 */
const CONVERSION_LEAD = /^(?:&value\.valueUnstructured\{Value:|&\{)/;

/** A list element's keys in a field path (`ports[port=443,protocol="TCP"]`): the values are the object's. */
const LIST_KEYS = /^\[(?:[A-Za-z][\w.-]*=(?:"(?:[^"\\\n]|\\.)*"|[^,\]"\s]*)(?:,(?=[A-Za-z])|(?=\])))+\]/;

/**
 * `text` without any of `values`: from MIN_SECRET_LENGTH up everywhere (as scrub), shorter ones
 * where the server shows a value: quoted whole (`"abc"`, `'abc'`, JSON-escaped) or as the value after
 * `Invalid value: ` and the like. A short value elsewhere is ordinary text ("TCP" in a reason), but
 * with `anywhere` (values are hidden) one of 3 characters.
 */
export function redactValues(text: string, values: readonly string[], anywhere = false): string {
  let out = scrub(text, values);
  if (anywhere) {
    // A webhook's or a CEL rule's message can echo a value unquoted (`bad host: qxz`): where values
    // are hidden, a 3-character one goes wherever it stands (shorter ones would eat ordinary words).
    const three = [...new Set(values)].filter((v) => v.length === MIN_SECRET_LENGTH - 1);
    for (const v of three) out = out.split(v).join('***');
  }
  return redactShown(
    out,
    values.filter((v) => v.length < MIN_SECRET_LENGTH),
  );
}

/**
 * `text` without any of `values` where the server shows a value: quoted whole (`"abc"`, `'abc'`,
 * JSON-escaped), after `Invalid value: ` and the like, as a type-conversion error's value (`got &{qx}`,
 * `{Value:443}`) or a list key's (`[port=443]`); whatever their length.
 */
export function redactShown(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...new Set(values)].filter((x) => x !== '').sort((a, b) => b.length - a.length)) {
    const json = JSON.stringify(v).slice(1, -1);
    for (const q of new Set([v, json])) {
      out = out.replace(new RegExp(`(["'\`])${escapeRe(q)}\\1`, 'g'), '$1***$1');
      out = out.replace(new RegExp(`(${VALUE_LEAD})${escapeRe(q)}(?=$|[:,;)\\s])`, 'g'), '$1***');
      // A type-conversion error's value (`got &{qx}`, `{Value:443}`) and a list key's (`[port=443]`).
      out = out.replace(new RegExp(`(got &\\{|\\{Value:)${escapeRe(q)}(?=\\})`, 'g'), '$1***');
      out = out.replace(new RegExp(`([[,][A-Za-z][\\w.-]*=)${escapeRe(q)}(?=[,\\]])`, 'g'), '$1***');
    }
  }
  return out;
}

/** A quoted run starting at `i` (a Go %q string, JSON string or single-quoted text): its end, exclusive. */
function quotedEnd(text: string, i: number): number | undefined {
  const q = text[i];
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\' && q !== "'") j++;
    else if (text[j] === q) return j + 1;
    else if (text[j] === '\n') return undefined;
  }
  return undefined;
}

/** The end of a Go %v value in braces starting at `i` (`{...}`, nested braces and quoted runs skipped). */
function bracesEnd(text: string, i: number): number | undefined {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j]!;
    if (c === '"') {
      const end = quotedEnd(text, j);
      if (end === undefined) return undefined;
      j = end - 1;
    } else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return j + 1;
    else if (c === '\n') return undefined;
  }
  return undefined;
}

/** A list element's keys with every value hidden: `[port=${HIDDEN_VALUE},protocol=${HIDDEN_VALUE}]`. */
function hideListKeys(keys: string): string {
  return keys.replace(/([[,][A-Za-z][\w.-]*=)(?:"(?:[^"\\\n]|\\.)*"|[^,\]"\s]*)/g, `$1${HIDDEN_VALUE}`);
}

/**
 * The end of a server hint that holds only the server's own constants: `(e.g. 'my-name', …, regex
 * used for validation is '…')`, and the list after `supported values: ` (`"SCTP", "TCP", "UDP"`).
 */
function constantEnd(text: string, i: number): number | undefined {
  if (text.startsWith('(e.g. ', i)) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j]!;
      if (c === "'" || c === '"') {
        const end = quotedEnd(text, j);
        if (end === undefined) return undefined;
        j = end - 1;
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return j + 1;
    }
    return undefined;
  }
  // A pattern the server validates against: its own constant, however it is quoted.
  const pattern = /^(?:regular expression |regex used for validation is )'/.exec(text.slice(i, i + 40));
  if (pattern) return quotedEnd(text, i + pattern[0].length - 1);
  const lead = /^supported values: /.exec(text.slice(i, i + 20));
  if (lead) {
    let j = i + lead[0].length;
    for (;;) {
      if (text[j] !== '"') return j;
      const end = quotedEnd(text, j);
      if (end === undefined) return j;
      j = end;
      if (!text.startsWith(', ', j)) return j;
      j += 2;
    }
  }
  return undefined;
}

/**
 * `text` with every value the server quoted replaced by HIDDEN_VALUE: double- and single-quoted
 * runs, the unquoted value after `Invalid value: ` (a number, a Go map), the value a type-conversion
 * error prints (`got &{…}`, `&value.valueUnstructured{Value:…}`) and the values of a list element's
 * keys in a field path (`ports[port=…]`). Field paths, reasons and the server's own constants
 * (validation examples, the supported values of an enum) stay.
 */
export function hideQuotedValues(text: string): string {
  let out = '';
  let i = 0;
  const lead = new RegExp(`^${VALUE_LEAD}`);
  while (i < text.length) {
    const kept = constantEnd(text, i);
    if (kept !== undefined && kept > i) {
      out += text.slice(i, kept);
      i = kept;
      continue;
    }
    const c = text[i]!;
    const conversion = CONVERSION_LEAD.exec(text.slice(i, i + 40));
    const conversionEnd = conversion ? bracesEnd(text, i + conversion[0].indexOf('{')) : undefined;
    if (conversionEnd !== undefined) {
      out += HIDDEN_VALUE;
      i = conversionEnd;
      continue;
    }
    const keys = c === '[' ? LIST_KEYS.exec(text.slice(i)) : null;
    if (keys) {
      out += hideListKeys(keys[0]);
      i += keys[0].length;
      continue;
    }
    // A quote opens a value where it follows a separator (`x: "v"`, `parsing "v"`), not inside a word (`don't`).
    if ((c === '"' || c === "'") && (i === 0 || /[\s:([{=,]/.test(text[i - 1]!))) {
      const end = quotedEnd(text, i);
      // Single-quoted punctuation is the server's wording (`'-', '_' or '.'`), not a value of the object.
      const wording = end !== undefined && c === "'" && !/[\p{L}\p{N}]/u.test(text.slice(i + 1, end - 1));
      if (end !== undefined) {
        out += wording ? text.slice(i, end) : HIDDEN_VALUE;
        i = end;
        continue;
      }
    }
    const m = lead.exec(text.slice(i, i + 30));
    if (m && text[i + m[0].length] !== '"' && text[i + m[0].length] !== "'") {
      // An unquoted value runs to the next `: ` (the reason follows), a comma-space or the end of the line.
      const start = i + m[0].length;
      const rest = text.slice(start);
      const stop = rest.search(/: |, |\n|$/);
      out += m[0] + (stop > 0 ? HIDDEN_VALUE : '');
      i = start + Math.max(stop, 0);
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/**
 * An error's message about one object, redacted. A Kubernetes Status with causes is rendered from
 * them when values are hidden (`Service "web" is invalid: spec.ports[0].protocol: Unsupported
 * value: (value hidden: …)`), so the field and the reason come from the server's structure and
 * not from a reading of its sentence; every other text (a Status without causes, a conversion error,
 * a webhook's denial, our own errors) has its quoted values hidden.
 */
export function redactError(err: unknown, r: ErrorRedaction): string {
  return redactShown(redactSecrets(err, r), r.shown ?? []);
}

function redactSecrets(err: unknown, r: ErrorRedaction): string {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as StatusLike;
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (!r.hideQuoted) return redactValues(message, r.values);
  const causes = (e.details?.causes ?? []).filter((c) => c.field !== undefined && c.field !== '');
  if (causes.length > 0 && e.request !== undefined && message.startsWith(e.request)) {
    const what = e.details?.kind && e.details.name ? `${e.details.kind} "${e.details.name}" is invalid: ` : '';
    const lines = causes.map((c) => `${c.field}: ${hideQuotedValues(c.message ?? c.reason ?? 'invalid')}`);
    return redactValues(`${e.request}: ${what}${lines.join(', ')}`, r.values, true);
  }
  return redactValues(hideQuotedValues(message), r.values, true);
}
