import { resolve } from 'node:path';
import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { DEFAULT_TIMEOUTS, type ClusterTimeouts } from '../cluster/timeouts.js';
import { checkoutSourceOf } from '../flux/checkout.js';
import { vaultAddresses } from '../sops/kms/settings.js';
import { parseBuildLimits, type ProcessLimits } from '../kustomize/run.js';
import { kubeconfigSource } from './kubeconfig.js';
import { runInfo, type RunInfo } from './run-info.js';
import { defaultTrue, parseBool, parseDurationInput, parseShare, positiveDuration } from './values.js';

// Moved to src/options/ and re-exported here for the callers that import them from settings.
export { kubeconfigSource, parseBool, runInfo, type RunInfo };

export type Mode = 'apply' | 'preview' | 'drift';
export type RemovedPolicy = 'report' | 'delete';
export const MODES: readonly Mode[] = ['apply', 'preview', 'drift'];
/** The fan-out's modes without a cluster (src/action/plan-mode.ts, report-mode.ts): they run no Settings' mode. */
export const FAN_OUT_MODES = ['plan', 'report'] as const;

/** Everything a run needs to know, from action inputs or CLI flags. Nothing else reads inputs or env. */
export interface Settings {
  /** apply: change the cluster; preview: plan only, report what would change; drift: plan, fail on drift. */
  mode: Mode;
  kubeconfig: KubeconfigSource;
  /** kubeconfig context to use; empty means the file's current context. */
  context?: string;
  /** The source root; `path` is relative to it and may not leave it. */
  root: string;
  /** Directory to build, relative to `root` (the single-Kustomization case). */
  path: string;
  /** The Kustomization's name for `path`; default derived from the repository and the path. */
  name?: string;
  /**
   * The source that is this checkout: `namespace/name` of a GitRepository, or `OCIRepository/namespace/name`,
   * `Bucket/namespace/name`, `ExternalArtifact/namespace/name` (checkoutSourceOf). Kustomizations of other sources are built from those;
   * without it, GitRepositories defined in the repository are matched by URL.
   */
  source?: string;
  /** Host (lower case, with its port when not the default) → token, for fetching other GitRepositories. */
  gitCredentials?: Record<string, string>;
  /** Registry host (lower case, with its port) → login, for pulling OCIRepositories. */
  registryCredentials?: Record<string, { username: string; password: string }>;
  /** Flux Kustomization files or globs, relative to `root`; when set, they replace `path`. */
  kustomizations: string[];
  /** Only the Kustomization files under `clusters/<cluster>/` (a repository driving several clusters). */
  cluster?: string;
  /**
   * Only these Kustomizations (`namespace/name`) of the files, one fan-out job's share; dependencies
   * outside it are reconciled by other jobs and awaited in the cluster. Empty: all of them.
   */
  select: string[];
  /** Dependencies no job of this run reconciles: ready by their last recorded run, whatever its commit. */
  unchangedDependencies: string[];
  /** How long a selected Kustomization waits for a dependency another job reconciles. */
  dependencyTimeoutMs: number;
  /** Where to write the run's report as JSON (relative to `root`), for mode: report to merge. */
  reportFile?: string;
  /** mode: plan: the commits a change is between (inputs base and head; defaults from the event). */
  base?: string;
  head?: string;
  /** mode: report: the report files to merge (globs relative to `root`). */
  reports: string[];
  /** spec.targetNamespace for the single-Kustomization case. */
  targetNamespace?: string;
  /** spec.wait and spec.timeout for the single-Kustomization case (a Flux duration, e.g. 5m). */
  wait: boolean;
  timeout?: string;
  /** Let kustomize fetch remote bases (refused by default: the build uses the checkout alone). */
  allowRemoteBases: boolean;
  /** Let sources point at loopback, link-local and metadata addresses (refused by default). */
  allowPrivateSourceHosts: boolean;
  /**
   * The tree is not trusted (a preview, or a run on a pull_request event; set by the edges): sources
   * get credentials, and Kustomizations the Secrets of substituteFrom, only as the commit `base`
   * defines them (source/trust.ts); `root` is the checkout's (a git work tree).
   */
  untrustedTree?: { reason: string; base?: string; root: string };
  /** Variables for postBuild substitution from the `vars` input or `--var` flags (lowest precedence). */
  vars: Record<string, string>;
  /** Like `vars`, from the `secret-vars` input: every value is masked in logs. */
  secretVars: Record<string, string>;
  /** An unset variable without a default fails the run (Flux's default); off, it becomes "". */
  strictSubstitute: boolean;
  /** age identities (text of identity files) and OpenPGP private keys for SOPS, from inputs or files. */
  sopsAgeKey?: string;
  sopsPgpKey?: string;
  /** Check each SOPS document's MAC (Flux does not); off mirrors Flux. */
  sopsVerifyMac: boolean;
  /** Vault base URLs (normalised) that a SOPS file's hc_vault keys may name; others are not contacted. */
  sopsVaultAddresses: string[];
  /** The environment the cloud KMS services read ambient credentials from (OIDC-federated variables). */
  env: NodeJS.ProcessEnv;
  /** Field manager for server-side apply (Flux's own by default, so ownership carries over). */
  fieldManager: string;
  /** kustomize binary, a path or a name on PATH. */
  kustomizeBin: string;
  /** Dry-runs, and writes of objects of one kind, in flight at once. */
  concurrency: number;
  /** Dry-run every object, also those whose managed fields prove them unchanged (Flux's exact cost). */
  alwaysDryRun: boolean;
  /** spec.prune and spec.force for the single-Kustomization case. */
  prune: boolean;
  force: boolean;
  /** Namespace of the inventory ConfigMaps and Leases; default: each Kustomization's own namespace. */
  inventoryNamespace?: string;
  /** Largest share (0–1) of an inventory one run may prune, unless allowLargePrune. */
  pruneMaxShare: number;
  /** Lifts the prune guards (an empty build, a prune above pruneMaxShare) for this run. */
  allowLargePrune: boolean;
  /**
   * What to do with a Kustomization whose file left the repository while its inventory remains:
   * report it as orphaned, or apply its recorded deletionPolicy (kustomizations only).
   */
  removedKustomizations: RemovedPolicy;
  /** GitHub reporting (action only): the token, and whether to comment on PRs and create check runs. */
  github: { token?: string; comment: boolean; checkRun: boolean };
  /**
   * Flux's --default-service-account: the ServiceAccount (in each Kustomization's namespace) to
   * impersonate for Kustomizations that name none in spec.serviceAccountName.
   */
  defaultServiceAccount?: string;
  /** Flux's --no-cross-namespace-refs: refuse a spec.sourceRef in another namespace. */
  noCrossNamespaceRefs: boolean;
  /** In drift mode, apply when drift is found (Flux corrects drift on every reconcile). */
  driftCorrection: boolean;
  /** How long to wait for another run's lock on a Kustomization; and how long a lock lasts unrenewed. */
  lockTimeoutMs: number;
  lockLeaseMs: number;
  /** connect-timeout and request-timeout: how long connecting to the cluster and one request may take. */
  clusterTimeouts: ClusterTimeouts;
  /** Time and memory kustomize (and what it starts) may use per build. */
  buildLimits: ProcessLimits;
  /** This run, as the inventory records it and a waiting run sees it. */
  run: RunInfo;
  /** Credential values from the inputs, masked when read: reports are scrubbed of them too. */
  masked: string[];
  /**
   * The run is for a pull request from a fork (set by the action's edge from the event): GitHub
   * gives its workflows no secrets, so a SOPS file that cannot be decrypted is explained as such.
   */
  fork?: boolean;
}

