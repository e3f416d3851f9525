// The attack project's own set-up: each run starts from no result files, so
// scripts/attack-summary.mjs counts this run's cases only.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from '../helpers/paths.js';

export default async function setup(): Promise<void> {
  await rm(join(REPO, 'reports', 'attack'), { recursive: true, force: true });
}
