/**
 * A mistake in what the run was given: an input or flag, a file of the repository, a Kustomization,
 * a kustomization.yaml. Its message is the whole story (what is wrong, where: the file, object or
 * field, and what to do), so the edges print it as it is; the report marks such a failure
 * (`failure.userError`), because running again will not help until the input changes.
 */
export class UserError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UserError';
  }
}

/** Whether `err`, or an error it wraps (its `cause` chain), is a UserError. */
export function isUserError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof UserError) return true;
  }
  return false;
}
