/**
 * Wall-time marks of one CLI run, for the benchmark's profile (bench/profile.ts): when KR_TIMINGS
 * names a file, the CLI marks its steps and times each phase (the Hooks.group of the run), and
 * writes the marks there as JSON when the process exits. Without it nothing is recorded.
 */
import { writeFileSync } from 'node:fs';

/** A moment of the run: `main`, `reconcile`, `Render>` (a phase starts), `Render<` (it ends), … */
export interface TimingMark {
  name: string;
  /** Milliseconds since the epoch, fractional. */
  at: number;
}

export interface Timings {
  readonly marks: TimingMark[];
  mark: (name: string) => void;
  /** Runs `fn` between the marks `title>` and `title<` (whether it returns or throws): a Hooks.group. */
  span: <T>(title: string, fn: () => Promise<T>) => Promise<T>;
}

/** Marks taken with `now` (ms since the epoch). */
export function timings(now: () => number): Timings {
  const marks: TimingMark[] = [];
  const mark = (name: string) => {
    marks.push({ name, at: now() });
  };
  return {
    marks,
    mark,
    span: async (title, fn) => {
      mark(`${title}>`);
      try {
        return await fn();
      } finally {
        mark(`${title}<`);
      }
    },
  };
}

/** What KR_TIMINGS's file holds. */
export interface TimingsFile {
  marks: TimingMark[];
  /**
   * One moment on two clocks: ms since the epoch, and the monotonic clock in µs that V8's CPU
   * profiles (`--cpu-prof`) stamp their samples with, so that samples can be set against the marks.
   */
  anchor: { epochMs: number; monotonicUs: number };
  /** The process's own CPU time at exit (all its threads; not its children), ms. */
  cpuMs: { user: number; system: number };
}

/** The epoch in ms on the monotonic clock performance.now() keeps. */
const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Timings written to the file `env.KR_TIMINGS` at exit, or undefined when it is not set. The file
 * holds phase titles and times only.
 */
export function timingsFromEnv(env: NodeJS.ProcessEnv): Timings | undefined {
  const file = env['KR_TIMINGS'];
  if (!file) return undefined;
  const t = timings(epochNow);
  process.once('exit', () => {
    t.mark('exit');
    const cpu = process.cpuUsage();
    const out: TimingsFile = {
      marks: t.marks,
      anchor: { epochMs: epochNow(), monotonicUs: Number(process.hrtime.bigint() / 1000n) },
      cpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 },
    };
    try {
      writeFileSync(file, JSON.stringify(out) + '\n');
    } catch (err) {
      // Timings are for the benchmark: never a reason for the run to fail.
      process.stderr.write(`KR_TIMINGS: ${(err as Error).message}\n`);
    }
  });
  return t;
}
