// The engine in a process of its own, from the sources (bundled by startReconcileChild), so that a
// test can stall a run for real (SIGSTOP) the way a suspended runner or a long GC stalls it.
// argv[2]: the RawSettings as JSON. Prints every log line, then `REPORT <json>`; exits 1 when the run failed.
import { reconcile } from './engine.js';
import { normalize, type RawSettings } from '../../src/options/settings.js';

const raw = JSON.parse(process.argv[2] ?? '{}') as RawSettings;
const report = await reconcile(normalize(raw), {
  log: (line) => {
    process.stdout.write(`${line}\n`);
  },
  secret: () => {},
});
process.stdout.write(`REPORT ${JSON.stringify(report)}\n`);
process.exitCode = report.ok ? 0 : 1;
