/**
 * A failure with the phase it happened in, and where it points when that is known. The report keeps
 * `{ stage, reason, message }`; the reason is the one kustomize-controller sets on Ready where the
 * same step fails, so that readyExpr and a Flux user read the same word.
 */
import { subjectOfError } from '../objects/errors.js';
import type { Failure, Stage } from '../report/model.js';
import { isUserError } from '../util/user-error.js';

export type { Failure, Stage };

export interface Location {
  /** `Kind/namespace/name` of the object at fault. */
  subject?: string;
  /** The source file, relative to the repository root. */
  file?: string;
  line?: number;
  /** The field at fault, as a path (`spec.postBuild.substitute`). */
  field?: string;
}

/** kustomize-controller's Ready reason for a failure in each phase. */
export const STAGE_REASONS: Record<Stage, string> = {
  resolve: 'ArtifactFailed',
  render: 'BuildFailed',
  plan: 'ReconciliationFailed',
  apply: 'ReconciliationFailed',
  health: 'HealthCheckFailed',
  prune: 'PruneFailed',
  record: 'ReconciliationFailed',
  dependency: 'DependencyNotReady',
  removed: 'PruneFailed',
};

export class StageError extends Error implements Location {
  readonly stage: Stage;
  readonly reason: string;
  readonly subject?: string;
  readonly file?: string;
  readonly line?: number;
  readonly field?: string;

  constructor(stage: Stage, message: string, where: Location & { reason?: string; cause?: unknown } = {}) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    this.name = 'StageError';
    this.stage = stage;
    this.reason = where.reason ?? STAGE_REASONS[stage];
    if (where.subject !== undefined) this.subject = where.subject;
    if (where.file !== undefined) this.file = where.file;
    if (where.line !== undefined) this.line = where.line;
    if (where.field !== undefined) this.field = where.field;
  }

  /** `err` as a StageError of `stage` (one already tagged keeps its own); the message is unchanged. */
  static of(stage: Stage, err: unknown, where: Location & { reason?: string } = {}): StageError {
    if (err instanceof StageError) return err;
    const message = err instanceof Error ? err.message : String(err);
    const subject = where.subject ?? subjectOfError(err);
    return new StageError(stage, message, { ...where, ...(subject ? { subject } : {}), cause: err });
  }

  get failure(): Failure {
    return failureOf(this.stage, this.message, this, this.reason);
  }
}

/** The error a StageError wraps (what threw it), or `err` itself. */
export function rootCause(err: unknown): unknown {
  return err instanceof StageError && err.cause !== undefined ? err.cause : err;
}

/**
 * A failure of `stage` with `message`: of the error `cause` (marked a user error when it is one), or
 * reported rather than thrown.
 */
export function failureOf(stage: Stage, message: string, cause?: unknown, reason = STAGE_REASONS[stage]): Failure {
  return { stage, reason, message, ...(isUserError(cause) ? { userError: true as const } : {}) };
}
