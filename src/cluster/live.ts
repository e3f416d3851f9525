import type { ClusterClient } from './client.js';
import type { ResourceMapping } from './discovery.js';
import { collectionKey, find, list, type Collection } from './verbs.js';
import type { KubeObject } from '../objects/kube.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';

export type LiveObject = Record<string, unknown>;

/** What is known of an object on the server before it is dry-run. */
export interface LiveRead {
  /** The object as read, or undefined when it was not found. */
  object: LiveObject | undefined;
  /**
   * True when the object was read by itself (GET); false when it comes from (or is absent from) a
   * list of the objects carrying our owner labels, which misses an object without them.
   */
  direct: boolean;
}

/** Page size of the lists: the apiserver's default is unlimited; 500 is what kubectl uses. */
export const LIST_PAGE_SIZE = 500;

/** The label selector of the objects of Kustomization `namespace/name` (Flux's owner labels). */
export function selectorFor(name: string, namespace: string): string {
  return `${OWNER_NAME_LABEL}=${name},${OWNER_NAMESPACE_LABEL}=${namespace}`;
}

/**
 * The label selector of a Kustomization's objects, from an object's owner labels (set by
 * setOwnerLabels before apply), or undefined when it has none.
 */
export function ownerSelector(obj: KubeObject): string | undefined {
  const labels = obj.metadata.labels ?? {};
  const name = labels[OWNER_NAME_LABEL];
  const namespace = labels[OWNER_NAMESPACE_LABEL];
  if (!name || !namespace) return undefined;
  return selectorFor(name, namespace);
}

/**
 * List items as a GET would return them: a list of built-in types leaves out each item's
 * apiVersion and kind, which the drift comparison looks at.
 */
export function itemsOfList(mapping: ResourceMapping, items: readonly LiveObject[]): Map<string, LiveObject> {
  const apiVersion = mapping.group === '' ? mapping.version : `${mapping.group}/${mapping.version}`;
  const byName = new Map<string, LiveObject>();
  for (const item of items) {
    const name = (item['metadata'] as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string') continue;
    byName.set(name, { apiVersion, kind: mapping.kind, ...item });
  }
  return byName;
}

/** The resourceVersion of an object, '' when there is none (absent, or a dry-run create). */
export function versionOf(obj: LiveObject | undefined): string {
  const rv = (obj?.['metadata'] as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  return typeof rv === 'string' ? rv : '';
}

/**
 * Reads live objects (for the dry-run, prune and wait): one paged LIST per resource, namespace and
 * owner, shared by every object of that group, instead of one GET per object. A GET stays the way
 * for objects without owner labels and for groups whose list fails (a tenant allowed to get but
 * not to list). The list is read once: the apply checks each read against the dry-run's
 * resourceVersion and reads again with `get` when they differ (the object changed, or exists
 * without our labels); prune and wait use `find`, which GETs what the list lacks.
 */
export class LiveObjects {
  private readonly lists = new Map<string, Promise<Map<string, LiveObject> | undefined>>();

  constructor(
    private readonly client: ClusterClient,
    private readonly pageSize = LIST_PAGE_SIZE,
  ) {}

  /** An object by the list of its resource, namespace and `selector`; by GET without a selector. */
  async read(
    mapping: ResourceMapping,
    ref: { name: string; namespace?: string | undefined },
    selector: string | undefined,
  ): Promise<LiveRead> {
    if (selector === undefined) return { object: await this.get(mapping, ref), direct: true };
    const collection: Collection = { resource: mapping, namespace: ref.namespace };
    const key = `${collectionKey(collection)}?${selector}`;
    let list = this.lists.get(key);
    if (!list) {
      list = this.list(mapping, collection, selector);
      this.lists.set(key, list);
    }
    const byName = await list;
    if (!byName) return { object: await this.get(mapping, ref), direct: true };
    return { object: byName.get(ref.name), direct: false };
  }

  /**
   * The object, or undefined when it does not exist: from the list when it is there, else by GET
   * (missing from a list of our objects, it may still exist without our labels).
   */
  async find(
    mapping: ResourceMapping,
    ref: { name: string; namespace?: string | undefined },
    selector: string | undefined,
  ): Promise<LiveObject | undefined> {
    const read = await this.read(mapping, ref, selector);
    if (read.object !== undefined || read.direct) return read.object;
    return this.get(mapping, ref);
  }

  /** One object by GET; undefined when it does not exist. */
  get(
    mapping: ResourceMapping,
    ref: { name: string; namespace?: string | undefined },
  ): Promise<LiveObject | undefined> {
    return find<LiveObject>(this.client, { resource: mapping, namespace: ref.namespace, name: ref.name });
  }

  private async list(
    mapping: ResourceMapping,
    collection: Collection,
    selector: string,
  ): Promise<Map<string, LiveObject> | undefined> {
    let items: LiveObject[];
    try {
      items = await list<LiveObject>(this.client, collection, {
        query: { labelSelector: selector },
        pageSize: this.pageSize,
        // A resource whose CRD was just established answers lists 429 (Retry-After: 1) until its
        // cache is ready, while GETs are served: GET instead of waiting a second.
        noWaitOn429: true,
      });
    } catch {
      return undefined;
    }
    return itemsOfList(mapping, items);
  }
}
