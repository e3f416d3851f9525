/**
 * An error about one object. `subject` names it (`Kind/namespace/name`), `file` the file it came
 * from when known, `detail` what is wrong with it; the message is made of them
 * (`subject (file): detail`), so that a report can point at the file (a check-run annotation) and
 * place it in the text without reading the message back.
 */
export class ObjectError extends Error {
  readonly file?: string;

  constructor(
    readonly subject: string,
    readonly detail: string,
    options?: { cause?: unknown; file?: string },
  ) {
    const file = options?.file;
    super(`${subject}${file === undefined ? '' : ` (${file})`}: ${detail}`, { cause: options?.cause });
    this.name = 'ObjectError';
    if (file !== undefined) this.file = file;
  }

  /** The same error placed in `file` (its cause is this one). */
  at(file: string): ObjectError {
    return new ObjectError(this.subject, this.detail, { cause: this, file });
  }
}

/** The subject an error names, when it is about one object. */
export function subjectOfError(err: unknown): string | undefined {
  const s = (err as { subject?: unknown } | null)?.subject;
  return typeof s === 'string' ? s : undefined;
}
