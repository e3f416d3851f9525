import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { extractRegion, renderTables } from '../../scripts/readme-tables.mjs';
import { OPTIONS } from '../../src/options/table.js';
import { REPO } from '../helpers/paths.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

interface ActionYml {
  inputs: Record<string, { description?: string; default?: string }>;
  outputs: Record<string, { description?: string }>;
}

/** The first cell of each body row of a markdown table, without its backticks. */
function firstColumn(table: string): string[] {
  return table
    .split('\n')
    .slice(2)
    .map((row) => (row.split(/(?<!\\)\|/)[1] ?? '').trim().replace(/^`(.*)`$/, '$1'));
}

describe('README inputs and outputs tables', () => {
  let actionText: string;
  let action: ActionYml;
  let readme: string;
  let tables: { inputs: string; outputs: string };

  beforeAll(async () => {
    actionText = await readFile(join(REPO, 'action.yml'), 'utf8');
    action = parse(actionText) as ActionYml;
    readme = await readFile(join(REPO, 'README.md'), 'utf8');
    tables = await renderTables(actionText);
  });

  it.each(['inputs', 'outputs'] as const)('the %s region is what action.yml generates', (name) => {
    const region = extractRegion(readme, name);
    expect(region, `README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> region`).toBeDefined();
    expect(region, `README.md's ${name} table is stale: run npm run readme`).toBe(tables[name]);
  });

  it('lists every input of action.yml, in order, and nothing else', () => {
    expect(firstColumn(tables.inputs)).toEqual(Object.keys(action.inputs));
    expect(firstColumn(extractRegion(readme, 'inputs') ?? ''), 'run npm run readme').toEqual(
      Object.keys(action.inputs),
    );
  });

  it('lists every output of action.yml, in order, and nothing else', () => {
    expect(firstColumn(tables.outputs)).toEqual(Object.keys(action.outputs));
    expect(firstColumn(extractRegion(readme, 'outputs') ?? ''), 'run npm run readme').toEqual(
      Object.keys(action.outputs),
    );
  });

  it('renders defaults as code, empty ones as empty, and escapes pipes', async () => {
    const { inputs, outputs } = await renderTables(
      [
        'inputs:',
        '  token:',
        "    description: 'a | b'",
        '    default: ${{ github.token }}',
        '  plain:',
        '    description: none',
        'outputs:',
        '  out:',
        "    description: 'x | y'",
      ].join('\n'),
    );
    const rows = inputs.split('\n').slice(2);
    expect(rows[0]).toMatch(/^\| `token` +\| `\$\{\{ github\.token \}\}` +\| a \\\| b +\|$/);
    expect(rows[1]).toMatch(/^\| `plain` +\| +\| none +\|$/);
    expect(outputs.split('\n')[2]).toMatch(/^\| `out` +\| x \\\| y +\|$/);
  });

  it('the inputs table is the same from the option table, and the flags region is what it generates', async () => {
    const fromTable = await renderTables(actionText, OPTIONS);
    expect(fromTable.inputs).toBe(tables.inputs);
    expect(extractRegion(readme, 'flags'), "README.md's flags table is stale: run npm run readme").toBe(
      fromTable.flags,
    );
  });
});
