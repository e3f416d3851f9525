/**
 * Reads one option's value as the table declares it: by its kind, its parser and its check, with
 * its default when empty. Each error (a UserError) names the input (or flag) and says what is
 * allowed. Pure.
 */
import { checkoutSourceOf } from '../flux/checkout.js';
import { parseDuration } from '../flux/parse.js';
import { parseBytes } from '../kustomize/run.js';
import { vaultAddresses } from '../sops/kms/settings.js';
import { UserError } from '../util/user-error.js';
import type { ParsedBy, Parser, Option, RegistryLogin } from './types.js';

/**
 * A value as an edge read it: text from an action input or a flag, a boolean flag, a list (split
 * already, or a flag repeated), a map (parsed already), or a kubeconfig the edge located.
 */
export type RawValue = string | boolean | readonly string[] | Readonly<Record<string, string>> | ParsedBy['located'];

/** The name errors use for an option: its input, else its flag. */
export function optionName(o: Option): string {
  return o.input ?? o.flag?.name ?? o.field ?? '?';
}

/** YAML 1.2 core booleans, as GitHub documents boolean inputs; empty means false. */
export function parseBool(value: string | boolean | undefined, name: string): boolean {
  if (typeof value === 'boolean') return value;
  const v = (value ?? '').trim();
  if (v === '' || /^(false|False|FALSE)$/.test(v)) return false;
  if (/^(true|True|TRUE)$/.test(v)) return true;
  throw new UserError(`${name} must be true or false; got "${v}"`);
}

/** `50%` or `0.5`. */
function parseShare(v: string, name: string): number {
  const n = v.endsWith('%') ? Number(v.slice(0, -1)) / 100 : Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1 || v === '%') {
    throw new UserError(`${name} must be a percentage from 0% to 100% (or a fraction 0–1); got "${v}"`);
  }
  return n;
}

