/**
 * An error about one object. `subject` names it (`Kind/namespace/name`), so that a report can
 * point at the file the object came from (a check-run annotation) without reading the message.
 */
export class ObjectError extends Error {
  constructor(
    readonly subject: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ObjectError';
  }
}

/** The subject an error names, when it is about one object. */
export function subjectOfError(err: unknown): string | undefined {
  const s = (err as { subject?: unknown } | null)?.subject;
  return typeof s === 'string' ? s : undefined;
}
