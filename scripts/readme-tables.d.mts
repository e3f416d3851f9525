/** Types for scripts/readme-tables.mjs (plain ESM, run by node directly). */

/** The names of the generated README regions, in README order. */
export declare const REGIONS: readonly ['inputs', 'outputs'];

/** The inputs and outputs tables rendered from action.yml's text, formatted as prettier formats README.md. */
export declare function renderTables(actionYmlText: string): Promise<{ inputs: string; outputs: string }>;

/** The text between a region's markers (trimmed), or undefined when the markers are missing. */
export declare function extractRegion(readme: string, name: string): string | undefined;

/** README with a region's content replaced; throws when the markers are missing. */
export declare function replaceRegion(readme: string, name: string, content: string): string;
