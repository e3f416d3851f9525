/**
 * Parsers for option values as normalize() validates them; each error names the input (or flag)
 * and says what is allowed.
 */
import { parseDuration } from '../flux/parse.js';

/** `50%` or `0.5`; the share of an inventory one run may prune. */
export function parseShare(value: string | undefined, def: number): number {
  const v = (value ?? '').trim();
  if (v === '') return def;
  const n = v.endsWith('%') ? Number(v.slice(0, -1)) / 100 : Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1 || v === '%') {
    throw new Error(`prune-max-share must be a percentage from 0% to 100% (or a fraction 0–1); got "${v}"`);
  }
  return n;
}

export function parseDurationInput(value: string | undefined, name: string, def: number): number {
  const v = (value ?? '').trim();
  if (v === '') return def;
  const ms = parseDuration(v);
  if (ms === undefined || ms < 0) throw new Error(`${name} must be a duration such as 90s or 10m; got "${v}"`);
  return ms;
}

export function positiveDuration(value: string | undefined, name: string, def: number): number {
  const ms = parseDurationInput(value, name, def);
  if (ms === 0) throw new Error(`${name} must be longer than 0, such as 5s or 1m; got "${value?.trim()}"`);
  return ms;
}

/** YAML 1.2 core booleans, as GitHub documents boolean inputs; empty means false. */
export function parseBool(value: string | boolean | undefined, name: string): boolean {
  if (typeof value === 'boolean') return value;
  const v = (value ?? '').trim();
  if (v === '' || /^(false|False|FALSE)$/.test(v)) return false;
  if (/^(true|True|TRUE)$/.test(v)) return true;
  throw new Error(`${name} must be true or false; got "${v}"`);
}

export function defaultTrue(value: string | boolean | undefined, name: string): boolean {
  return value === undefined || value === '' ? true : parseBool(value, name);
}
