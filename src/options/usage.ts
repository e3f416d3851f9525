/**
 * The CLI's usage text, generated from the option table and the command list: every flag with its
 * value placeholder, help and default, and the inputs that have no flag with the reason. Pure.
 */
import type { Mode } from './settings.js';
import { flagHelp, flagSpelling } from './spelling.js';
import { OPTIONS } from './table.js';
import type { Option } from './types.js';

export interface Command {
  name: string;
  /** The run's mode (build plans nothing: it renders; plan and report need no cluster). */
  mode: Mode | 'build' | 'plan' | 'report';
  help: string;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'build',
    mode: 'build',
    help:
      'build with kustomize and print the objects as YAML, in apply order, with the owner labels the apply sets ' +
      '(no cluster needed); as flux build, SOPS-encrypted Secret values are masked (**SOPS**), and so are ' +
      'fields written from substituteFrom Secrets (***), unless --show-secrets',
  },
  {
    name: 'diff',
    mode: 'preview',
    help:
      'plan against the cluster (server-side dry-run) and print what would change; ' +
      'exit 0 = no change, 1 = changes (objects prune would delete too), 2 = error',
  },
  {
    name: 'apply',
    mode: 'apply',
    help: 'server-side apply to the cluster and print the change set; exit 0 = ok, 2 = error',
  },
  {
    name: 'drift',
    mode: 'drift',
    help:
      'plan against the cluster and fail when it differs from Git (with --drift-correction, apply instead); ' +
      'exit 0 = no drift or corrected, 1 = drift found, 2 = error',
  },
  {
    name: 'plan',
    mode: 'plan',
    help:
      'read the Kustomization files (no cluster needed) and print the fan-out: one job per Kustomization (per cluster ' +
      'and Kustomization under clusters/NAME/), its dependsOn level, and with --base only those a change affects ' +
      '(their build reads a changed file) and their dependents; --output json prints the matrix',
  },
  {
    name: 'report',
    mode: 'report',
    help: 'merge the --report-file files of several runs (--reports) into one report and print it; exit as the runs: 2 when one failed',
  },
];

const WIDTH = 100;
/** Where a flag's help starts. */
const HELP_COLUMN = 25;

/** Words of `text` in lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return line === '' ? lines : [...lines, line];
}

/** `label` in a column of `indent`, then `text` wrapped from `column` on (below the label when it is too long). */
function entry(label: string, text: string, indent: number, column: number): string {
  const [first = '', ...rest] = wrap(text, WIDTH - column);
  const pad = ' '.repeat(column);
  const head = ' '.repeat(indent) + label;
  const lines = head.length < column ? [head.padEnd(column) + first] : [head, pad + first];
  return [...lines, ...rest.map((l) => pad + l)].join('\n');
}

export function usage(options: readonly Option[] = OPTIONS, commands: readonly Command[] = COMMANDS): string {
  const withFlag = options.filter((o) => o.flag);
  const without = options.filter((o) => o.input && !o.flag);
  return [
    'usage: kustomize-reconcile <command> [flags]',
    '',
    'commands:',
    ...commands.map((c) => entry(c.name, c.help, 2, 10)),
    '',
    'flags:',
    ...withFlag.map((o) => entry(flagSpelling(o), flagHelp(o), 2, HELP_COLUMN)),
    '',
    'action inputs without a flag:',
    ...without.map((o) => entry(o.input!, o.noFlag ?? '', 2, HELP_COLUMN)),
  ].join('\n');
}
