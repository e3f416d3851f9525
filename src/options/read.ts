/**
 * The action's settings reader, generated from the option table: each input is read by its name,
 * masked in the form the table declares before anything else can echo it, and converted by its
 * kind; normalize() validates the lot. Pure: the input reader and the masking are injected (the
 * action's edge, src/action/inputs.ts, passes @actions/core's).
 */
import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { splitPatterns } from '../flux/load.js';
import { normalize, NOT_YET_SUPPORTED, type InputReader, type RawSettings, type Settings } from '../settings.js';
import { maskLines } from '../sops/keys.js';
import { parseVarsInput } from '../substitute/variables.js';
import { kubeconfigSource } from './kubeconfig.js';
import { runInfo } from './run-info.js';
import { INPUTS } from './table.js';
import type { Option, SecretForm } from './types.js';

/**
 * Masks a credential-bearing value the moment it is read, in the form its option declares: whole
 * (trimmed); whole and line by line (a key file or kubeconfig, so a line echoed alone stays hidden);
 * or, for a map of secret variables, each value whole and line by line.
 */
export function maskSecret(form: SecretForm, value: string | Record<string, string>, mask: (v: string) => void): void {
  if (typeof value !== 'string') {
    for (const v of Object.values(value)) {
      if (v.length >= 3) mask(v);
      maskLines(v, mask);
    }
  } else if (form === 'whole') {
    if (value.trim() !== '') mask(value.trim());
  } else {
    maskLines(value, mask);
  }
}

/** An input's text as normalize() takes it: a list split, a map parsed, the kubeconfig located. */
function fromInput(option: Option, name: string, text: string, root: string): unknown {
  if (option.field === 'kubeconfig') return kubeconfigSource(text, root);
  if (option.kind === 'list') return splitPatterns(text);
  if (option.kind === 'map') return parseVarsInput(text, name);
  return text;
}

/** Reads the action's inputs and `GITHUB_WORKSPACE`; every credential is masked (`setSecret`) as it is read. */
export function readSettings(input: InputReader, env: NodeJS.ProcessEnv, setSecret: (v: string) => void): Settings {
  for (const [name, neutral] of Object.entries(NOT_YET_SUPPORTED)) {
    const v = input(name).trim();
    if (v !== '' && v !== neutral) {
      throw new Error(
        `input "${name}" is not supported by this version yet (got "${v}"); remove it or set it to "${neutral}"`,
      );
    }
  }
  const root = env['GITHUB_WORKSPACE'] || process.cwd();
  const masked: string[] = [];
  const mask = (value: string) => {
    masked.push(value);
    setSecret(value);
  };
  // Credential-bearing inputs first, so that no error about another input can come before their masks.
  const ordered = [...INPUTS.filter((o) => o.secret), ...INPUTS.filter((o) => !o.secret)];
  const raw: Record<string, unknown> = { root, env, run: runInfo(env, { root }), masked };
  for (const option of ordered) {
    if (!option.input || !option.field) continue;
    const text = input(option.input);
    if (option.secret && option.secret !== 'values') maskSecret(option.secret, text, mask);
    const value = fromInput(option, option.input, text, root);
    if (option.secret === 'values') maskSecret(option.secret, value as Record<string, string>, mask);
    // A kubeconfig given base64-encoded is masked decoded too.
    const located = option.field === 'kubeconfig' ? (value as KubeconfigSource) : undefined;
    if (located?.kind === 'content') maskSecret('lines', located.content, mask);
    raw[option.field] = value;
  }
  // The table types each field (Option.field is a key of RawSettings); fromInput gives each its kind's value.
  return normalize(raw as unknown as RawSettings);
}
