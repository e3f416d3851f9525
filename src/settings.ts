import * as core from '@actions/core';
import { hostname } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { parseDuration } from './flux/parse.js';
import type { KubeconfigSource } from './cluster/kubeconfig.js';
import { DEFAULT_TIMEOUTS, type ClusterTimeouts } from './cluster/timeouts.js';
import { splitPatterns } from './flux/load.js';
import { maskLines } from './sops/keys.js';
import { vaultAddresses } from './sops/kms/settings.js';
import { parseVarsInput } from './substitute/variables.js';
import { actionSource, repositoryId } from './inventory/identity.js';
import { parseBuildLimits, type ProcessLimits } from './kustomize/run.js';

export type Mode = 'apply' | 'preview' | 'drift';
export type RemovedPolicy = 'report' | 'delete';
export const MODES: readonly Mode[] = ['apply', 'preview', 'drift'];

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
   * `namespace/name` of the GitRepository that is this checkout. Kustomizations whose sourceRef is
   * another source fail; without it, GitRepositories defined in the repository are matched by URL.
   */
  source?: string;
  /** Flux Kustomization files or globs, relative to `root`; when set, they replace `path`. */
  kustomizations: string[];
  /** spec.targetNamespace for the single-Kustomization case. */
  targetNamespace?: string;
  /** spec.wait and spec.timeout for the single-Kustomization case (a Flux duration, e.g. 5m). */
  wait: boolean;
  timeout?: string;
  /** Let kustomize fetch remote bases (refused by default: the build uses the checkout alone). */
  allowRemoteBases: boolean;
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
  /** Dry-runs in flight at once. */
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

export interface RunInfo {
  /** The commit being reconciled (GITHUB_SHA). */
  revision?: string;
  /**
   * The repository, as inventories record it (identity.ts repositoryId): `owner/repo` from
   * GITHUB_REPOSITORY (with the host when not github.com); for the CLI the git remote, else
   * `local:<absolute root>`. Path-mode names are derived from it, and an inventory recorded by
   * another source is never taken over.
   */
  source: string;
  /** Where `source` came from, for the log. */
  sourceFrom?: string;
  /**
   * The branch checked out: a pull request's base branch (what its preview is for), else the pushed
   * branch (GITHUB_REF); for the CLI, git's current branch. Unknown when detached or a tag.
   */
  branch?: string;
  /** Link to the workflow run. */
  url?: string;
  /** Lock holder identity: the run URL and job, or host and process for a local run. */
  holder: string;
}

export const DEFAULTS = {
  mode: 'apply' as Mode,
  path: '.',
  fieldManager: 'kustomize-controller',
  kustomizeBin: 'kustomize',
  concurrency: 8,
  pruneMaxShare: 0.5,
  lockTimeoutMs: 10 * 60_000,
  lockLeaseMs: 30_000,
};

/**
 * Inputs that action.yml declares for later stages of the pipeline (see the README's roadmap).
 * Setting one to anything but its neutral value is an error rather than silently ignored.
 */
export const NOT_YET_SUPPORTED: Record<string, string> = {};

export type InputReader = (name: string) => string;

