import type { ClusterClient } from './client.js';
import { pollUntil, type Clock } from '../util/poll.js';

/** How one apiVersion+kind is reached on the server. */
export interface ResourceMapping {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name, as the server says it; never guessed. */
  resource: string;
  namespaced: boolean;
  /** The verbs the server says the resource supports, where discovery says. */
  verbs?: readonly string[];
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9';

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      resources?: { resource: string; responseKind?: { kind?: string }; scope?: string; verbs?: string[] }[];
    }[];
  }[];
}

interface LegacyResourceList {
  groupVersion: string;
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

/** A Kubernetes server's release, as `/version` says it. */
export interface ServerVersion {
  major: number;
  minor: number;
}

/** `/version`'s major and minor ("1", "34" or "34+" on some managed clusters); undefined when not numbers. */
export function parseServerVersion(v: { major?: unknown; minor?: unknown }): ServerVersion | undefined {
  const major = typeof v.major === 'string' ? /^(\d+)\+?$/.exec(v.major)?.[1] : undefined;
  const minor = typeof v.minor === 'string' ? /^(\d+)\+?$/.exec(v.minor)?.[1] : undefined;
  return major && minor ? { major: Number(major), minor: Number(minor) } : undefined;
}

/** Key of the mapping table: `group/version/Kind` (core group empty). */
export function mappingKey(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  return `${group}/${version}/${kind}`;
}

/** Reads an aggregated discovery document (`/api` or `/apis`, v2) into mappings. Subresources are left out. */
export function mappingsFromAggregated(doc: AggregatedList): ResourceMapping[] {
  const out: ResourceMapping[] = [];
  for (const item of doc.items ?? []) {
    const group = item.metadata?.name ?? '';
    for (const v of item.versions ?? []) {
      for (const r of v.resources ?? []) {
        const kind = r.responseKind?.kind;
        if (!kind || r.resource.includes('/')) continue;
        out.push({
          group,
          version: v.version,
          kind,
          resource: r.resource,
          namespaced: r.scope === 'Namespaced',
          ...(r.verbs ? { verbs: r.verbs } : {}),
        });
      }
    }
  }
  return out;
}

/** Reads a legacy APIResourceList (`/api/v1`, `/apis/g/v`) into mappings. */
export function mappingsFromLegacy(list: LegacyResourceList): ResourceMapping[] {
  const [group, version] = list.groupVersion.includes('/') ? list.groupVersion.split('/', 2) : ['', list.groupVersion];
  return (list.resources ?? [])
    .filter((r) => !r.name.includes('/'))
    .map((r) => ({
      group: group ?? '',
      version: version ?? '',
      kind: r.kind,
      resource: r.name,
      namespaced: r.namespaced,
      ...(r.verbs ? { verbs: r.verbs } : {}),
    }));
}

/**
 * The server serves no resource for an apiVersion and kind (after discovery was read again): callers
 * tell it with isUnservedKind, never by its text.
 */
export class UnservedKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(
      `the server has no resource for kind ${kind} in ${apiVersion}: is its CustomResourceDefinition installed, and is the apiVersion right?`,
    );
  }
}

/** Whether `err` says the server serves no resource for a kind (UnservedKindError). */
export const isUnservedKind = (err: unknown): err is UnservedKindError => err instanceof UnservedKindError;

/**
 * Maps apiVersion+kind to resources by the server's discovery. Uses aggregated discovery (two
 * requests for the whole server) and falls back to per-group-version lists on older servers.
 */
export class Discovery {
  private table = new Map<string, ResourceMapping>();
  /** The discovery read in flight or done; concurrent callers share it instead of each reading. */
  private loading: Promise<void> | undefined;

  /** The server's version, read once (undefined when it does not say). */
  private version: Promise<ServerVersion | undefined> | undefined;

  constructor(private readonly client: ClusterClient) {}

  /**
   * The server's Kubernetes version from `/version` (major and minor), read once; undefined when the
   * server does not answer it or answers something else: rules that depend on it then take the looser one.
   */
  serverVersion(): Promise<ServerVersion | undefined> {
    this.version ??= this.client.request<{ major?: unknown; minor?: unknown }>('GET', '/version').then(
      (v) => parseServerVersion(v),
      () => undefined,
    );
    return this.version;
  }

  /** Reads discovery again (after CRDs were established); callers at the same time share one read. */
  refresh(): Promise<void> {
    const current = this.read().finally(() => {
      if (this.loading === current) this.loading = Promise.resolve();
    });
    this.loading = current;
    return current;
  }

