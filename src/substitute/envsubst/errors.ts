import { UserError } from '../../util/user-error.js';

/** A parse or strict-mode error of envsubst, with the texts of the Go library. */
export class EnvsubstError extends UserError {
  /** The unset variable, for strict-mode errors. */
  readonly variable?: string;

  constructor(message: string, variable?: string) {
    super(message);
    this.name = 'EnvsubstError';
    if (variable !== undefined) this.variable = variable;
  }
}
