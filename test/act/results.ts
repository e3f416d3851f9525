// Pure parts of the workflow runs under act: mapping a workflow's `uses:` to local stand-ins, and
// reading act's JSON log into jobs, steps and outcomes.
import { parse } from 'yaml';

/** The owner the README's `<owner>/kustomize-reconcile@v1` is replaced with: the action is a local copy. */
export const ACTION_OWNER = 'kr-test';

/**
 * Third-party actions with a stand-in under test/act/actions (by name, any version, owner in any
 * case as GitHub takes it): actions/NAME in NAME/, the cloud logins of the README's recipes in
 * OWNER/NAME/.
 */
export const STAND_INS = [
  'actions/checkout',
  'actions/upload-artifact',
  'actions/download-artifact',
  'actions/setup-go',
  'actions/setup-node',
  'actions/cache',
  'aws-actions/configure-aws-credentials',
  'google-github-actions/auth',
  'google-github-actions/setup-gcloud',
  'azure/login',
  'azure/use-kubelogin',
  'azure/aks-set-context',
] as const;

/** The directory of an action's stand-in under `standIns`, if it has one. */
export function standInDir(repo: string, standIns: string): string | undefined {
  const name = repo.toLowerCase();
  if (!(STAND_INS as readonly string[]).includes(name)) return undefined;
  return `${standIns}/${name.startsWith('actions/') ? name.slice('actions/'.length) : name}`;
}

export interface Mapping {
  /** The workflow text to run: only the action reference changed. */
  yaml: string;
  /** `--local-repository` values, `owner/name@ref=dir`. */
  localRepositories: string[];
}

/**
 * Maps a workflow to what runs here: `<owner>/kustomize-reconcile@REF` becomes the local copy of the
 * action (`actionDir`), each third-party action its stand-in (`standIns/NAME`). A `uses:` that is
 * neither, nor a local path, is an error naming it: the run would need github.com.
 */
export function mapWorkflow(yaml: string, actionDir: string, standIns: string): Mapping {
  const text = yaml.replaceAll('<owner>/kustomize-reconcile@', `${ACTION_OWNER}/kustomize-reconcile@`);
  const local = new Set<string>();
  for (const uses of usesOf(text)) {
    if (uses.startsWith('./') || uses.startsWith('docker://')) continue;
    const m = /^([^/@\s]+\/[^/@\s]+)(?:\/[^@\s]*)?@(\S+)$/.exec(uses);
    if (!m) throw new Error(`uses: ${uses}: not an owner/name@ref reference`);
    const [, repo = '', ref = ''] = m;
    if (repo === `${ACTION_OWNER}/kustomize-reconcile`) local.add(`${repo}@${ref}=${actionDir}`);
    else if (standInDir(repo, standIns)) local.add(`${repo}@${ref}=${standInDir(repo, standIns)!}`);
    else throw new Error(`uses: ${uses}: no stand-in under test/act/actions, and github.com is out of reach`);
  }
  return { yaml: text, localRepositories: [...local].sort() };
}

/** Every `uses:` of a workflow's steps. */
export function usesOf(yaml: string): string[] {
  const doc = parse(yaml) as { jobs?: Record<string, { steps?: { uses?: unknown }[]; uses?: unknown }> };
  const out: string[] = [];
  for (const job of Object.values(doc.jobs ?? {})) {
    if (typeof job.uses === 'string') out.push(job.uses);
    for (const s of job.steps ?? []) if (typeof s.uses === 'string') out.push(s.uses);
  }
  return out;
}

/** The job ids of a workflow, in order. */
export function jobIdsOf(yaml: string): string[] {
  const doc = parse(yaml) as { jobs?: Record<string, unknown> };
  return Object.keys(doc.jobs ?? {});
}

export type Outcome = 'success' | 'failure' | 'skipped' | 'cancelled';

export interface StepRun {
  /** act's step name (its `name:`, else the `uses:` or the command). */
  step: string;
  stage: string;
  result: string;
}

export interface JobRun {
  /** The job id (`jobs.<id>`). */
  id: string;
  /** The matrix values of this run of the job ({} without a matrix). */
  matrix: Record<string, unknown>;
  outcome: Outcome;
  steps: StepRun[];
  /** The raw output lines of the job's steps, in order. */
  output: string[];
}

interface LogLine {
  jobID?: string;
  job?: string;
  matrix?: Record<string, unknown>;
  msg?: string;
  jobResult?: string;
  stepResult?: string;
  step?: string;
  stage?: string;
  raw_output?: boolean;
}

/**
 * The jobs act ran, from its `--json` log: one entry per job and matrix combination, with its
 * outcome (act's for a job, its steps' for one job of a matrix), its steps' results and its output. A job act started but logged no
 * result for is `cancelled`; the workflow's jobs act never started are `skipped` (`jobIds`).
 */
export function readActLog(log: string, jobIds: string[]): JobRun[] {
  const runs = new Map<string, JobRun>();
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: LogLine;
    try {
      l = JSON.parse(line) as LogLine;
    } catch {
      continue;
    }
    if (!l.jobID) continue;
    const matrix = l.matrix ?? {};
    const key = `${l.jobID} ${JSON.stringify(matrix)}`;
    let run = runs.get(key);
    if (!run) {
      run = { id: l.jobID, matrix, outcome: 'cancelled', steps: [], output: [] };
      runs.set(key, run);
    }
    if (l.jobResult) run.outcome = l.jobResult === 'success' || l.jobResult === 'failure' ? l.jobResult : 'cancelled';
    else if (l.stepResult && l.step) run.steps.push({ step: l.step, stage: l.stage ?? '', result: l.stepResult });
    else if (l.raw_output && typeof l.msg === 'string') run.output.push(l.msg.replace(/\n$/, ''));
  }
  const out = [...runs.values()];
  // act logs the result of the whole matrix so far (what needs.<id>.result says) for each of its
  // jobs: one job's own outcome is its steps'.
  for (const r of out) {
    if (Object.keys(r.matrix).length === 0 || r.outcome === 'cancelled') continue;
    r.outcome = r.steps.some((s) => s.result === 'failure') ? 'failure' : 'success';
  }
  for (const id of jobIds) {
    if (!out.some((r) => r.id === id)) out.push({ id, matrix: {}, outcome: 'skipped', steps: [], output: [] });
  }
  return out.sort((a, b) => jobIds.indexOf(a.id) - jobIds.indexOf(b.id));
}

