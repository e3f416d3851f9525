/**
 * The report with every known secret value replaced by `***`. Log masking (core.setSecret) covers
 * only the runner's log; the report also goes into the PR comment, the check run, the job summary
 * and the `report` output, where a secret-vars or substituteFrom value substituted into a ConfigMap,
 * or a decrypted value in a diff, would otherwise show. Pure.
 */
import { MIN_SECRET_LENGTH, scrubList, scrubWith, secretForms } from '../objects/secret.js';
import { kubeconfigDocumentCredentials } from '../cluster/kubeconfig-secrets.js';
import type { Report } from './model.js';

/**
 * A line of a multi-line secret that can hold a secret on its own: not shorter than
 * MIN_SECRET_LENGTH, not a comment, a PEM or armour boundary (`-----BEGIN …-----`), a bare YAML
 * key whose value follows on the lines below (`data:`, `- name:`, `key: |`) or punctuation.
 */
function mayHoldSecret(line: string): boolean {
  const t = line.trim();
  return (
    t.length >= MIN_SECRET_LENGTH &&
    !t.startsWith('#') &&
    !/^-----(BEGIN|END)\b[^-]*-----$/.test(t) &&
    !/^(-\s+)?(["']?)[\w.-]+\2\s*:\s*([|>][-+0-9]*|[[{])?$/.test(t) &&
    /[A-Za-z0-9]/.test(t)
  );
}

/** secretForms of a value that secretForms would not split: a multi-line text stays whole. */
function wholeForms(value: string): string[] {
  if (!value.includes('\n')) return secretForms(value);
  return [
    value,
    JSON.stringify(value).slice(1, -1),
    value.replaceAll("'", "''"),
    Buffer.from(value).toString('base64'),
  ];
}

/**
 * The forms of one secret value, to scrub from text and to mask: secretForms' (the value, newline-
 * stripped, JSON-escaped, YAML single-quoted, base64) for a one-line value. A multi-line value is
 * taken whole in those forms, and line by line only where a line can hold a secret (see
 * mayHoldSecret): a comment or `-----BEGIN PGP PRIVATE KEY BLOCK-----` registered with the runner
 * would be hidden in every later step of the job. A kubeconfig document is never taken line by line
 * (its `key: value` lines are structure; `kind: Config` would turn every `kind: ConfigMap` into
 * `***Map`): whole, and by its credentials. Nothing of a value shorter than MIN_SECRET_LENGTH, and
 * no form shorter.
 */
export function valueForms(value: string): string[] {
  // Nor the base64 of such a value (`MQ==` for `1`): it would hide only text that is not the secret.
  if (value.trim().length < MIN_SECRET_LENGTH) return [];
  const forms = value.includes('\n')
    ? [
        ...wholeForms(value),
        ...wholeForms(value.trim()),
        ...secretForms(value.replaceAll('\n', '')),
        ...(kubeconfigDocumentCredentials(value) ?? value.split('\n').filter(mayHoldSecret)).flatMap(secretForms),
      ]
    : secretForms(value);
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** Every form of every value (see valueForms), as scrubWith takes them. */
function formsOf(secrets: Iterable<string>): string[] {
  return scrubList([...secrets].flatMap(valueForms));
}

export function scrubReport(report: Report, secrets: Iterable<string>): Report {
  const forms = formsOf(secrets);
  if (forms.length === 0) return report;
  // Inside the JSON text every form appears JSON-escaped (raw, a quote in a value could match JSON's own).
  const escaped = scrubList(forms.map((f) => JSON.stringify(f).slice(1, -1)));
  return JSON.parse(scrubWith(JSON.stringify(report), escaped)) as Report;
}

/** A line of text (a log line, an error message) with every form of every known secret replaced by `***`. */
export function scrubText(text: string, secrets: Iterable<string>): string {
  return scrubWith(text, formsOf(secrets));
}

/**
 * The secrets of a run as they become known, for scrubbing many lines: each value's forms are worked
 * out once (scrubText works them out on every call).
 */
export class Scrubber {
  private readonly values = new Set<string>();
  private sorted: string[] | undefined;

  /**
   * Adds a value; returns its forms (valueForms) where new, to be masked in the runner's log too.
   * A value shorter than MIN_SECRET_LENGTH is neither: the runner would hide every such string (a
   * digit, a word) in every later step of the job.
   */
  add(value: string): string[] {
    const fresh = valueForms(value).filter((f) => !this.values.has(f));
    for (const f of fresh) this.values.add(f);
    if (fresh.length > 0) this.sorted = undefined;
    return fresh;
  }

  /** The known values and their forms. */
  get known(): ReadonlySet<string> {
    return this.values;
  }

  text(line: string): string {
    this.sorted ??= scrubList(this.values);
    return scrubWith(line, this.sorted);
  }
}
