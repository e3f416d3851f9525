/**
 * Stand-ins for decrypted values, for the provenance render (src/reconcile/canary-render.ts): the
 * build is run again with every decrypted value replaced by a canary of the same shape, and every
 * output field that changes came from a secret. A canary differs from its value at every character
 * it varies, so that any copy, slice or hash of those characters changes too; it keeps the length,
 * the case of letters, digits as digits and white space where it is, so that a transformer that
 * splits, selects or parses the value meets the same shape. Pure.
 */

/** A decrypted SOPS scalar (str, int, float, bool). */
export type PlainValue = string | bigint | number | boolean;

/**
 * `full`: letters, digits and punctuation are varied (punctuation within a set that never starts a
 * comment, quotes or escapes anything in YAML, JSON or dotenv); `alnum`: letters and digits only, for
 * a second try when the first canary no longer builds (a delimiter the value is split on, a file the
 * build parses as YAML, base64 that must stay base64).
 */
export type CanaryTier = 'full' | 'alnum';

/** Punctuation a `full` canary cycles through: none of `#`, `=`, quotes, backslash or white space. */
const PUNCTUATION = '!$%&()*+,-./:;<>?@[]^_`{|}~';

const INT64_DIGITS = 19;

/** One character's stand-in: never the character itself when it is varied. */
function canaryChar(c: string, tier: CanaryTier): string {
  const code = c.charCodeAt(0);
  if (code >= 97 && code <= 122) return String.fromCharCode(((code - 97 + 13) % 26) + 97);
  if (code >= 65 && code <= 90) return String.fromCharCode(((code - 65 + 13) % 26) + 65);
  if (code >= 48 && code <= 57) return String.fromCharCode(((code - 48 + 5) % 10) + 48);
  const p = tier === 'full' ? PUNCTUATION.indexOf(c) : -1;
  return p === -1 ? c : PUNCTUATION.charAt((p + 1) % PUNCTUATION.length);
}

/** The canary of a text: the same length, each varied character replaced (see canaryChar). */
export function canaryText(text: string, tier: CanaryTier): string {
  let out = '';
  for (const c of text) out += canaryChar(c, tier);
  return out;
}

/**
 * The canary of a decrypted scalar, of the same type: text as canaryText; an integer digit by digit
 * (sign kept, still within int64); a float negated (0 becomes 1); a boolean flipped.
 */
export function canaryPlain(value: PlainValue, tier: CanaryTier): PlainValue {
  switch (typeof value) {
    case 'string':
      return canaryText(value, tier);
    case 'bigint': {
      const text = value.toString();
      const sign = text.startsWith('-') ? '-' : '';
      let digits = canaryText(text.slice(sign.length), 'alnum');
      // 19 digits may pass int64's bound once varied: a leading 1 or 2 keeps it inside, still different.
      if (digits.length >= INT64_DIGITS) digits = (text[sign.length] === '1' ? '2' : '1') + digits.slice(1);
      return BigInt(sign + digits);
    }
    case 'number':
      return value === 0 ? 1 : -value;
    case 'boolean':
      return !value;
  }
}
