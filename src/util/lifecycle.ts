/**
 * What a run started must not outlive it. Every child process the run starts (kustomize and what it
 * starts, exec credential plugins, git, az) is tracked here while it runs, and every exit path ends
 * them: a normal exit, `process.exit`, an uncaught error, and SIGINT, SIGTERM or SIGHUP (a cancelled
 * job, a closed terminal). On a signal, the children are killed first (they may be reading a scratch
 * tree or holding a credential), then the cleanup hooks run once, together, within a short deadline
 * (releasing the run's locks), then the exit cleanups (scratch directories), and the signal is raised
 * again so that the process ends as it would have (exit status 128 + the signal's number). A second
 * signal while the hooks run ends the process at once.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The signals that end a run; each is handled once per process. */
export const ENDING_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** How long the cleanup hooks may take after a signal before the process ends regardless. */
export const CLEANUP_DEADLINE_MS = 5_000;

/** Live children by pid: `group` when the child leads its own process group (spawned detached). */
const children = new Map<number, { group: boolean }>();
/** Async work to do before a signal ends the process (a lock's release). */
const hooks = new Set<() => Promise<unknown>>();
/** Synchronous work to do whenever the process exits (scratch removal). */
const exitCleanups = new Set<() => void>();
let installed = false;
let ending: NodeJS.Signals | undefined;

/**
 * Tracks a started child until it is done (its 'close': it exited and its output is closed, so
 * nothing it started holds that open any more): killed (with its process group when `group`, else
 * with its descendants) if the process ends first. Returns the function that stops tracking it.
 */
export function trackChild(
  child: { pid?: number | undefined; once(event: 'close', fn: () => void): unknown },
  group: boolean,
): () => void {
  install();
  const pid = child.pid;
  if (pid === undefined) return () => undefined;
  children.set(pid, { group });
  const untrack = () => {
    if (children.get(pid)?.group === group) children.delete(pid);
  };
  child.once('close', untrack);
  return untrack;
}

/** The pids of the children tracked now (for tests and diagnostics). */
export function trackedChildren(): number[] {
  return [...children.keys()];
}

/**
 * Runs `hook` when a signal ends the process, before it ends (bounded by CLEANUP_DEADLINE_MS, all
 * hooks at once). Returns the function that removes it, to call once the work it would undo is done.
 */
export function onSignalCleanup(hook: () => Promise<unknown>): () => void {
  install();
  hooks.add(hook);
  return () => {
    hooks.delete(hook);
  };
}

/** Runs `fn` (synchronous, best effort) when the process exits, whichever way. Returns its remover. */
export function onExitCleanup(fn: () => void): () => void {
  install();
  exitCleanups.add(fn);
  return () => {
    exitCleanups.delete(fn);
  };
}

/** SIGKILLs every tracked child: a group leader with its group, any other with its descendants. */
export function killChildren(): void {
  for (const [pid, { group }] of children) {
    const pids = group ? [-pid] : [...descendants(pid), pid];
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
}

/** The descendants of `pid` (deepest last), read from /proc on Linux; elsewhere none are known. */
function descendants(pid: number): number[] {
  if (process.platform !== 'linux') return descendantsByPs(pid);
  const out: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const p = pending.pop()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let text = '';
      try {
        text = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8');
      } catch {
        // gone meanwhile
      }
      for (const c of text.split(/\s+/)) {
        if (c === '') continue;
        out.push(Number(c));
        pending.push(Number(c));
      }
    }
  }
  return out;
}

/** macOS and other Unixes: the descendants from `ps`; none on Windows or when ps fails. */
function descendantsByPs(pid: number): number[] {
  if (process.platform === 'win32') return [];
  try {
    const rows = execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8', timeout: 2_000 });
    const byParent = new Map<number, number[]>();
    for (const row of rows.trim().split('\n')) {
      const [p, pp] = row.trim().split(/\s+/).map(Number);
      if (p === undefined || pp === undefined) continue;
      byParent.set(pp, [...(byParent.get(pp) ?? []), p]);
    }
    const out: number[] = [];
    const pending = [pid];
    while (pending.length > 0) {
      for (const c of byParent.get(pending.pop()!) ?? []) {
        out.push(c);
        pending.push(c);
      }
    }
    return out;
  } catch {
    return [];
  }
}

function runExitCleanups(): void {
  killChildren();
  for (const fn of exitCleanups) {
    try {
      fn();
    } catch {
      // best effort: the process is ending
    }
  }
  exitCleanups.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  if (ending !== undefined) {
    // A second signal: end now.
    finish(signal);
    return;
  }
  ending = signal;
  killChildren();
  const all = [...hooks].map((hook) => hook().catch(() => undefined));
  hooks.clear();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CLEANUP_DEADLINE_MS);
  });
  void Promise.race([Promise.all(all), deadline]).then(() => {
    clearTimeout(timer);
    finish(signal);
  });
}

/** Ends the process by `signal`: exit cleanups, then the signal raised again with no handler left. */
function finish(signal: NodeJS.Signals): void {
  runExitCleanups();
  for (const s of ENDING_SIGNALS) process.removeListener(s, onSignal);
  // With nobody else listening the default action ends the process by that signal (128 + its number).
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** The exit and signal handlers, installed once, with the first child, hook or cleanup. */
function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runExitCleanups);
  for (const s of ENDING_SIGNALS) process.on(s, onSignal);
}