export const DEFAULTS = {
  mode: 'apply' as Mode,
  path: '.',
  fieldManager: 'kustomize-controller',
  kustomizeBin: 'kustomize',
  concurrency: 8,
  pruneMaxShare: 0.5,
  lockTimeoutMs: 10 * 60_000,
  dependencyTimeoutMs: 30 * 60_000,
  lockLeaseMs: 30_000,
};

/**
 * Inputs that action.yml declares for later stages of the pipeline (see the README's roadmap).
 * Setting one to anything but its neutral value is an error rather than silently ignored.
 */
export const NOT_YET_SUPPORTED: Record<string, string> = {};

/** Reads one action input by name (`core.getInput` at the action's edge, a map in tests). */
export type InputReader = (name: string) => string;

export interface RawSettings {
  mode?: string;
  kubeconfig: KubeconfigSource;
  context?: string;
  root: string;
  path?: string;
  name?: string;
  source?: string;
  gitCredentials?: Record<string, string>;
  registryCredentials?: Record<string, string>;
  kustomizations?: string[];
  cluster?: string;
  select?: string[];
  unchangedDependencies?: string[];
  dependencyTimeout?: string;
  reportFile?: string;
  base?: string;
  head?: string;
  reports?: string[];
  /** mode: report: the plan's matrix output (JSON), the jobs whose report files are expected; read by the report edges. */
  matrix?: string;
  targetNamespace?: string;
  wait?: string | boolean;
  timeout?: string;
  allowRemoteBases?: string | boolean;
  allowPrivateSourceHosts?: string | boolean;
  vars?: Record<string, string>;
  secretVars?: Record<string, string>;
  strictSubstitute?: string | boolean;
  sopsAgeKey?: string;
  sopsPgpKey?: string;
  sopsVerifyMac?: string | boolean;
  /** A list (newlines, commas or spaces) or the CLI flag's values. */
  sopsVaultAddresses?: string | readonly string[];
  env?: NodeJS.ProcessEnv;
  fieldManager?: string;
  kustomizeBin?: string;
  concurrency?: string;
  alwaysDryRun?: string | boolean;
  prune?: string | boolean;
  force?: string | boolean;
  inventoryNamespace?: string;
  pruneMaxShare?: string;
  allowLargePrune?: string | boolean;
  removedKustomizations?: string;
  driftCorrection?: string | boolean;
  defaultServiceAccount?: string;
  noCrossNamespaceRefs?: string | boolean;
  githubToken?: string;
  comment?: string | boolean;
  checkRun?: string | boolean;
  lockTimeout?: string;
  lockLeaseMs?: number;
  connectTimeout?: string;
  requestTimeout?: string;
  buildTimeout?: string;
  buildMemoryLimit?: string;
  run?: RunInfo;
  masked?: string[];
}