  private async read(): Promise<void> {
    const table = new Map<string, ResourceMapping>();
    for (const root of ['/api', '/apis']) {
      const doc = await this.client.request<
        AggregatedList & {
          versions?: string[];
          groups?: { preferredVersion?: { groupVersion: string }; versions?: { groupVersion: string }[] }[];
        }
      >('GET', root, { accept: AGGREGATED });
      let mappings: ResourceMapping[];
      if (doc.kind === 'APIGroupDiscoveryList') {
        mappings = mappingsFromAggregated(doc);
      } else {
        const gvs =
          root === '/api'
            ? (doc.versions ?? []).map((v) => `/api/${v}`)
            : (doc.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => `/apis/${v.groupVersion}`));
        const lists = await Promise.all(gvs.map((p) => this.client.request<LegacyResourceList>('GET', p)));
        mappings = lists.flatMap(mappingsFromLegacy);
      }
      for (const m of mappings) table.set(`${m.group}/${m.version}/${m.kind}`, m);
    }
    this.table = table;
  }

  /**
   * Starts reading discovery, if it has not been read, without waiting for it: the first mapping()
   * then finds it done. A failed read fails the mapping() calls that wait for it, as before.
   */
  warm(): void {
    (this.loading ?? this.refresh()).catch(() => undefined);
  }

  /** The mapping for apiVersion+kind; discovery is read again once before giving up (a CRD may be new). */
  /**
   * Reads discovery until it serves every one of `kinds` (`[apiVersion, kind]`), or the deadline:
   * the API server adds an established CRD's kinds to its discovery a moment after the condition,
   * longer on a busy server. At the deadline it returns; `mapping` then says what is not served.
   */
  async awaitServed(kinds: readonly (readonly [string, string])[], deadline: number, clock?: Clock): Promise<void> {
    await pollUntil(
      async () => {
        await this.refresh();
        return kinds.every(([apiVersion, kind]) => this.table.has(mappingKey(apiVersion, kind))) || undefined;
      },
      { deadline, intervalMs: 250, timedOut: () => false, ...(clock ? { clock } : {}) },
    );
  }

  async mapping(apiVersion: string, kind: string): Promise<ResourceMapping> {
    const key = mappingKey(apiVersion, kind);
    await (this.loading ?? this.refresh());
    let m = this.table.get(key);
    if (!m) {
      await this.refresh();
      m = this.table.get(key);
    }
    if (!m) throw new UnservedKindError(apiVersion, kind);
    return m;
  }

  /**
   * Every namespaced resource the server can list, once per group and resource, at the version
   * discovery gives first (the preferred one).
   */
  async namespacedLists(): Promise<ResourceMapping[]> {
    await (this.loading ?? this.refresh());
    const seen = new Set<string>();
    const out: ResourceMapping[] = [];
    for (const m of this.table.values()) {
      const key = `${m.group}/${m.resource}`;
      if (!m.namespaced || (m.verbs && !m.verbs.includes('list')) || seen.has(key)) continue;
      seen.add(key);
      out.push(m);
    }
    return out;
  }
}

/** What a URL needs of a resource: a mapping, or one of the well-known resources of verbs.ts. */
export type Resource = Pick<ResourceMapping, 'group' | 'version' | 'resource' | 'namespaced'>;

/** The URL path of an object (or of its collection when `name` is empty). */
export function objectPath(m: Resource, namespace: string | undefined, name: string): string {
  const base = m.group === '' ? `/api/${m.version}` : `/apis/${m.group}/${m.version}`;
  const ns = m.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? '')}` : '';
  return `${base}${ns}/${m.resource}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

/** The `[apiVersion, kind]` a CustomResourceDefinition serves: its group and kind at each served version. */
export function servedKinds(crd: object): [string, string][] {
  const spec = ((crd as { spec?: unknown }).spec ?? {}) as {
    group?: unknown;
    names?: { kind?: unknown };
    versions?: unknown;
  };
  const kind = spec.names?.kind;
  if (typeof spec.group !== 'string' || typeof kind !== 'string' || !Array.isArray(spec.versions)) return [];
  const group = spec.group;
  return (spec.versions as unknown[]).flatMap((v): [string, string][] => {
    const { name, served } = (v ?? {}) as { name?: unknown; served?: unknown };
    return typeof name === 'string' && served !== false ? [[`${group}/${name}`, kind]] : [];
  });
}
