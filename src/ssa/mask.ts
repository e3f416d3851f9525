import type { KubeObject } from '../kustomize/parse.js';

/**
 * The sensitive strings of a Secret: each value of `data` (base64, and decoded) and of
 * `stringData`. Used to scrub server messages, which can echo a request body.
 */
export function secretValues(obj: KubeObject): string[] {
  if (obj.kind !== 'Secret' || obj.apiVersion !== 'v1') return [];
  const out: string[] = [];
  for (const field of ['data', 'stringData'] as const) {
    const map = obj[field];
    if (typeof map !== 'object' || map === null) continue;
    for (const v of Object.values(map as Record<string, unknown>)) {
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

/** Replaces every occurrence of each value (longest first) with `***`. */
export function scrub(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].filter((x) => x.length >= 3).sort((a, b) => b.length - a.length)) {
    out = out.split(v).join('***');
  }
  return out;
}
