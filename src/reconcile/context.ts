/**
 * What every phase of a run is given: the settings, the clusters, the resource manager (client,
 * discovery, field manager, concurrency and lines: ssa/manager.ts), a logger with groups, the secret
 * registry and the clock. The edges (the action, the CLI, tests) build one with `runContext`; the
 * graph runner derives one per Kustomization, and one.ts one per target cluster and lock, each by
 * `retarget`, which keeps the manager in step with the client and the logger.
 */
import type { Builds } from './builds.js';
import type { Children } from './children.js';
import type { Claims } from './claims.js';
import type { ClusterClient } from '../cluster/client.js';
import type { Discovery } from '../cluster/discovery.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Settings } from '../options/settings.js';
import type { Created } from '../ssa/apply.js';
import { ResourceManager } from '../ssa/manager.js';
import { systemClock, type Clock } from '../util/poll.js';

/** What a caller gives a run: where its lines go, and every credential as soon as it is known. */
export interface Hooks {
  /** Progress lines (one per applied object). */
  log: (line: string) => void;
  /** Called with every credential as soon as it is known, so the caller can mask it. */
  secret: (value: string) => void;
  /**
   * Runs `fn` as one titled section of the log (the action: a collapsible group). Without it,
   * sections are not marked.
   */
  group?: <T>(title: string, fn: () => Promise<T>) => Promise<T>;
}

/**
 * Where a run's lines go. `info` is a function property, not a method, so that it can be handed on
 * as it is wherever a module takes a line callback (`(line: string) => void`).
 */
export interface Logger {
  readonly info: (line: string) => void;
  group<T>(title: string, fn: () => Promise<T>): Promise<T>;
}

// One Clock for the whole run, the one the waits poll with (util/poll.ts): tests pass a fake one.
export { systemClock, type Clock };

/**
 * Every secret value met while running: passed on to the caller (who masks it) at once, and kept
 * so that texts the run writes into the cluster (the inventory's status message) can be scrubbed.
 */
export class SecretRegistry {
  readonly known = new Set<string>();

  constructor(private readonly sink: (value: string) => void) {}

  readonly add = (value: string): void => {
    this.known.add(value);
    this.sink(value);
  };

  /** A registry of its own that also passes each value on to this one. */
  scoped(): SecretRegistry {
    return new SecretRegistry(this.add);
  }
}

export interface RunContext {
  settings: Settings;
  /**
   * This run writes (mode apply, or drift-correction's apply); otherwise every write is a
   * server-side dry-run and no inventory or lock is touched. The one place the mode is asked.
   */
  applying: boolean;
  /** The action's cluster: substituteFrom, decryption and kubeConfig Secrets are read from it. */
  management: ClusterClient;
  /** The cluster the objects, inventory and lock are in (the management one without spec.kubeConfig). */
  client: ClusterClient;
  /**
   * The objects' I/O (apply, delete, wait, lists) over `client`, with its discovery, the field
   * manager, the concurrency and `log`'s lines. Changed with `retarget` only, which keeps it so.
   */
  manager: ResourceManager;
  log: Logger;
  secrets: SecretRegistry;
  clock: Clock;
  /**
   * In a preview: what would be created before this Kustomization's objects, by cluster (API server
   * URL), so that its objects in a namespace an earlier one would create are planned, not failed. The
   * graph runner gives each Kustomization a view of its own (reconcile/would-create.ts): what its
   * dependencies would create, then its own stages; never what a sibling adds meanwhile.
   */
  wouldCreate: Map<string, Created>;
  /**
   * The Kustomizations (`namespace/name`) whose lock this run lost to another: nothing more is
   * written for them, a fan-out job's failure record neither (the inventory is the new holder's).
   */
  lostLocks: Set<string>;
  /**
   * The run's build service (builds.ts): each Kustomization as the run builds it (its parent's build,
   * its source, its render), once a run, whoever asks. Absent: the render phase renders alone.
   */
  builds?: Builds;
  /**
   * Parents and children (children.ts): a child whose parent this run loads is reconciled from the
   * object its parent's build produces, and the parent does not write it. Absent: each from its file.
   */
  children?: Children;
  /**
   * Which Kustomization of the run builds an object (claims.ts): a prune or a removed Kustomization
   * asks before deleting, so that a move is not a deletion. Absent: every Kustomization alone.
   */
  claims?: Claims;
}

/** A logger over `hooks`: lines to hooks.log, sections to hooks.group (or unmarked). */
export function loggerOf(hooks: Pick<Hooks, 'log' | 'group'>): Logger {
  return {
    info: (line) => {
      hooks.log(line);
    },
    group: (title, fn) => (hooks.group ? hooks.group(title, fn) : fn()),
  };
}

/** The same logger with every line and section title prefixed (several Kustomizations at once). */
export function prefixed(log: Logger, prefix: string): Logger {
  return {
    info: (line) => {
      log.info(`${prefix} ${line}`);
    },
    group: (title, fn) => log.group(`${prefix} ${title}`, fn),
  };
}

export function runContext(
  settings: Settings,
  client: ClusterClient,
  discovery: Discovery,
  hooks: Hooks,
  clock: Clock = systemClock,
): RunContext {
  const log = loggerOf(hooks);
  return {
    settings,
    applying: settings.mode === 'apply',
    management: client,
    client,
    manager: new ResourceManager(client, discovery, {
      fieldManager: settings.fieldManager,
      concurrency: settings.concurrency,
      log: log.info,
    }),
    log,
    secrets: new SecretRegistry(hooks.secret),
    clock,
    wouldCreate: new Map(),
    lostLocks: new Set(),
  };
}

/** A RunContext for one Kustomization: its spec, and `note` (a line kept in its report and logged). */
export interface KustomizationContext extends RunContext {
  spec: KustomizationSpec;
  note: (line: string) => void;
}

/**
 * `ctx` over another client (of the same cluster: a lock's guarded writer; or of another one, with
 * its `discovery`), or with another logger: its manager follows, so that what it writes, reads and
 * logs is what the context says.
 */
export function retarget<T extends RunContext>(
  ctx: T,
  change: { client?: ClusterClient; discovery?: Discovery; log?: Logger },
): T {
  const { client, discovery, log } = change;
  return {
    ...ctx,
    ...(client ? { client } : {}),
    ...(log ? { log } : {}),
    manager: ctx.manager.with({
      ...(client ? { client } : {}),
      ...(discovery ? { discovery } : {}),
      ...(log ? { log: log.info } : {}),
    }),
  };
}