/** Reads the action's inputs (`INPUT_*`) and `GITHUB_WORKSPACE`; masks the kubeconfig content at once. */
export function readActionSettings(
  input: InputReader = (n) => core.getInput(n),
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  for (const [name, neutral] of Object.entries(NOT_YET_SUPPORTED)) {
    const v = input(name).trim();
    if (v !== '' && v !== neutral) {
      throw new Error(
        `input "${name}" is not supported by this version yet (got "${v}"); remove it or set it to "${neutral}"`,
      );
    }
  }
  const root = env['GITHUB_WORKSPACE'] || process.cwd();
  // Every credential-bearing input is masked whole and line by line before anything can echo it.
  const masked: string[] = [];
  const mask = (value: string) => {
    masked.push(value);
    core.setSecret(value);
  };
  const secretVars = parseVarsInput(input('secret-vars'), 'secret-vars');
  for (const value of Object.values(secretVars)) {
    if (value.length >= 3) mask(value);
    maskLines(value, mask);
  }
  const token = input('github-token').trim();
  if (token !== '') mask(token);
  const sopsAgeKey = input('sops-age-key');
  const sopsPgpKey = input('sops-pgp-key');
  for (const key of [sopsAgeKey, sopsPgpKey]) maskLines(key, mask);
  const raw = input('kubeconfig');
  maskLines(raw, mask);
  const kubeconfig = kubeconfigSource(raw, root);
  if (kubeconfig.kind === 'content') maskLines(kubeconfig.content, mask);
  return normalize({
    mode: input('mode'),
    kubeconfig,
    context: input('context'),
    connectTimeout: input('connect-timeout'),
    requestTimeout: input('request-timeout'),
    root,
    path: input('path'),
    name: input('name'),
    source: input('source'),
    kustomizations: splitPatterns(input('kustomizations')),
    targetNamespace: input('target-namespace'),
    wait: input('wait'),
    timeout: input('timeout'),
    allowRemoteBases: input('allow-remote-bases'),
    vars: parseVarsInput(input('vars'), 'vars'),
    secretVars,
    strictSubstitute: input('strict-substitute'),
    sopsAgeKey,
    sopsPgpKey,
    sopsVerifyMac: input('sops-verify-mac'),
    sopsVaultAddresses: input('sops-vault-addresses'),
    env,
    fieldManager: input('field-manager'),
    kustomizeBin: input('kustomize-path'),
    concurrency: input('concurrency'),
    alwaysDryRun: input('always-dry-run'),
    prune: input('prune'),
    force: input('force'),
    inventoryNamespace: input('inventory-namespace'),
    pruneMaxShare: input('prune-max-share'),
    allowLargePrune: input('allow-large-prune'),
    removedKustomizations: input('removed-kustomizations'),
    driftCorrection: input('drift-correction'),
    defaultServiceAccount: input('default-service-account'),
    noCrossNamespaceRefs: input('no-cross-namespace-refs'),
    githubToken: input('github-token'),
    comment: input('comment'),
    checkRun: input('check-run'),
    lockTimeout: input('lock-timeout'),
    buildTimeout: input('build-timeout'),
    buildMemoryLimit: input('build-memory-limit'),
    run: runInfo(env, { root }),
    masked,
  });
}

/**
 * The run as GitHub describes it in the environment; outside Actions, this host and process, and
 * the repository given by the caller (the CLI's git remote) or else the source root.
 */
export function runInfo(
  env: NodeJS.ProcessEnv,
  local: { root: string; remote?: string; branch?: string } = { root: process.cwd() },
): RunInfo {
  const pushed = env['GITHUB_REF']?.startsWith('refs/heads/')
    ? env['GITHUB_REF'].slice('refs/heads/'.length)
    : undefined;
  const branch = baseBranch(env) ?? pushed ?? (env['GITHUB_REPOSITORY'] ? undefined : local.branch);
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com';
  const repo = env['GITHUB_REPOSITORY'];
  const source = repo
    ? { source: actionSource(server, repo), sourceFrom: 'GITHUB_REPOSITORY' }
    : local.remote
      ? { source: repositoryId(local.remote), sourceFrom: 'the git remote origin' }
      : { source: `local:${resolve(local.root)}`, sourceFrom: 'the source root, which has no git remote origin' };
  const runId = env['GITHUB_RUN_ID'];
  const url = repo && runId ? `${server}/${repo}/actions/runs/${runId}` : undefined;
  const attempt = env['GITHUB_RUN_ATTEMPT'] ? ` attempt ${env['GITHUB_RUN_ATTEMPT']}` : '';
  const job = env['GITHUB_JOB'] ? ` job ${env['GITHUB_JOB']}` : '';
  return {
    ...(env['GITHUB_SHA'] ? { revision: env['GITHUB_SHA'] } : {}),
    ...source,
    ...(branch ? { branch } : {}),
    ...(url ? { url } : {}),
    holder: url ? `${url}${attempt}${job}` : `${hostname()} pid ${process.pid}`,
  };
}

/** A pull request's base branch (GITHUB_BASE_REF is set only for pull request events). */
function baseBranch(env: NodeJS.ProcessEnv): string | undefined {
  return env['GITHUB_BASE_REF'] || undefined;
}

