/**
 * The run's budget for what sources write to the scratch space: the bytes and the number of files
 * every OCI layer extraction, Bucket download and ArtifactGenerator copy or Extract of one run may
 * write, all together. Each operation also has its own limits (tar.ts, bucket.ts); this one keeps a
 * tree that repeats a cheap operation (the same small tarball extracted many times) from filling
 * the disk. One is made per run (fetched.ts runSources) and handed to every fetcher. Pure.
 */

export const RUN_MAX_BYTES = 256 * 1024 * 1024;
export const RUN_MAX_FILES = 20_000;

/** `256 MiB`, or the bytes when not a whole number of MiB. */
function sizeText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes.toLocaleString('en-US')} bytes`;
}

export class ExtractBudget {
  private bytes = 0;
  private files = 0;

  constructor(
    readonly maxBytes: number = RUN_MAX_BYTES,
    readonly maxFiles: number = RUN_MAX_FILES,
  ) {}

  /** What has been taken so far. */
  get spent(): { bytes: number; files: number } {
    return { bytes: this.bytes, files: this.files };
  }

  /**
   * Throws, naming `what` (`Bucket ns/name, object 'key'`), when `bytes` more bytes and `files` more
   * files would pass the budget; takes nothing.
   */
  check(bytes: number, files: number, what: string): void {
    const over =
      this.bytes + bytes > this.maxBytes
        ? sizeText(this.maxBytes)
        : this.files + files > this.maxFiles
          ? `${this.maxFiles.toLocaleString('en-US')} files`
          : undefined;
    if (over === undefined) return;
    throw new Error(
      `the run's budget for extracted files is spent: ${sizeText(this.maxBytes)} in ${this.maxFiles.toLocaleString('en-US')} files at most across all sources (${what} would pass the ${over})`,
    );
  }

  /** Takes `bytes` and `files` from the budget; throws as {@link check} does, taking nothing then. */
  take(bytes: number, files: number, what: string): void {
    this.check(bytes, files, what);
    this.bytes += bytes;
    this.files += files;
  }
}