/** 64 MiB as 64Mi, for an error's bound. */
function bytesText(n: number): string {
  for (const [unit, size] of [['Gi', 1024 ** 3] as const, ['Mi', 1024 ** 2] as const, ['Ki', 1024] as const]) {
    if (n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** A host as a credential map's key: lower case, with its port when given. */
function hostKey(input: string, host: string, example: string): string {
  const h = host.trim().toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?$/.test(h)) {
    throw new UserError(`${input}: ${JSON.stringify(host)} is not a host name (e.g. ${example})`);
  }
  return h;
}

const asMap = (v: RawValue | undefined): Readonly<Record<string, string>> =>
  typeof v === 'object' && !Array.isArray(v) ? (v as Readonly<Record<string, string>>) : {};
const asList = (v: RawValue | undefined): readonly string[] =>
  Array.isArray(v) ? (v as readonly string[]) : typeof v === 'string' && v.trim() !== '' ? [v] : [];

/** The parsers of ParsedBy, each given the value as read and the option's name for its errors. */
const PARSERS: { [P in Parser]: (v: RawValue | undefined, name: string) => ParsedBy[P] | undefined } = {
  hosts(v, name) {
    const out: Record<string, string> = {};
    for (const [host, token] of Object.entries(asMap(v))) {
      const h = hostKey(name, host, 'github.com or git.example.com:8443');
      if (token.trim() === '') throw new UserError(`${name}: the token for ${h} is empty`);
      out[h] = token.trim();
    }
    return out;
  },
  logins(v, name) {
    const out: Record<string, RegistryLogin> = {};
    for (const [host, login] of Object.entries(asMap(v))) {
      const h = hostKey(name, host, 'ghcr.io or registry.example.com:5000');
      const l = login.trim();
      const cut = l.indexOf(':');
      if (cut <= 0 || cut === l.length - 1) {
        throw new UserError(
          `${name}: the value for ${h} must be USERNAME:PASSWORD (for a token, any user name, e.g. token:<the token>)`,
        );
      }
      out[h] = { username: l.slice(0, cut), password: l.slice(cut + 1) };
    }
    return out;
  },
  'checkout-source': (v) => (typeof v === 'string' && v.trim() !== '' ? checkoutSourceOf(v.trim()) : undefined),
  'vault-addresses': (v) => vaultAddresses(asList(v)),
  'kustomization-names'(v, name) {
    const names = asList(v)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const dns = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
    for (const s of names) {
      const [ns, n, extra] = s.split('/');
      if (extra !== undefined || n === undefined || !dns.test(ns!) || !dns.test(n)) {
        throw new UserError(`${name}: "${s}" is not NAMESPACE/NAME of a Kustomization (e.g. flux-system/apps)`);
      }
    }
    return [...new Set(names)];
  },
  located: (v) => (typeof v === 'object' && 'kind' in v ? (v as ParsedBy['located']) : { kind: 'default' }),
  'flux-duration'(v, name) {
    const t = typeof v === 'string' ? v.trim() : '';
    if (t === '') return undefined;
    const ms = parseDuration(t);
    if (ms === undefined) throw new UserError(`${name} must be a duration such as 90s or 10m; got "${t}"`);
    return ms;
  },
};

/**
 * One option's value: by its parser, else by its kind; an empty value takes the default (not a
 * runner expression such as `${{ github.token }}`) or the fallback. Undefined: no value (a string
 * left empty).
 */
export function parseOption(o: Option, given: RawValue | undefined): unknown {
  const name = optionName(o);
  if (o.parse) {
    try {
      return PARSERS[o.parse](given, name);
    } catch (err) {
      // checkoutSourceOf and vaultAddresses are shared with the Kustomization files' reader.
      throw err instanceof UserError ? err : new UserError((err as Error).message, { cause: err });
    }
  }
  if (o.kind === 'list') return [...asList(given)];
  if (o.kind === 'map') return { ...asMap(given) };
  if (typeof given === 'boolean') {
    if (o.kind !== 'boolean') throw new UserError(`${name} needs a value`);
    return given;
  }
  const text = typeof given === 'string' ? given.trim() : '';
  const def = o.default !== undefined && !o.default.includes('${{') ? o.default : o.fallback;
  const v = text === '' ? (def ?? '') : text;
  const check = o.check ?? {};
  switch (o.kind) {
    case 'boolean':
      return parseBool(v, name);
    case 'enum':
      if (!o.values?.includes(v)) throw new UserError(`${name} must be one of ${o.values?.join(', ')}; got "${v}"`);
      return v;
    case 'number': {
      const n = Number(v);
      if (v === '' || !Number.isInteger(n) || n < (check.min ?? -Infinity) || n > (check.max ?? Infinity)) {
        const range = check.min !== undefined && check.max !== undefined ? ` from ${check.min} to ${check.max}` : '';
        throw new UserError(`${name} must be a whole number${range}; got "${v}"`);
      }
      return n;
    }
    case 'share':
      return parseShare(v, name);
    case 'duration': {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 0) throw new UserError(`${name} must be a duration such as 90s or 10m; got "${v}"`);
      if (ms < (check.min ?? 0)) throw new UserError(`${name} must be longer than 0, such as 5s or 1m; got "${v}"`);
      return ms;
    }
    case 'size': {
      const bytes = parseBytes(v);
      if (bytes === undefined) throw new UserError(`${name} must be a size such as 512Mi or 2Gi; got "${v}"`);
      if (bytes < (check.min ?? 0))
        throw new UserError(`${name} must be at least ${bytesText(check.min!)}; got "${v}"`);
      return bytes;
    }
    default: {
      // string and multiline: the text as given (a key file keeps its lines), absent when empty.
      if (v === '') return undefined;
      const value = o.kind === 'multiline' && text !== '' ? (given as string) : v;
      if (check.maxLength !== undefined && v.length > check.maxLength) {
        throw new UserError(`${name} must be at most ${check.maxLength} characters; got ${v.length}`);
      }
      if (check.pattern !== undefined && !new RegExp(check.pattern).test(v)) {
        throw new UserError(`${name} must be ${check.expects ?? `/${check.pattern}/`}; got "${v}"`);
      }
      return value;
    }
  }
}
