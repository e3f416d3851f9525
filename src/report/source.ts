/** Where a Kustomization was built from, in words for the reports (pure). */
import type { Report } from './model.js';

/** A revision with its digest cut to 7 (sha1) or 12 (sha256) hex digits, as reviewers read them. */
export function shortRevision(revision: string): string {
  return revision.replace(
    /\b(sha1|sha256):([0-9a-f]+)/g,
    (_, algo: string, hex: string) => `${algo}:${hex.slice(0, algo === 'sha1' ? 7 : 12)}`,
  );
}

/**
 * Where a Kustomization was built from, when that is not this checkout: `ExternalArtifact ns/name at
 * latest@sha256:…` (origin revision too), as plain text; undefined for the checkout.
 */
export function sourceText(k: Pick<Report, 'source'>): string | undefined {
  const s = k.source;
  if (s === undefined || s.ref === 'this checkout' || s.ref.endsWith('(this checkout)')) return undefined;
  const at = s.revision !== undefined ? ` at ${shortRevision(s.revision)}` : '';
  const origin = s.originRevision !== undefined ? ` (from ${shortRevision(s.originRevision)})` : '';
  return `${s.ref}${at}${origin}`;
}
