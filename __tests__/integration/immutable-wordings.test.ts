// The API server's own words for "this field cannot change", provoked kind by kind on the real
// test cluster with the request the apply engine makes (a server-side apply dry-run), and judged by
// immutableFields: each must name the fields, and the plain validation errors must not count.
// The texts are written to reports/immutable-errors.json; the unit table in immutable.test.ts holds
// a copy of them.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { Discovery, objectPath } from '../../src/cluster/discovery.js';
import { ApiError } from '../../src/cluster/errors.js';
import { immutableFields } from '../../src/ssa/policy.js';
import { adminClient, eventually, freshNamespace } from '../helpers/cluster.js';
import { freeServiceIPs, immutableCases, type ImmutableCase } from '../helpers/immutable-cases.js';
import { REPO } from '../helpers/paths.js';

const WHYS = immutableCases('n', 's', ['10.0.0.1', '10.0.0.2']).map((c) => c.why);

describe("the API server's immutable-field errors", () => {
  let client: ClusterClient;
  let discovery: Discovery;
  let cases: ImmutableCase[] = [];
  const seen: Record<string, unknown>[] = [];

  beforeAll(async () => {
    client = await adminClient();
    discovery = new Discovery(client);
    const ns = await freshNamespace(client, 'imm');
    const ips = await freeServiceIPs(client, 2);
    cases = immutableCases(ns, ns.slice(4), [ips[0]!, ips[1]!], await discovery.serverVersion());
    // Pods need the namespace's default ServiceAccount, which the controller-manager creates.
    await eventually('the default ServiceAccount', 60_000, () =>
      client.request(`GET`, `/api/v1/namespaces/${ns}/serviceaccounts/default`),
    );
  });

  afterAll(async () => {
    for (const o of cases.flatMap((c) => [...(c.setup ?? []), c.before])) {
      if (o.metadata.namespace) continue;
      const m = await discovery.mapping(o.apiVersion, o.kind);
      await client.request('DELETE', objectPath(m, undefined, o.metadata.name)).catch(() => undefined);
    }
    client.close();
    await mkdir(join(REPO, 'reports'), { recursive: true });
    await writeFile(join(REPO, 'reports', 'immutable-errors.json'), JSON.stringify(seen, null, 2));
  });

  const apply = async (obj: ImmutableCase['before'], dryRun: boolean) => {
    const m = await discovery.mapping(obj.apiVersion, obj.kind);
    return client.request('PATCH', objectPath(m, obj.metadata.namespace, obj.metadata.name), {
      query: { fieldManager: 'immutable-test', force: true, dryRun: dryRun ? 'All' : undefined },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  };

  /** Waits for what the server does after a create: CRDs Established, claims with a volume Bound. */
  const settle = async (o: ImmutableCase['before'], withVolume: boolean): Promise<void> => {
    const m = await discovery.mapping(o.apiVersion, o.kind);
    const path = objectPath(m, o.metadata.namespace, o.metadata.name);
    type Status = { status?: { phase?: string; conditions?: { type: string; status: string }[] } };
    if (o.kind === 'CustomResourceDefinition') {
      await eventually(`${o.metadata.name} Established`, 60_000, async () => {
        const live = await client.request<Status>('GET', path);
        return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
      });
      await discovery.refresh();
    }
    if (o.kind === 'PersistentVolumeClaim' && withVolume) {
      // The test cluster runs no volume binder: the claim is bound to its volume by hand.
      await client.request('PATCH', `${path}/status`, {
        contentType: 'application/merge-patch+json',
        body: { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } },
      });
    }
  };

  it.each(WHYS)('%s', async (why) => {
    const c = cases.find((k) => k.why === why)!;
    for (const o of c.setup ?? []) {
      await apply(o, false);
      await settle(o, false);
    }
    await apply(c.before, false);
    await settle(c.before, c.setup !== undefined);
    const err: unknown = await apply(c.after, true).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (c.want === 'accepted') {
      expect(err).toBeUndefined();
      return;
    }
    expect(err, 'the server accepted the change').toBeInstanceOf(ApiError);
    const e = err as ApiError;
    seen.push({ why, status: e.status, reason: e.reason, message: e.message, causes: e.details?.causes });
    // The order of the causes is the server's (1.37 names a StorageClass's provisioner first).
    const sorted = (fields: string[] | undefined) => fields && [...fields].sort();
    expect(sorted(immutableFields(e))).toEqual(sorted(c.want));
  });
});
