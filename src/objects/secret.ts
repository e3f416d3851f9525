/**
 * Keeping secret values out of text: the one scrubber (server messages, key-service errors, log lines,
 * the report) and the values and forms a secret takes. Pure.
 */
import type { KubeObject } from './kube.js';

/**
 * Values shorter than this are never looked for. Three scrubbers used to differ (3 for server
 * messages, 4 elsewhere); 4 is kept for all: a 3-character value would replace ordinary words ("abc",
 * "the", "key") all over a message, and it is too short to be worth hiding. It is also the floor of
 * the runner's own masking (core.setSecret).
 */
export const MIN_SECRET_LENGTH = 4;

/** True for a v1 Secret (other apiVersions of kind Secret are custom resources). */
export function isSecret(obj: { apiVersion?: unknown; kind?: unknown }): boolean {
  return obj.kind === 'Secret' && obj.apiVersion === 'v1';
}

/**
 * The values worth looking for, as `scrub` looks for them: none shorter than MIN_SECRET_LENGTH, the
 * longest first so that a secret containing another goes whole. Worked out once for many texts.
 */
export function scrubList(values: Iterable<string | undefined>): string[] {
  const wanted = new Set<string>();
  for (const v of values) if (v !== undefined && v.length >= MIN_SECRET_LENGTH) wanted.add(v);
  return [...wanted].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each value of `list` (as scrubList returns it) replaced by `***`. */
export function scrubWith(text: string, list: readonly string[]): string {
  let out = text;
  for (const v of list) if (out.includes(v)) out = out.split(v).join('***');
  return out;
}

/** `text` with every occurrence of each value replaced by `***` (see MIN_SECRET_LENGTH). */
export function scrub(text: string, values: Iterable<string | undefined>): string {
  return scrubWith(text, scrubList(values));
}

/**
 * The sensitive strings of a Secret: each value of `data` (base64, and decoded) and of
 * `stringData` (a number or boolean as its text). Used to scrub server messages, which can echo a
 * request body.
 */
export function secretValues(obj: KubeObject): string[] {
  if (!isSecret(obj)) return [];
  const out: string[] = [];
  for (const field of ['data', 'stringData'] as const) {
    const map = obj[field];
    if (typeof map !== 'object' || map === null) continue;
    for (const v of Object.values(map as Record<string, unknown>)) {
      // A value decrypted as a number or a boolean (SOPS type:int) is no string: the server refuses it, quoting it.
      if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
      if (typeof v !== 'string' || v === '') continue;
      out.push(v);
      if (field === 'data') {
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        if (decoded !== '' && !decoded.includes('\uFFFD')) out.push(decoded);
      }
    }
  }
  return out;
}

/**
 * Every form a secret value can take in a log line, a report or a comment: the value, with its
 * newlines removed (as Flux's substitution does) and line by line, JSON-escaped, YAML single-quoted,
 * and base64 (as Secret data). Forms shorter than MIN_SECRET_LENGTH are left out.
 */
export function secretForms(value: string): string[] {
  const base = [value, value.replaceAll('\n', ''), ...value.split('\n'), value.trim()];
  const out = new Set<string>();
  for (const b of base) {
    out.add(b);
    out.add(JSON.stringify(b).slice(1, -1));
    // YAML's single-quoted form, as a value shows in a rendered manifest or a quoted error.
    out.add(b.replaceAll("'", "''"));
    out.add(Buffer.from(b, 'utf8').toString('base64'));
  }
  return [...out].filter((f) => f.length >= MIN_SECRET_LENGTH);
}
