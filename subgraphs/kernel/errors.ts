/** Transport-neutral domain errors. Each surface maps them to its envelope in one place. */
export class DomainError extends Error {
  constructor(
    /** Machine-readable code, e.g. `not_found`, `email_taken`. */
    readonly code: string,
    /** HTTP status the REST surfaces use for it. */
    readonly status: number,
    message: string,
    /** Field-level details for validation failures. */
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const unauthorized = (message = 'Authentication required.') => new DomainError('unauthorized', 401, message);
export const forbidden = (message = 'You are not allowed to do this.') => new DomainError('forbidden', 403, message);
export const notFound = (what = 'Resource') => new DomainError('not_found', 404, `${what} not found.`);
export const invalid = (code: string, message: string, details?: unknown) => new DomainError(code, 400, message, details);
export const conflict = (code: string, message: string) => new DomainError(code, 409, message);

/** GraphQL `extensions` for a domain error; the gateway and the REST facade read `code`, `status` and `details`. */
export function errorExtensions(error: DomainError): Record<string, unknown> {
  return { code: error.code, status: error.status, ...(error.details === undefined ? {} : { details: error.details }) };
}
