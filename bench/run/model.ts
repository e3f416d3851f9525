// What bench/run.ts measures and how it is recorded: the scenarios every tool runs in order, a tool
// (a CLI run per scenario, or a controller triggered and watched), a row per measured run, and the
// result of one size: its rows, the action's start-up and the machine's load.
import type { ScenarioProfile } from '../profile.ts';
import type { ProcRun } from './measure.ts';
import type { Shape, Tree } from './tree.ts';

export const OURS = 'kustomize-reconcile';
export const PROFILED = 'kustomize-reconcile (profiled)';

export type Scenario =
  'first apply' | 'no-op re-run' | 'preview of a change' | 'one object changed' | '10% removed (prune)';
export const SCENARIOS: Scenario[] = [
  'first apply',
  'no-op re-run',
  'preview of a change',
  'one object changed',
  '10% removed (prune)',
];

export interface Row {
  objects: number;
  tool: string;
  scenario: string;
  command: string;
  exitCode: number;
  /** A preview that found changes exits 1 (ours, kubectl diff): that is success. */
  ok: boolean;
  wallMs: number;
  firstRequestMs: number | undefined;
  requests: number;
  requestsByKind: Record<string, number>;
  requestsByTarget: Record<string, number>;
  peakRssMiB: number | undefined;
  /** CPU time of the tool's process (a CLI) or of its controller during the run (Flux), ms. */
  toolCpuMs: number | undefined;
  /** CPU time the kube-apiserver and etcd processes used during the run, ms. */
  apiserverCpuMs: number | undefined;
  etcdCpuMs: number | undefined;
  note?: string;
  /** --runs: the round this row was measured in (1 to R); after medianRows, how many rows it stands for. */
  round?: number;
  runs?: number;
  /** Ours: how many times the run started `kustomize build` (0: every build ran in process). */
  kustomizeBuilds?: number;
}

export interface Tool {
  name: string;
  version: string;
  prefix: string;
  /** What it waits for before it reports success (bench/README.md says the same). */
  waits: string;
  /** Set-up before the first scenario (not measured). */
  prepare: (tree: Tree) => Promise<void>;
  /** Tear-down after its last scenario (a controller is stopped; not measured). */
  finish?: () => Promise<void>;
  /** Scenarios it has no equivalent for (Flux has no preview); their cells read "n/a". */
  skips?: Scenario[];
  /** A CLI: the command for a scenario: [program, args, env, exit codes that mean success]. */
  command?: (s: Scenario, tree: Tree) => [string, string[], NodeJS.ProcessEnv, number[]];
  /**
   * A controller: triggers the scenario, waits until it is done and returns the run as measured (wall
   * time from the trigger; it resets the proxy's counts at the trigger). Exit code 0 is success.
   */
  reconcile?: (s: Scenario, tree: Tree) => Promise<ProcRun>;
  /** Run the first apply a second time when the first fails (CRs before their CRD is served). */
  applyTwiceOnFirstApply?: boolean;
  /** A file the tool's kustomize wrapper adds a line to for each run of kustomize (ours: bench/run/ours.ts). */
  kustomizeLog?: string;
  /** Describes the outcome (change counts, last error line). */
  describe: (r: ProcRun) => string;
  /** Called with each scenario's run once it is measured (the profile is read). */
  after?: (s: Scenario, r: ProcRun) => Promise<void>;
}

export interface Startup {
  firstRequestMs: number | undefined;
  wallMs: number;
  exitCode: number;
  requests: number;
}

export interface SizeResult {
  /** The tree's shape (bench/run/tree.ts) and its object count. */
  shape: Shape;
  objects: number;
  /** Rounds of every scenario (--runs); the tables show each tool's medians. */
  runs: number;
  rows: Row[];
  startup: Startup;
  startupTiny: Startup;
  kubeApiserver: string;
  /** The tools run, in order (ours first), and what each waits for. */
  tools: { name: string; version: string; waits: string }[];
  /** os.loadavg() before and after this size: the machine is shared. */
  loadBefore: number[];
  loadAfter: number[];
  /** With --profile: the profiled runs' breakdowns. */
  profiles?: ScenarioProfile[];
}
