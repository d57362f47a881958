import type { ExecutionResult } from '../../gateway/src/graph.js';
import { SERVICE_UNAVAILABLE } from '../../subgraphs/kernel/graphql-errors.js';
import { DomainError, isDatabaseUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS, type ErrorKind } from '../../subgraphs/kernel/index.js';

/** An error on its way to an HTTP envelope: status, machine code, human message, optional details and headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Response headers the status promises (`Retry-After` on 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The REST statuses of domain error kinds (each envelope then words the code its own way). */
const STATUS_OF: Record<ErrorKind, number> = { unauthenticated: 401, forbidden: 403, not_found: 404, invalid: 400, conflict: 409, rate_limited: 429, unavailable: 503 };

/** `Retry-After` for a 429 whose details say when to retry (`rateLimited`), else no header. */
const retryAfterOf = (details: unknown): Record<string, string> => {
  const seconds = (details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  return typeof seconds === 'number' ? { 'Retry-After': String(Math.max(1, Math.ceil(seconds))) } : {};
};

/** 503 `service_unavailable` with `Retry-After`: the database is unreachable; the request may be retried. */
export const serviceUnavailable = (): HttpError =>
  new HttpError(503, 'service_unavailable', 'The service is temporarily unavailable; retry later.', undefined, {
    'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
  });

/**
 * Normalises anything thrown in a handler: domain errors keep their code; body-parser errors become 400/413/415;
 * a database that is down or dropped the connection becomes 503 `service_unavailable`.
 */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return new HttpError(STATUS_OF[error.kind], error.code, error.message, error.details, retryAfterOf(error.details));
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
  const e = error as { type?: string; status?: number; statusCode?: number };
  if (e?.type === 'entity.parse.failed') return new HttpError(400, 'malformed_json', 'The request body is not valid JSON.');
  if (e?.type === 'entity.too.large') return new HttpError(413, 'payload_too_large', 'The request body is too large.');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new HttpError(415, 'unsupported_media_type', 'Unsupported body encoding.');
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return new HttpError(status, 'bad_request', 'Bad request.');
  return new HttpError(500, 'internal_error', 'Internal server error.');
}

/** The data of a gateway result (typed by the document that ran), or the first error as an `HttpError`. */
export function unwrap<T>(result: ExecutionResult<T>): T {
  const first = result.errors?.[0];
  if (first) {
    const ext = first.extensions ?? {};
    if (typeof ext.status === 'number' && typeof ext.reason === 'string' && ext.status < 500) {
      throw new HttpError(ext.status, ext.reason, first.message, ext.details, retryAfterOf(ext.details));
    }
    if (ext.reason === 'invalid_value' && typeof ext.field === 'string') throw inputError(ext.field, String(ext.problem));
    if (ext.code === 'BAD_USER_INPUT' || ext.code === 'GRAPHQL_VALIDATION_FAILED') {
      throw new HttpError(400, 'invalid_input', 'The request has a value of the wrong type.');
    }
    if (ext.code === SERVICE_UNAVAILABLE) throw serviceUnavailable();
    throw new HttpError(500, 'internal_error', 'Internal server error.');
  }
  return present(result.data);
}

/**
 * A value the route needs where the schema allows null (a document's nullable root field, an absent order): a null
 * there is an unexpected state, answered as any other, 500 `internal_error`.
 */
export function present<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new HttpError(500, 'internal_error', 'Internal server error.');
  return value;
}

/**
 * A variable the REST runner refused before execution (see `variableChecker` in gateway/src/graph.ts), in the words of
 * the REST body: `input.category` becomes the field `category`, camelCase becomes snake_case.
 */
function inputError(variablePath: string, problem: string): HttpError {
  const field = variablePath.replace(/^input\./, '').replace(/([A-Z])/g, (c) => `_${c.toLowerCase()}`);
  const message = problem.replace(/Field "(\w+)"/g, '$1').slice(0, 200);
  return new HttpError(400, 'invalid_input', `${field}: ${message}`, [{ field, message }]);
}
