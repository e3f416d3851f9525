/**
 * The API verbs the rest of the tool uses, so that URLs are built here only: an object is named by
 * its resource (from discovery, or one of the well-known ones below), namespace and name. Each verb is
 * one request (list: one per page), with the client's retries and errors.
 */
import type { ClusterClient, RequestOptions } from './client.js';
import { objectPath, type Resource } from './discovery.js';
import { isNotFound } from './errors.js';
import { pollUntil, systemClock, type Clock } from '../util/poll.js';

export type { Resource };

export const CONFIGMAPS: Resource = { group: '', version: 'v1', resource: 'configmaps', namespaced: true };
export const SECRETS: Resource = { group: '', version: 'v1', resource: 'secrets', namespaced: true };
export const NAMESPACES: Resource = { group: '', version: 'v1', resource: 'namespaces', namespaced: false };
export const LEASES: Resource = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true };

/** The namespaced resource `resource` of an apiVersion (`group/version`, or `v1` for the core group). */
export function resourceOf(apiVersion: string, resource: string): Resource {
  const slash = apiVersion.indexOf('/');
  return slash === -1
    ? { group: '', version: apiVersion, resource, namespaced: true }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), resource, namespaced: true };
}

/** One object. */
export interface Ref {
  resource: Resource;
  namespace?: string | undefined;
  name: string;
}

/** The objects of a resource in one namespace, or in all when `namespace` is absent. */
export interface Collection {
  resource: Resource;
  namespace?: string | undefined;
}

function pathOf(ref: Ref): string {
  return objectPath(ref.resource, ref.namespace, ref.name);
}

function collectionPath(c: Collection): string {
  const r = c.resource;
  if (!r.namespaced || c.namespace !== undefined) return objectPath(r, c.namespace, '');
  return `${r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`}/${r.resource}`;
}

/** A key for a collection (its URL path), for caches and grouping; equal for the same collection. */
export function collectionKey(c: Collection): string {
  return collectionPath(c);
}

export function get<T = Record<string, unknown>>(client: ClusterClient, ref: Ref): Promise<T> {
  return client.request<T>('GET', pathOf(ref));
}

/** The object, or undefined when the server says 404. */
export async function find<T = Record<string, unknown>>(client: ClusterClient, ref: Ref): Promise<T | undefined> {
  try {
    return await get<T>(client, ref);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** True when the object exists (one GET; 404 is false, any other error is thrown). */
export async function exists(client: ClusterClient, ref: Ref): Promise<boolean> {
  return (await find(client, ref)) !== undefined;
}

export interface ListOptions extends Pick<RequestOptions, 'accept' | 'noWaitOn429'> {
  query?: Record<string, string | number | boolean | undefined>;
  /** Read in pages of this many items (`limit`/`continue`), all pages; without it, one request. */
  pageSize?: number;
}

/** The items of a collection, every page of it. */
export async function list<T>(client: ClusterClient, c: Collection, opts: ListOptions = {}): Promise<T[]> {
  const { query, pageSize, ...rest } = opts;
  const items: T[] = [];
  let next: string | undefined;
  do {
    const paging = pageSize === undefined ? {} : { limit: pageSize, continue: next };
    const page = await client.request<{ items?: T[]; metadata?: { continue?: string } }>('GET', collectionPath(c), {
      ...rest,
      query: { ...query, ...paging },
    });
    items.push(...(page.items ?? []));
    next = pageSize === undefined ? undefined : page.metadata?.continue || undefined;
  } while (next);
  return items;
}

export function create<T = Record<string, unknown>>(client: ClusterClient, c: Collection, body: unknown): Promise<T> {
  return client.request<T>('POST', collectionPath(c), { body });
}

/** PUT: replaces the object (its resourceVersion, when set, must still be the live one). */
export function replace<T = Record<string, unknown>>(client: ClusterClient, ref: Ref, body: unknown): Promise<T> {
  return client.request<T>('PUT', pathOf(ref), { body });
}

/** PATCH with a patch of `contentType` (JSON patch, merge patch). */
export function patch<T = Record<string, unknown>>(
  client: ClusterClient,
  ref: Ref,
  body: unknown,
  contentType: string,
  query?: RequestOptions['query'],
): Promise<T> {
  return client.request<T>('PATCH', pathOf(ref), { body, contentType, ...(query ? { query } : {}) });
}

/** Server-side apply of `obj` as `fieldManager`, forcing conflicts (as Flux); a dry run when asked. */
export function apply<T = Record<string, unknown>>(
  client: ClusterClient,
  ref: Ref,
  obj: unknown,
  opts: { fieldManager: string; dryRun?: boolean },
): Promise<T> {
  return client.request<T>('PATCH', pathOf(ref), {
    query: { fieldManager: opts.fieldManager, force: true, dryRun: opts.dryRun ? 'All' : undefined },
    body: obj,
    contentType: 'application/apply-patch+yaml',
  });
}

/** DELETE, with DeleteOptions as the body when given (the API server then reads them from it alone). */
export async function remove(client: ClusterClient, ref: Ref, deleteOptions?: Record<string, unknown>): Promise<void> {
  await client.request('DELETE', pathOf(ref), deleteOptions === undefined ? {} : { body: deleteOptions });
}

/**
 * Looks (GET) until each object is gone or the timeout passes; returns those still there then.
 * Between looks it waits `intervalMs`, never past the deadline.
 */
export async function waitGone<R extends Ref>(
  client: ClusterClient,
  refs: readonly R[],
  opts: { timeoutMs: number; intervalMs: number; clock?: Clock },
): Promise<readonly R[]> {
  const clock = opts.clock ?? systemClock;
  let left = refs;
  return pollUntil(
    async () => {
      const still: R[] = [];
      for (const r of left) if (await exists(client, r)) still.push(r);
      left = still;
      return left.length === 0 ? [] : undefined;
    },
    { deadline: clock.now() + opts.timeoutMs, intervalMs: opts.intervalMs, clock, timedOut: () => left },
  );
}
