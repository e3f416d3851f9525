/**
 * A report file that cannot be read or merged, in parts: the file's name and what is wrong with it,
 * its message built from the two (`name: problem`), so that a list of such problems names each file
 * once without reading messages back.
 */
export class ReportFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${problem}`, options);
    this.name = 'ReportFileError';
  }

  /** `err` as a problem of `file`: itself when it is one, else its message under the file's name. */
  static of(file: string, err: unknown): ReportFileError {
    if (err instanceof ReportFileError) return err;
    return new ReportFileError(file, err instanceof Error ? err.message : String(err), { cause: err });
  }
}
