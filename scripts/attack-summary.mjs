// Prints the hostile-PR suite's one line, `attack: N attacks, M succeeded`, from the result files
// its cases write (reports/attack/<case>.json; positive controls are not attacks and not counted).
// A case that did not finish counts as succeeded. Exits 1 when an attack succeeded, a control
// failed or no attack ran.
//   node scripts/attack-summary.mjs          the line, from the files of the last run
//   node scripts/attack-summary.mjs --run    runs `vitest run --project attack` first
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let status = 0;
if (process.argv.includes('--run')) {
  const vitest = join(root, 'node_modules', '.bin', 'vitest');
  const r = spawnSync(vitest, ['run', '--project', 'attack'], { cwd: root, stdio: 'inherit' });
  status = r.status ?? 1;
}
const dir = join(root, 'reports', 'attack');
let files = [];
try {
  files = readdirSync(dir).filter((f) => f.endsWith('.json'));
} catch {
  // no run wrote results
}
const results = files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
const attacks = results.filter((r) => r.control !== true);
const succeeded = attacks.filter((r) => r.succeeded !== false);
const failedControls = results.filter((r) => r.control === true && r.succeeded !== false);
if (attacks.length === 0 || succeeded.length > 0 || failedControls.length > 0) status = status || 1;
console.log(`attack: ${attacks.length} attacks, ${succeeded.length} succeeded`);
process.exit(status);
