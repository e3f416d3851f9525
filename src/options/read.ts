/**
 * The action's settings reader, generated from the option table: each input is read by its name,
 * masked in the form the table declares before anything else can echo it, and given to
 * settingsOf(), which parses and checks each by its declaration. Pure: the input reader and the masking are injected (the
 * action's edge, src/action/inputs.ts, passes @actions/core's).
 */
import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { splitPatterns } from '../flux/load.js';
import { MIN_SECRET_LENGTH } from '../objects/secret.js';
import { settingsOf, type InputReader, type OptionValues, type Settings } from './settings.js';
import { maskLines } from '../sops/keys.js';
import { parseVarsInput } from '../substitute/variables.js';
import { kubeconfigSource } from './kubeconfig.js';
import { kubeconfigMasks } from '../cluster/kubeconfig-secrets.js';
import { runInfo } from './run-info.js';
import { INPUTS } from './table.js';
import type { Option, SecretForm } from './types.js';

/**
 * Masks a credential-bearing value the moment it is read, in the form its option declares: whole
 * (trimmed); whole and line by line (a key file, so a key echoed alone stays hidden: comments and
 * armour lines are not masked); or, for a map (secret variables, a host's token), each value whole
 * and line by line, never a key. No value shorter than MIN_SECRET_LENGTH: the runner would hide
 * every such string of every later step of the job. (The kubeconfig input is masked by
 * kubeconfigMasks instead: see readSettings.)
 */
export function maskSecret(form: SecretForm, value: string | Record<string, string>, mask: (v: string) => void): void {
  if (typeof value !== 'string') {
    for (const v of Object.values(value)) {
      if (v.length >= MIN_SECRET_LENGTH) mask(v);
      maskLines(v, mask);
    }
  } else if (form === 'whole') {
    if (value.trim().length >= MIN_SECRET_LENGTH) mask(value.trim());
  } else {
    maskLines(value, mask);
  }
}

/**
 * The kubeconfig input's masks: for its content (as given, or decoded from base64) the document
 * whole and its credentials (kubeconfigMasks), never its structural lines; for a path, nothing
 * (the file's credentials are registered when it is loaded), unless the value looks like a token
 * given by mistake (no `/`, 20 characters or more), which an error may then quote as a path.
 */
function kubeconfigInputMasks(text: string, located: KubeconfigSource | undefined): string[] {
  if (located === undefined) return kubeconfigMasks(text);
  if (located.kind === 'content') return kubeconfigMasks(located.content, located.content === text ? undefined : text);
  const v = text.trim();
  return located.kind === 'path' && !v.includes('/') && v.length >= 20 ? [v] : [];
}

/** An input's text as settingsOf() takes it: a list split, a map parsed. */
function fromInput(option: Option, name: string, text: string): unknown {
  if (option.kind === 'list') return splitPatterns(text);
  if (option.kind === 'map') return parseVarsInput(text, name);
  return text;
}

/** Reads the action's inputs and `GITHUB_WORKSPACE`; every credential is masked (`setSecret`) as it is read. */
export function readSettings(input: InputReader, env: NodeJS.ProcessEnv, setSecret: (v: string) => void): Settings {
  const root = env['GITHUB_WORKSPACE'] || process.cwd();
  const masked: string[] = [];
  const mask = (value: string) => {
    if (value.length < MIN_SECRET_LENGTH || masked.includes(value)) return;
    masked.push(value);
    setSecret(value);
  };
  // Credential-bearing inputs first, so that no error about another input can come before their masks.
  const ordered = [...INPUTS.filter((o) => o.secret), ...INPUTS.filter((o) => !o.secret)];
  const raw: Record<string, unknown> = { root, env, run: runInfo(env, { root }), masked };
  for (const option of ordered) {
    if (!option.input || !option.field) continue;
    const text = input(option.input);
    if (option.field === 'kubeconfig') {
      let located: KubeconfigSource;
      try {
        located = kubeconfigSource(text, root);
      } catch (err) {
        // Refused (its message does not quote it): masked all the same, as a text that does not parse.
        kubeconfigInputMasks(text, undefined).forEach(mask);
        throw err;
      }
      kubeconfigInputMasks(text, located).forEach(mask);
      raw[option.field] = located;
      continue;
    }
    if (option.secret && option.secret !== 'values') maskSecret(option.secret, text, mask);
    const value = fromInput(option, option.input, text);
    if (option.secret === 'values') maskSecret(option.secret, value as Record<string, string>, mask);
    // A registry login is USER:PASSWORD: its password is masked alone too.
    if (option.field === 'registryCredentials') {
      for (const login of Object.values(value as Record<string, string>)) {
        const cut = login.trim().indexOf(':');
        if (cut > 0) mask(login.trim().slice(cut + 1));
      }
    }
    raw[option.field] = value;
  }
  // Every key is a field of the table (or the edge's root, env, run and masked).
  return settingsOf(raw as OptionValues);
}
