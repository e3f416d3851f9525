/**
 * The report with every known secret value replaced by `***`. Log masking (core.setSecret) covers
 * only the runner's log; the report also goes into the PR comment, the check run, the job summary
 * and the `report` output, where a secret-vars or substituteFrom value substituted into a ConfigMap,
 * or a decrypted value in a diff, would otherwise show. Pure.
 */
import { scrubList, scrubWith, secretForms } from '../objects/secret.js';
import type { Report } from './model.js';

/** Every form of every value (see secretForms), as scrubWith takes them. */
function formsOf(secrets: Iterable<string>): string[] {
  return scrubList([...secrets].flatMap(secretForms));
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
   * Adds a value; returns it and its forms where new (to be masked in the runner's log too: the value
   * itself even when it is too short to be scrubbed from text).
   */
  add(value: string): string[] {
    const fresh = [...new Set([value, ...secretForms(value)])].filter((f) => f !== '' && !this.values.has(f));
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
