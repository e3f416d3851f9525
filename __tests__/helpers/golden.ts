// Golden files under __tests__/golden/: a test's output compared with the reviewed copy, or, with
// UPDATE_GOLDEN=1, written as the new copy (review the diff before committing it).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const GOLDEN = fileURLToPath(new URL('../golden/', import.meta.url));
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

/** Compares `text` with __tests__/golden/<name> (a path below it); with UPDATE_GOLDEN=1 writes it instead. */
export function golden(name: string, text: string): void {
  const file = join(GOLDEN, name);
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  expect(text, `${name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(file, 'utf8'));
}