/** Applies defaults and validates; errors name the input (or flag) and say what is allowed. */
export function normalize(raw: RawSettings): Settings {
  const mode = (raw.mode?.trim() || DEFAULTS.mode) as Mode;
  if (!MODES.includes(mode)) {
    throw new Error(`mode must be one of ${MODES.join(', ')}; got "${raw.mode}"`);
  }
  const concurrencyText = raw.concurrency?.trim() || String(DEFAULTS.concurrency);
  const concurrency = Number(concurrencyText);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new Error(`concurrency must be a whole number from 1 to 64; got "${concurrencyText}"`);
  }
  const fieldManager = raw.fieldManager?.trim() || DEFAULTS.fieldManager;
  if (fieldManager.length > 128) {
    throw new Error(`field-manager must be at most 128 characters; got ${fieldManager.length}`);
  }
  const path = raw.path?.trim() || DEFAULTS.path;
  const kustomizations = raw.kustomizations ?? [];
  if (kustomizations.length > 0 && path !== DEFAULTS.path) {
    throw new Error(
      `set either path ("${path}") or kustomizations, not both: a Flux Kustomization file names its own spec.path`,
    );
  }
  const name = raw.name?.trim();
  if (kustomizations.length > 0 && name) {
    throw new Error('name applies to path; with kustomizations, each Kustomization file names itself (metadata.name)');
  }
  const sourceText = raw.source?.trim();
  const source = sourceText ? checkoutSourceOf(sourceText) : undefined;
  const hostKey = (input: string, host: string, example: string): string => {
    const h = host.trim().toLowerCase();
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?$/.test(h)) {
      throw new Error(`${input}: ${JSON.stringify(host)} is not a host name (e.g. ${example})`);
    }
    return h;
  };
  const gitCredentials: Record<string, string> = {};
  for (const [host, token] of Object.entries(raw.gitCredentials ?? {})) {
    const h = hostKey('git-credentials', host, 'github.com or git.example.com:8443');
    if (token.trim() === '') throw new Error(`git-credentials: the token for ${h} is empty`);
    gitCredentials[h] = token.trim();
  }
  const registryCredentials: Record<string, { username: string; password: string }> = {};
  for (const [host, login] of Object.entries(raw.registryCredentials ?? {})) {
    const h = hostKey('registry-credentials', host, 'ghcr.io or registry.example.com:5000');
    const cut = login.trim().indexOf(':');
    if (cut <= 0 || cut === login.trim().length - 1) {
      throw new Error(
        `registry-credentials: the value for ${h} must be USERNAME:PASSWORD (for a token, any user name, e.g. token:<the token>)`,
      );
    }
    registryCredentials[h] = { username: login.trim().slice(0, cut), password: login.trim().slice(cut + 1) };
  }
  const targetNamespace = raw.targetNamespace?.trim();
  if (kustomizations.length > 0 && targetNamespace) {
    throw new Error(
      'target-namespace applies to path; with kustomizations, set spec.targetNamespace in the Kustomization files',
    );
  }
  const wait = parseBool(raw.wait, 'wait');
  const prune = parseBool(raw.prune, 'prune');
  const force = parseBool(raw.force, 'force');
  if (kustomizations.length > 0 && (prune || force)) {
    throw new Error(
      'prune and force apply to path; with kustomizations, set spec.prune and spec.force in the Kustomization files',
    );
  }
  const inventoryNamespace = raw.inventoryNamespace?.trim();
  if (inventoryNamespace && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(inventoryNamespace)) {
    throw new Error(`inventory-namespace must be a namespace name (DNS-1123 label); got "${inventoryNamespace}"`);
  }
  const removedText = raw.removedKustomizations?.trim() || 'report';
  if (removedText !== 'report' && removedText !== 'delete') {
    throw new Error(`removed-kustomizations must be report or delete; got "${raw.removedKustomizations}"`);
  }
  const removed: RemovedPolicy = removedText;
  if (removed === 'delete' && kustomizations.length === 0) {
    throw new Error(
      'removed-kustomizations: delete needs kustomizations: the set of Kustomization files is what a removed one is missing from',
    );
  }
  const defaultServiceAccount = raw.defaultServiceAccount?.trim();
  if (defaultServiceAccount && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(defaultServiceAccount)) {
    throw new Error(
      `default-service-account must be a ServiceAccount name (DNS-1123 subdomain); got "${defaultServiceAccount}"`,
    );
  }
  const driftCorrection = parseBool(raw.driftCorrection, 'drift-correction');
  if (driftCorrection && mode !== 'drift') {
    throw new Error(`drift-correction applies to mode: drift; this run's mode is ${mode}`);
  }
  const { cluster, select } = fanOut(raw, kustomizations.length > 0);
  const unchangedDependencies = namespacedNames(raw.unchangedDependencies ?? [], 'unchanged-dependencies');
  const reportFile = raw.reportFile?.trim();
  const timeout = raw.timeout?.trim();
  if (kustomizations.length > 0 && (wait || timeout)) {
    throw new Error(
      'wait and timeout apply to path; with kustomizations, set spec.wait and spec.timeout in the Kustomization files',
    );
  }
  return {
    mode,
    kubeconfig: raw.kubeconfig,
    ...(raw.context?.trim() ? { context: raw.context.trim() } : {}),
    clusterTimeouts: {
      connectMs: positiveDuration(raw.connectTimeout, 'connect-timeout', DEFAULT_TIMEOUTS.connectMs),
      requestMs: positiveDuration(raw.requestTimeout, 'request-timeout', DEFAULT_TIMEOUTS.requestMs),
    },
    root: resolve(raw.root),
    path,
    ...(name ? { name } : {}),
    ...(source ? { source } : {}),
    ...(Object.keys(gitCredentials).length > 0 ? { gitCredentials } : {}),
    ...(Object.keys(registryCredentials).length > 0 ? { registryCredentials } : {}),
    kustomizations,
    ...(cluster ? { cluster } : {}),
    select,
    unchangedDependencies,
    dependencyTimeoutMs: parseDurationInput(raw.dependencyTimeout, 'dependency-timeout', DEFAULTS.dependencyTimeoutMs),
    ...(reportFile ? { reportFile } : {}),
    ...(raw.base?.trim() ? { base: raw.base.trim() } : {}),
    ...(raw.head?.trim() ? { head: raw.head.trim() } : {}),
    reports: raw.reports ?? [],
    ...(targetNamespace ? { targetNamespace } : {}),
    wait,
    ...(timeout ? { timeout } : {}),
    allowRemoteBases: parseBool(raw.allowRemoteBases, 'allow-remote-bases'),
    allowPrivateSourceHosts: parseBool(raw.allowPrivateSourceHosts, 'allow-private-source-hosts'),
    vars: raw.vars ?? {},
    secretVars: raw.secretVars ?? {},
    strictSubstitute: defaultTrue(raw.strictSubstitute, 'strict-substitute'),
    ...(raw.sopsAgeKey?.trim() ? { sopsAgeKey: raw.sopsAgeKey } : {}),
    ...(raw.sopsPgpKey?.trim() ? { sopsPgpKey: raw.sopsPgpKey } : {}),
    sopsVerifyMac: defaultTrue(raw.sopsVerifyMac, 'sops-verify-mac'),
    sopsVaultAddresses: vaultAddresses(raw.sopsVaultAddresses),
    env: raw.env ?? {},
    fieldManager,
    kustomizeBin: raw.kustomizeBin?.trim() || DEFAULTS.kustomizeBin,
    concurrency,
    alwaysDryRun: parseBool(raw.alwaysDryRun, 'always-dry-run'),
    prune,
    force,
    ...(inventoryNamespace ? { inventoryNamespace } : {}),
    pruneMaxShare: parseShare(raw.pruneMaxShare, DEFAULTS.pruneMaxShare),
    allowLargePrune: parseBool(raw.allowLargePrune, 'allow-large-prune'),
    removedKustomizations: removed,
    driftCorrection,
    ...(defaultServiceAccount ? { defaultServiceAccount } : {}),
    noCrossNamespaceRefs: parseBool(raw.noCrossNamespaceRefs, 'no-cross-namespace-refs'),
    github: {
      ...(raw.githubToken?.trim() ? { token: raw.githubToken.trim() } : {}),
      comment: defaultTrue(raw.comment, 'comment'),
      checkRun: defaultTrue(raw.checkRun, 'check-run'),
    },
    lockTimeoutMs: parseDurationInput(raw.lockTimeout, 'lock-timeout', DEFAULTS.lockTimeoutMs),
    lockLeaseMs: raw.lockLeaseMs ?? DEFAULTS.lockLeaseMs,
    buildLimits: parseBuildLimits(raw.buildTimeout, raw.buildMemoryLimit),
    run: raw.run ?? runInfo({}, { root: raw.root }),
    masked: raw.masked ?? [],
  };
}

