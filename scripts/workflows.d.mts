/** Types for scripts/workflows.mjs (plain ESM, run by node directly). */

/** A fenced YAML block of a Markdown text that is a workflow: the line its YAML starts on, its text and name. */
export interface WorkflowBlock {
  line: number;
  yaml: string;
  name: string;
}

/** The fenced YAML blocks of a Markdown text that are workflows (a mapping with `on` and `jobs`). */
export declare function workflowBlocks(text: string): WorkflowBlock[];
