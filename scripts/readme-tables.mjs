// Generates the README's inputs and outputs tables from action.yml, the one place they are
// described (the Marketplace shows the same descriptions).
//
//   node scripts/readme-tables.mjs          exit 1 and name the stale region when README.md differs
//   node scripts/readme-tables.mjs --write  rewrite the regions in README.md (npm run readme)
//
// The regions sit between <!-- inputs:start --> / <!-- inputs:end --> and <!-- outputs:start --> /
// <!-- outputs:end -->. Tables go through prettier with the repository's configuration, so that
// `prettier --write README.md` leaves them exactly as generated.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';

const README = fileURLToPath(new globalThis.URL('../README.md', import.meta.url));
const ACTION = fileURLToPath(new globalThis.URL('../action.yml', import.meta.url));

/** The names of the generated regions, in README order. */
export const REGIONS = ['inputs', 'outputs'];

/**
 * Renders the inputs table (`input | default | description`) and the outputs table
 * (`output | description`) from action.yml's text, formatted as prettier formats README.md.
 * @param {string} actionYmlText
 * @returns {Promise<{ inputs: string, outputs: string }>}
 */
export async function renderTables(actionYmlText) {
  const action = parse(actionYmlText);
  const inputs = entries(action?.inputs, 'inputs').map(([name, spec]) => [
    code(name),
    spec.default === undefined || spec.default === null || String(spec.default) === '' ? '' : code(spec.default),
    text(spec.description),
  ]);
  const outputs = entries(action?.outputs, 'outputs').map(([name, spec]) => [code(name), text(spec.description)]);
  const options = { ...(await resolveConfig(README)), parser: 'markdown' };
  return {
    inputs: await table(['input', 'default', 'description'], inputs, options),
    outputs: await table(['output', 'description'], outputs, options),
  };
}

/**
 * The text between a region's markers, without the blank lines that frame it; undefined when
 * the markers are missing.
 * @param {string} readme
 * @param {string} name
 * @returns {string | undefined}
 */
export function extractRegion(readme, name) {
  const m = markers(name).exec(readme);
  return m ? m[2].trim() : undefined;
}

/**
 * README with a region's content replaced. Throws when the markers are missing.
 * @param {string} readme
 * @param {string} name
 * @param {string} content
 * @returns {string}
 */
export function replaceRegion(readme, name, content) {
  const re = markers(name);
  if (!re.test(readme)) throw new Error(`README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> region`);
  return readme.replace(re, (_all, start, _old, end) => `${start}\n\n${content.trim()}\n\n${end}`);
}

function markers(name) {
  return new RegExp(`(<!-- ${name}:start -->)([\\s\\S]*?)(<!-- ${name}:end -->)`);
}

function entries(map, what) {
  if (map === undefined || map === null) return [];
  if (typeof map !== 'object' || Array.isArray(map)) throw new Error(`action.yml: ${what} is not a mapping`);
  return Object.entries(map).map(([name, spec]) => [name, spec ?? {}]);
}

/** A cell's text: one line, with the pipes that would end the cell escaped. */
function text(value) {
  return String(value ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\|/g, '\\|');
}

/** A code span that holds any text, backticks included (CommonMark's rule: a longer fence). */
function code(value) {
  const s = text(value);
  const runs = s.match(/`+/g) ?? [];
  const fence = '`'.repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s}${pad}${fence}`;
}

async function table(header, rows, options) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  const md = [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
  return (await format(`${md}\n`, options)).trim();
}

async function main(argv) {
  const write = argv.includes('--write');
  const unknown = argv.filter((a) => a !== '--write');
  if (unknown.length > 0) {
    console.error(`usage: node scripts/readme-tables.mjs [--write] (unknown: ${unknown.join(' ')})`);
    return 2;
  }
  const tables = await renderTables(await readFile(ACTION, 'utf8'));
  const readme = await readFile(README, 'utf8');
  let next = readme;
  const stale = [];
  for (const name of REGIONS) {
    const current = extractRegion(readme, name);
    if (current === undefined) {
      console.error(`README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> region`);
      return 1;
    }
    if (current !== tables[name]) stale.push(name);
    next = replaceRegion(next, name, tables[name]);
  }
  if (write) {
    if (next !== readme) await writeFile(README, next);
    console.log(stale.length > 0 ? `README.md: regenerated ${stale.join(', ')}` : 'README.md: tables up to date');
    return 0;
  }
  if (stale.length > 0) {
    for (const name of stale) console.error(`README.md: the ${name} table is stale (action.yml changed)`);
    console.error('run npm run readme');
    return 1;
  }
  console.log('README.md: tables up to date');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
