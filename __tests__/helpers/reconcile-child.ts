// The engine in a process of its own, from the sources (bundled by startReconcileChild), so that a
// test can stall a run for real (SIGSTOP) the way a suspended runner or a long GC stalls it.
// argv[2]: the OptionValues as JSON. Prints every log line, then `REPORT <json>`; exits 1 when the run failed.
import { reconcile } from './engine.js';
import { settingsOf, type OptionValues } from '../../src/options/settings.js';

const raw = JSON.parse(process.argv[2] ?? '{}') as OptionValues;
const report = await reconcile(settingsOf(raw), {
  log: (line) => {
    process.stdout.write(`${line}\n`);
  },
  secret: () => {},
});
process.stdout.write(`REPORT ${JSON.stringify(report)}\n`);
process.exitCode = report.ok ? 0 : 1;