/**
 * The kubeconfig input takes the file's text, the file base64-encoded (as many store it in a
 * secret), or a path (relative to the workspace). Text is recognised by being multi-line or
 * starting like YAML/JSON; empty means KUBECONFIG or ~/.kube/config. A value that looks like
 * base64 but is not a kubeconfig once decoded is refused without quoting it.
 */
export function kubeconfigSource(value: string, root: string): KubeconfigSource {
  const v = value.trim();
  if (v === '') return { kind: 'default' };
  const compact = v.replace(/\s+/g, '');
  if (compact.length >= 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact) && compact.length % 4 === 0) {
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    if (looksLikeKubeconfig(decoded.trim())) return { kind: 'content', content: decoded };
    throw new Error(
      'input kubeconfig looks base64-encoded, but decoded it is not a kubeconfig: pass the decoded file ' +
        "(its YAML text, e.g. `${{ secrets.KUBECONFIG }}` holding the file's content) or a path in the workspace",
    );
  }
  if (looksLikeKubeconfig(v)) return { kind: 'content', content: value };
  if (v.length > 1024 || /[\0\r\n]/.test(v)) {
    throw new Error("input kubeconfig is neither a kubeconfig (YAML or JSON) nor a file path: pass the file's content");
  }
  return { kind: 'path', path: isAbsolute(v) ? v : resolve(root, v) };
}

function looksLikeKubeconfig(text: string): boolean {
  return (
    text.includes('\n') ||
    text.startsWith('{') ||
    /^(apiVersion|kind|clusters|contexts|users|current-context|preferences)\s*:/.test(text)
  );
}

export interface RawSettings {
  mode?: string;
  kubeconfig: KubeconfigSource;
  context?: string;
  root: string;
  path?: string;
  name?: string;
  source?: string;
  kustomizations?: string[];
  targetNamespace?: string;
  wait?: string | boolean;
  timeout?: string;
  allowRemoteBases?: string | boolean;
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
  let source: string | undefined;
  if (sourceText) {
    const [a, b] = sourceText.includes('/') ? sourceText.split('/', 2) : ['flux-system', sourceText];
    const dns = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
    if (sourceText.split('/').length > 2 || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(a!) || !dns.test(b!)) {
      throw new Error(
        `source must be the checkout's GitRepository as NAMESPACE/NAME (e.g. flux-system/flux-system); got "${sourceText}"`,
      );
    }
    source = `${a}/${b}`;
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
    kustomizations,
    ...(targetNamespace ? { targetNamespace } : {}),
    wait,
    ...(timeout ? { timeout } : {}),
    allowRemoteBases: parseBool(raw.allowRemoteBases, 'allow-remote-bases'),
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
    pruneMaxShare: parseShare(raw.pruneMaxShare),
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

/** `50%` or `0.5`; the share of an inventory one run may prune. */
function parseShare(value: string | undefined): number {
  const v = (value ?? '').trim();
  if (v === '') return DEFAULTS.pruneMaxShare;
  const n = v.endsWith('%') ? Number(v.slice(0, -1)) / 100 : Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1 || v === '%') {
    throw new Error(`prune-max-share must be a percentage from 0% to 100% (or a fraction 0–1); got "${v}"`);
  }
  return n;
}

function parseDurationInput(value: string | undefined, name: string, def: number): number {
  const v = (value ?? '').trim();
  if (v === '') return def;
  const ms = parseDuration(v);
  if (ms === undefined || ms < 0) throw new Error(`${name} must be a duration such as 90s or 10m; got "${v}"`);
  return ms;
}

function positiveDuration(value: string | undefined, name: string, def: number): number {
  const ms = parseDurationInput(value, name, def);
  if (ms === 0) throw new Error(`${name} must be longer than 0, such as 5s or 1m; got "${value?.trim()}"`);
  return ms;
}

/** YAML 1.2 core booleans, as GitHub documents boolean inputs; empty means false. */
export function parseBool(value: string | boolean | undefined, name: string): boolean {
  if (typeof value === 'boolean') return value;
  const v = (value ?? '').trim();
  if (v === '' || /^(false|False|FALSE)$/.test(v)) return false;
  if (/^(true|True|TRUE)$/.test(v)) return true;
  throw new Error(`${name} must be true or false; got "${v}"`);
}

function defaultTrue(value: string | boolean | undefined, name: string): boolean {
  return value === undefined || value === '' ? true : parseBool(value, name);
}
