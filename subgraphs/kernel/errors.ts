import { rateLimitRefusals } from './metrics.js';

/**
 * What kind of refusal a domain error is. Each surface maps kinds to its own statuses in its one error mapping
 * (GraphQL: `subgraphs/kernel/graphql-errors.ts`; REST: `rest-facade/src/errors.ts`).
 */
export type ErrorKind = 'unauthenticated' | 'forbidden' | 'not_found' | 'invalid' | 'conflict' | 'rate_limited' | 'unavailable';

/** Transport-neutral domain errors: a kind, a machine-readable code, a message, optional field details. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    /** Machine-readable code, e.g. `not_found`, `email_taken`. */
    readonly code: string,
    message: string,
    /** Field-level details for validation failures. */
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const unauthorized = (message = 'Authentication required.', code = 'unauthorized') => new DomainError('unauthenticated', code, message);
export const forbidden = (message = 'You are not allowed to do this.', code = 'forbidden') => new DomainError('forbidden', code, message);
export const notFound = (what = 'Resource') => new DomainError('not_found', 'not_found', `${what} not found.`);
export const invalid = (code: string, message: string, details?: unknown) => new DomainError('invalid', code, message, details);
export const conflict = (code: string, message: string) => new DomainError('conflict', code, message);
/**
 * A refusal of one input field, worded as the resource API words every validation error: the message
 * `<field>: <rule>` (`password: 10 to 256 characters`) and `details` `[{ field, message: <rule> }]`.
 */
export const invalidField = (code: string, field: string, rule: string, kind: 'invalid' | 'conflict' = 'invalid') =>
  new DomainError(kind, code, `${field}: ${rule}`, [{ field, message: rule }]);
/**
 * Too many attempts in a window: `details.retryAfterSeconds` says when the caller may try again. Counted in
 * `svc_rate_limit_refusals_total` under its code (a fixed string per limit).
 */
export const rateLimited = (code: string, message: string, retryAfterSeconds: number) => {
  rateLimitRefusals.inc({ limit: code });
  return new DomainError('rate_limited', code, message, { retryAfterSeconds });
};

/** Socket-level error codes that mean the database connection failed or was cut. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs of a server going away or refusing connections: 57P01-03 and class 08 (connection exception). */
const UNAVAILABLE_SQLSTATE = /^(57P0[123]|08...|53300)$/;
/** Messages node-postgres and pg-pool use for a dead or unreachable connection (they carry no code). */
const CONNECTION_MESSAGES = /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly|connect ECONNREFUSED/i;

/**
 * True when `error` (or any error it wraps, through `cause`, `originalError`, `thrownValue` or an AggregateError) says the
 * database is unreachable or dropped the connection, rather than refusing a statement: the caller may retry later.
 * Each surface maps it once to its 503 `service_unavailable`.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 8) return false;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; originalError?: unknown; errors?: unknown; thrownValue?: unknown };
  if (typeof e.code === 'string' && (CONNECTION_CODES.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  // graphql-js wraps a thrown non-Error (node-postgres can reject with a bare `{ code: 'ECONNRESET' }`) as `thrownValue`.
  return isDatabaseUnavailable(e.cause, depth + 1) || isDatabaseUnavailable(e.originalError, depth + 1) || isDatabaseUnavailable(e.thrownValue, depth + 1);
}

/** Seconds a client should wait before retrying after a 503 `service_unavailable` (the `Retry-After` header). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