/** `plan ✓, reconcile ×6 ✓, report ✓`: each job id once, with its runs and their outcomes (`×4 (2 ✗, 2 ✓)`). */
export function jobSummary(runs: JobRun[]): string {
  const mark: Record<Outcome, string> = { success: '✓', failure: '✗', skipped: 'skipped', cancelled: 'cancelled' };
  const parts: string[] = [];
  const ids = [...new Set(runs.map((r) => r.id))];
  for (const id of ids) {
    const of = runs.filter((r) => r.id === id);
    const counts = new Map<Outcome, number>();
    for (const r of of) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
    const text =
      counts.size === 1 ? mark[of[0]!.outcome] : `(${[...counts].map(([o, n]) => `${n} ${mark[o]}`).join(', ')})`;
    parts.push(of.length > 1 ? `${id} ×${of.length} ${text}` : `${id} ${text}`);
  }
  return parts.join(', ');
}

export type Permission = 'pull_requests' | 'checks' | 'contents' | 'issues';
export type Access = 'read' | 'write';

/**
 * What a run's GITHUB_TOKEN may do, as GitHub derives it from the workflow's `permissions:` (the
 * top level, and any job's, together: act passes one token to every job). `read-all` / `write-all`
 * grant every scope; a scope not named is `none`. Without any `permissions:`, GitHub's restricted
 * default: contents read.
 */
export function permissionsOf(yaml: string): Partial<Record<Permission, Access>> {
  const doc = parse(yaml) as { permissions?: unknown; jobs?: Record<string, { permissions?: unknown }> };
  const blocks = [doc.permissions, ...Object.values(doc.jobs ?? {}).map((j) => j.permissions)].filter(
    (b) => b !== undefined,
  );
  if (blocks.length === 0) return { contents: 'read' };
  const scopes: Permission[] = ['pull_requests', 'checks', 'contents', 'issues'];
  const out: Partial<Record<Permission, Access>> = {};
  const grant = (p: Permission, a: unknown) => {
    if (a === 'write' || (a === 'read' && out[p] !== 'write')) out[p] = a;
  };
  for (const b of blocks) {
    if (b === 'read-all' || b === 'write-all') for (const p of scopes) grant(p, b.slice(0, -4));
    else if (b && typeof b === 'object')
      for (const [k, v] of Object.entries(b)) {
        const p = k.replace('-', '_') as Permission;
        if (scopes.includes(p)) grant(p, v);
      }
  }
  return out;
}

/**
 * Whether a workflow's jobs may ask GitHub for an OIDC token (`permissions: id-token: write` at the
 * top level or in a job, or `write-all`): GitHub then gives the job ACTIONS_ID_TOKEN_REQUEST_URL and
 * ACTIONS_ID_TOKEN_REQUEST_TOKEN, which the cloud login actions need.
 */
export function grantsIdToken(yaml: string): boolean {
  const doc = parse(yaml) as { permissions?: unknown; jobs?: Record<string, { permissions?: unknown }> };
  return [doc.permissions, ...Object.values(doc.jobs ?? {}).map((j) => j.permissions)].some(
    (b) =>
      b === 'write-all' ||
      (typeof b === 'object' && b !== null && (b as Record<string, unknown>)['id-token'] === 'write'),
  );
}

/** Workflow commands that change the job: a tree's text must never issue one. */
const STATEFUL = [
  'add-path',
  'set-env',
  'stop-commands',
  'add-mask',
  'set-output',
  'save-state',
  'echo',
  'add-matcher',
];
const ANNOTATIONS = ['error', 'warning', 'notice', 'debug', 'group'];

/**
 * The workflow commands act ran whose text came from a tree, found by `marker` (which only the
 * tree's hostile text holds): any job-changing command that carries it (an output or a state only by
 * its name), and any annotation or group that starts with it (the action's own annotations may quote
 * it after their own words).
 */
export function injectedCommands(log: string, marker: string): string[] {
  const out: string[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{') || !line.includes(marker)) continue;
    let l: { command?: string; arg?: string; raw?: string; name?: string };
    try {
      l = JSON.parse(line) as typeof l;
    } catch {
      continue;
    }
    const c = l.command;
    if (c === undefined) continue;
    // An output or a state the action sets may hold the tree's text as its value (the report, as
    // JSON); one the tree names is the tree's.
    const text =
      c === 'set-output' || c === 'save-state' ? (l.name ?? '') : `${l.name ?? ''} ${l.arg ?? ''} ${l.raw ?? ''}`;
    if (STATEFUL.includes(c) && text.includes(marker)) out.push(`${c}: ${(l.arg ?? '').slice(0, 120)}`);
    else if (ANNOTATIONS.includes(c) && (l.arg ?? '').trimStart().startsWith(marker))
      out.push(`${c}: ${(l.arg ?? '').slice(0, 120)}`);
  }
  return out;
}
