/**
 * Settings: the option table's values, parsed and checked, with what the edges add. The type is
 * derived from the table (table.ts), so an option is declared once: its input, flag, kind, parser,
 * default and check there, its rules with other options in rules.ts.
 */
import { resolve } from 'node:path';
import { kubeconfigSource } from './kubeconfig.js';
import { parseBool, parseOption, type RawValue } from './parse.js';
import { checkRules } from './rules.js';
import { runInfo, type RunInfo } from './run-info.js';
import { INPUTS } from './table.js';
import type { Entry, ParsedSettings, RawOf } from './shape.js';

// Moved to src/options/ and re-exported here for the callers that import them from settings.
export { kubeconfigSource, parseBool, runInfo, type RunInfo };

/** The mode of a run that reconciles (reports carry it); plan and report are the fan-out's, without a cluster. */
export type Mode = 'apply' | 'preview' | 'drift';
export type RemovedPolicy = ParsedSettings['removedKustomizations'];
export type { ParsedSettings };

/** What the edges add to the options: where the run is, and what it may not print. */
interface EdgeSettings {
  /** The source root (absolute): paths are relative to it and may not leave it. */
  root: string;
  /**
   * The environment the run's ambient credentials are read from: the cloud KMS services' (OIDC-federated
   * variables) and a Bucket's provider aws (AWS_*). Child processes (kustomize, git, exec plugins)
   * inherit the runner's environment as processes do, filtered where it matters (kustomize/invoke.ts).
   */
  env: NodeJS.ProcessEnv;
  /** This run, as the inventory records it and a waiting run sees it. */
  run: RunInfo;
  /** Credential values from the inputs, masked when read: reports are scrubbed of them too. */
  masked: string[];
  /** How long a lock lasts unrenewed (tests shorten it). */
  lockLeaseMs: number;
  /**
   * The tree is not trusted (a preview, or a run on a pull_request event; set by the edges): sources
   * get credentials, and Kustomizations the Secrets of substituteFrom, only as the commit `base`
   * defines them (source/trust.ts); `root` is the checkout's (a git work tree). With `onBranch`
   * (the default branch), the base is the merge-base of `base` (else HEAD) with that branch
   * (source/trust-base.ts).
   */
  untrustedTree?: { reason: string; base?: string; onBranch?: string; root: string };
  /**
   * The run is for a pull request from a fork (set by the action's edge from the event): GitHub
   * gives its workflows no secrets, so a SOPS file that cannot be decrypted is explained as such.
   */
  fork?: boolean;
  /**
   * With destructive-approval-label: whether the merged pull request of the pushed commit carries
   * the label, and why (set by the action's edge from the API, src/github/approval.ts). Absent: not
   * looked up, so not approved.
   */
  approval?: { approved: boolean; why: string };
}

/**
 * Everything a run needs to know: the options (action inputs or CLI flags, table.ts describes each)
 * and what the edges add. Nothing else reads inputs.
 */
export type Settings = ParsedSettings & EdgeSettings;

/** The values an edge read, by each option's `field`, with what the edge adds. */
export type OptionValues = { [O in Entry as O extends { field: infer F extends string } ? F : never]?: RawOf<O> } & {
  root: string;
  env?: NodeJS.ProcessEnv;
  run?: RunInfo;
  masked?: string[];
  lockLeaseMs?: number;
};

const LOCK_LEASE_MS = 30_000;

/** Reads one action input by name (`core.getInput` at the action's edge, a map in tests). */
export type InputReader = (name: string) => string;

/** Every option parsed by its declaration, then the rules between options checked (rules.ts). */
export function settingsOf(values: OptionValues): Settings {
  const given = values as unknown as Readonly<Record<string, RawValue | undefined>>;
  const out: Record<string, unknown> = {};
  for (const o of INPUTS) {
    if (!o.field) continue;
    const value = parseOption(o, given[o.field]);
    if (value === undefined) continue;
    // A GROUP.KEY setting goes into its group (github.token, buildLimits.timeoutMs).
    const path = (o.setting ?? o.field).split('.');
    const key = path.pop()!;
    let into = out;
    for (const group of path) into = (into[group] ??= {}) as Record<string, unknown>;
    into[key] = value;
  }
  const settings = {
    ...(out as ParsedSettings),
    root: resolve(values.root),
    env: values.env ?? {},
    run: values.run ?? runInfo({}, { root: values.root }),
    masked: values.masked ?? [],
    lockLeaseMs: values.lockLeaseMs ?? LOCK_LEASE_MS,
  };
  checkRules(settings);
  return settings;
}

/** The mode of a run that reconciles; plan and report reconcile nothing. */
export function runMode(settings: Pick<Settings, 'mode'>): Mode {
  const { mode } = settings;
  if (mode === 'plan' || mode === 'report') {
    throw new Error(`mode: ${mode} reconciles nothing: it runs without a cluster (see the README's fan-out)`);
  }
  return mode;
}

/**
 * Every secret value a run knows from its settings before it starts: secret variables and the
 * credential values masked when read. The action and the CLI seed their Scrubber with them.
 */
export function knownSecrets(settings: Pick<Settings, 'secretVars' | 'masked'>): string[] {
  return [...Object.values(settings.secretVars), ...settings.masked];
}