/**
 * Every secret value a run knows from its settings before it starts: secret variables and the
 * credential values masked when read. The action and the CLI seed their Scrubber with them.
 */
export function knownSecrets(settings: Pick<Settings, 'secretVars' | 'masked'>): string[] {
  return [...Object.values(settings.secretVars), ...settings.masked];
}

/** cluster and select, checked: names as Kubernetes spells them, and only with kustomizations. */
function fanOut(raw: RawSettings, files: boolean): { cluster?: string; select: string[] } {
  const cluster = raw.cluster?.trim();
  if (cluster && !/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(cluster)) {
    throw new Error(
      `cluster must be the name of a directory under clusters/ (letters, digits, - _ .); got "${cluster}"`,
    );
  }
  const select = namespacedNames(raw.select ?? [], 'select');
  if (!files && (cluster || select.length > 0)) {
    throw new Error(`${cluster ? 'cluster' : 'select'} needs kustomizations: it picks among the Kustomization files`);
  }
  return { ...(cluster ? { cluster } : {}), select };
}

/** A list of Kustomizations as NAMESPACE/NAME, checked, each once; errors name the input. */
function namespacedNames(list: readonly string[], input: string): string[] {
  const names = list.map((s) => s.trim()).filter((s) => s !== '');
  const name = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
  for (const s of names) {
    const [ns, n, extra] = s.split('/');
    if (extra !== undefined || n === undefined || !name.test(ns!) || !name.test(n)) {
      throw new Error(`${input}: "${s}" is not NAMESPACE/NAME of a Kustomization (e.g. flux-system/apps)`);
    }
  }
  return [...new Set(names)];
}
