import { truncate } from '../util/truncate.js';

/** An error answer from the Kubernetes API, with the parts a caller decides on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details?: {
      name?: string;
      kind?: string;
      causes?: { field?: string; message?: string; reason?: string }[];
    },
    /** The request it answered (`PATCH …`), the start of `message`: a redaction rebuilds the rest from details. */
    readonly request?: string,
    /** What the server said, the rest of `message` after the request it answered. */
    readonly said?: string,
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
    // Generous: a validation message can list many fields, and callers read the wording.
    const message = truncate(parsed.message ?? `HTTP ${status}`, { chars: 10_000, lines: 100 });
    return new ApiError(status, parsed.reason ?? '', `${what}: ${message}`, parsed.details, what, message);
  }
  // Not a Status: a proxy's or load balancer's page, of which the start says enough.
  const text = truncate(body.trim(), { chars: 300, lines: 5 });
  const said = `HTTP ${status}${text ? `: ${text}` : ''}`;
  return new ApiError(status, '', `${what}: ${said}`, undefined, undefined, said);
}
