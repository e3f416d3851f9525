import { normalizeVaultAddress } from './endpoints.js';

/**
 * The `sops-vault-addresses` input (a list separated by newlines, commas or spaces) or the
 * `--sops-vault-addresses` flag's values, each normalised; a bad entry is an error naming the input.
 */
export function vaultAddresses(raw: string | readonly string[] | undefined): string[] {
  const items = (typeof raw === 'string' ? [raw] : (raw ?? [])).flatMap((v) => v.split(/[\s,]+/));
  return [...new Set(items.filter((v) => v !== '').map(normalizeVaultAddress))];
}
