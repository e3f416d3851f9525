/**
 * Data key recovery: each key group is opened through the key services, and with several groups the
 * parts are combined with Shamir's secret sharing (`sops.go` `decryptKeyGroup`, `getDataKeyWithKeyServices`).
 */
import { KEY_KINDS, weakString, type Metadata } from './metadata.js';
import { shamirCombine } from './shamir.js';
import { SopsError, type KeyService, type MasterKey } from './types.js';

/**
 * Optional member of a key service: why it held no key for `key` (returned `undefined`), e.g.
 * "no matching identity among 2 age identities". Services without it get a generic reason.
 */
export interface DescribesMiss {
  describeMiss(key: MasterKey): string;
}

/** How SOPS names a master key (`MasterKey.ToString()`), prefixed with its kind. */
export function describeMasterKey(key: MasterKey): string {
  const f = (name: string): string => weakString(key.fields[name]);
  switch (key.kind) {
    case 'age':
      return `age ${f('recipient')}`;
    case 'pgp':
      return `pgp ${f('fp')}`;
    case 'kms':
      return `kms ${f('arn')}${f('role') ? ` (role ${f('role')})` : ''}`;
    case 'gcp_kms':
      return `gcp_kms ${f('resource_id')}`;
    case 'azure_kv':
      return `azure_kv ${f('vault_url')}/keys/${f('name')}/${f('version')}`;
    case 'hc_vault':
      return `hc_vault ${f('vault_address')}/v1/${f('engine_path')}/keys/${f('key_name')}`;
  }
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}

function missReason(service: KeyService, key: MasterKey): string {
  const describe = (service as Partial<DescribesMiss>).describeMiss;
  return typeof describe === 'function' ? describe.call(service, key) : `${service.name}: no matching key`;
}

/** Opens one key group (`decryptKeyGroup`): the first master key any service opens gives the group's part. */
async function openGroup(
  group: readonly MasterKey[],
  services: readonly KeyService[],
): Promise<{ part: Uint8Array } | { failures: string[] }> {
  const failures: string[] = [];
  const ordered = [...group].sort((a, b) => KEY_KINDS.indexOf(a.kind) - KEY_KINDS.indexOf(b.kind));
  for (const key of ordered) {
    const reasons: string[] = [];
    const candidates = services.filter((s) => s.canOpen(key));
    if (candidates.length === 0) {
      reasons.push(
        services.length === 0 ? 'no key service was configured' : `no configured key service opens ${key.kind} keys`,
      );
    }
    for (const service of candidates) {
      try {
        const part = await service.decrypt(key);
        if (part !== undefined) return { part };
        reasons.push(missReason(service, key));
      } catch (err) {
        const text = errorText(err);
        reasons.push(text.startsWith(service.name) ? text : `${service.name}: ${text}`);
      }
    }
    failures.push(`${describeMasterKey(key)}: ${reasons.join('; ')}`);
  }
  if (group.length === 0) failures.push('the key group is empty');
  return { failures };
}

export async function recoverDataKey(meta: Metadata, services: readonly KeyService[]): Promise<Uint8Array> {
  const shamir = meta.groups.length > 1;
  const needed = shamir ? (meta.threshold > 0 ? meta.threshold : meta.groups.length) : 1;
  const parts: Uint8Array[] = [];
  const report: string[] = [];
  for (const [i, group] of meta.groups.entries()) {
    if (parts.length >= needed) break;
    const result = await openGroup(group, services);
    if ('part' in result) {
      parts.push(result.part);
    } else if (shamir) {
      report.push(`  key group ${i + 1}:`, ...result.failures.map((f) => `    - ${f}`));
    } else {
      report.push(...result.failures.map((f) => `  - ${f}`));
    }
  }
  if (parts.length < needed) {
    const head = shamir
      ? `cannot decrypt the SOPS data key: ${parts.length} of ${meta.groups.length} key groups could be opened, ` +
        `${needed} are needed (shamir_threshold ${needed}):`
      : 'cannot decrypt the SOPS data key: no master key could be opened:';
    throw new SopsError([head, ...report].join('\n'));
  }
  const dataKey = shamir ? shamirCombine(parts) : parts[0]!;
  if (dataKey.length !== 32) {
    throw new SopsError(`cannot decrypt the SOPS data key: the recovered key has ${dataKey.length} bytes, not 32`);
  }
  return dataKey;
}
