/** Types for scripts/readme-tables.mjs (plain ESM, run by node directly). */
import type { Option } from '../src/options/types.js';

/** The names of the generated README regions, in README order. */
export declare const REGIONS: readonly ['inputs', 'outputs', 'flags'];

/**
 * The inputs and outputs tables rendered from action.yml's text, formatted as prettier formats README.md;
 * given the option table, the inputs come from it and the CLI flags table is rendered too.
 */
export declare function renderTables(
  actionYmlText: string,
  options?: readonly Option[],
): Promise<{ inputs: string; outputs: string; flags?: string }>;

/** The text between a region's markers (trimmed), or undefined when the markers are missing. */
export declare function extractRegion(readme: string, name: string): string | undefined;

/** README with a region's content replaced; throws when the markers are missing. */
export declare function replaceRegion(readme: string, name: string, content: string): string;
