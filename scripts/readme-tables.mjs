// Generates the README's inputs, outputs and CLI flags tables: the inputs and flags from the option
// table (src/options/table.ts, which a unit test holds equal to action.yml's inputs), the outputs
// from action.yml (the Marketplace shows the same descriptions).
//
//   node scripts/readme-tables.mjs          exit 1 and name the stale region when README.md differs
//   node scripts/readme-tables.mjs --write  rewrite the regions in README.md (npm run readme)
//
// The regions sit between <!-- NAME:start --> / <!-- NAME:end --> for NAME inputs, outputs and flags. Tables go through prettier with the repository's configuration, so that
// `prettier --write README.md` leaves them exactly as generated.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';
// Node runs these TypeScript files itself: they have no runtime imports.
import { flagHelp, flagSpelling } from '../src/options/spelling.ts';
import { OPTIONS } from '../src/options/table.ts';

const README = fileURLToPath(new globalThis.URL('../README.md', import.meta.url));
const ACTION = fileURLToPath(new globalThis.URL('../action.yml', import.meta.url));

/** The names of the generated regions, in README order. */
export const REGIONS = ['inputs', 'outputs', 'flags'];

/**
 * Renders the inputs table (`input | default | description`) and the outputs table
 * (`output | description`) from action.yml's text, formatted as prettier formats README.md. Given
 * the option table, the inputs come from it instead, and the CLI flags table
 * (`flag | input | description`) is rendered too.
 * @param {string} actionYmlText
 * @param {readonly import('../src/options/types.ts').Option[]} [options]
 * @returns {Promise<{ inputs: string, outputs: string, flags?: string }>}
 */
export async function renderTables(actionYmlText, options) {
  const action = parse(actionYmlText);
  const specs = options
    ? options.filter((o) => o.input).map((o) => [o.input, { default: o.default, description: o.description }])
    : entries(action?.inputs, 'inputs');
  const inputs = specs.map(([name, spec]) => [
    code(name),
    spec.default === undefined || spec.default === null || String(spec.default) === '' ? '' : code(spec.default),
    text(spec.description),
  ]);
  const outputs = entries(action?.outputs, 'outputs').map(([name, spec]) => [code(name), text(spec.description)]);
  const prettierOptions = { ...(await resolveConfig(README)), parser: 'markdown' };
  return {
    inputs: await table(['input', 'default', 'description'], inputs, prettierOptions),
    outputs: await table(['output', 'description'], outputs, prettierOptions),
    ...(options ? { flags: await table(['flag', 'input', 'description'], flagRows(options), prettierOptions) } : {}),
  };
}

/**
 * A row per flag (its spelling, the input it stands for, its help and default), then a row per
 * input without a flag (the reason).
 * @param {readonly import('../src/options/types.ts').Option[]} options
 */
function flagRows(options) {
  const rows = options
    .filter((o) => o.flag)
    .map((o) => [code(flagSpelling(o)), o.input ? code(o.input) : '', text(flagHelp(o))]);
  const none = options.filter((o) => o.input && !o.flag).map((o) => ['', code(o.input), text(`no flag: ${o.noFlag}`)]);
  return [...rows, ...none];
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
  const tables = await renderTables(await readFile(ACTION, 'utf8'), OPTIONS);
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
    for (const name of stale)
      console.error(`README.md: the ${name} table is stale (action.yml or src/options/table.ts changed)`);
    console.error('run npm run readme');
    return 1;
  }
  console.log('README.md: tables up to date');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
