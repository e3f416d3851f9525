/** An error answer from the Kubernetes API, with the parts a caller decides on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details?: { name?: string; kind?: string; causes?: { field?: string; message?: string }[] },
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}

/** Builds an ApiError from a response body, a metav1.Status when the server sent one. */
export function apiErrorFrom(status: number, body: string, what: string): ApiError {
  let parsed: { kind?: string; message?: string; reason?: string; details?: ApiError['details'] } | undefined;
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (parsed?.kind === 'Status') {
    return new ApiError(status, parsed.reason ?? '', `${what}: ${parsed.message ?? `HTTP ${status}`}`, parsed.details);
  }
  const text = body.trim().slice(0, 300);
  return new ApiError(status, '', `${what}: HTTP ${status}${text ? `: ${text}` : ''}`);
}
