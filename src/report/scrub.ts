/**
 * The report with every known secret value replaced by `***`. Log masking (core.setSecret) covers
 * only the runner's log; the report also goes into the PR comment, the check run, the job summary
 * and the `report` output, where a secret-vars or substituteFrom value substituted into a ConfigMap,
 * or a decrypted value in a diff, would otherwise show. Pure.
 */
import type { Report } from './model.js';

/** Values shorter than this are not scrubbed: they would replace ordinary words (as setSecret's floor). */
const MIN_LENGTH = 4;

export function scrubReport(report: Report, secrets: Iterable<string>): Report {
  // Longest first, so that a secret containing another is replaced whole.
  const values = [...new Set(secrets)].filter((s) => s.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
  if (values.length === 0) return report;
  let text = JSON.stringify(report);
  for (const v of values) {
    // As the value appears inside a JSON string, and also base64-encoded (Secret data).
    for (const form of [JSON.stringify(v).slice(1, -1), Buffer.from(v).toString('base64')]) {
      if (form.length >= MIN_LENGTH) text = text.split(form).join('***');
    }
  }
  return JSON.parse(text) as Report;
}
