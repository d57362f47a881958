import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { DomainError, isDatabaseUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS, type ErrorKind } from './errors.js';

/** `extensions.code` of an error raised because the database is unreachable (HTTP 503, retry later). */
export const SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE';

/** The HTTP status GraphQL errors carry in `extensions.status` (and the REST facade reads back), per kind. */
const STATUS_OF: Record<ErrorKind, number> = { unauthenticated: 401, forbidden: 403, not_found: 404, invalid: 400, conflict: 409, rate_limited: 429, unavailable: 503 };

/** `extensions.code` per kind: the web app's conventional codes; the domain's own code is `extensions.reason`. */
const CODE_OF: Record<ErrorKind, string> = {
  unauthenticated: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  invalid: 'BAD_USER_INPUT',
  conflict: 'CONFLICT',
  rate_limited: 'RATE_LIMITED',
  unavailable: SERVICE_UNAVAILABLE,
};

/**
 * GraphQL `extensions` of a domain error: `code` (`BAD_USER_INPUT`, `UNAUTHENTICATED`, `FORBIDDEN`, `NOT_FOUND`,
 * `CONFLICT`, `RATE_LIMITED`), `reason` (the domain's code: `invalid_cursor`, `email_taken`, `not_found`...), `status` and, for
 * validation failures, `details`.
 */
export function errorExtensions(error: DomainError): Record<string, unknown> {
  return {
    code: CODE_OF[error.kind],
    reason: error.code,
    status: STATUS_OF[error.kind],
    ...(error.details === undefined ? {} : { details: error.details }),
  };
}

/**
 * Maps an error raised while executing a subgraph: domain errors keep their code, status and details in
 * `extensions`; anything unexpected is logged with the request id and becomes a generic internal error.
 */
export function toSubgraphError(error: GraphQLError, log: Logger, requestId: string): GraphQLError {
  const original = error.originalError;
  if (original instanceof DomainError) {
    return new GraphQLError(original.message, { path: error.path, extensions: errorExtensions(original) });
  }
  // No path: it was raised before execution, by a variable that does not coerce (a custom scalar such as DateTime
  // refusing `false`; the gateway passes such values on unchecked). The client's mistake, with a safe message.
  if (!error.path) {
    return new GraphQLError(error.message, { extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_value', status: 400 } });
  }
  if (!original || original instanceof GraphQLError) return error; // validation and coercion errors: safe to show
  if (isDatabaseUnavailable(original)) {
    log.warn({ err: original, requestId, path: error.path }, 'database unavailable');
    return new GraphQLError('The service is temporarily unavailable; retry later.', {
      path: error.path,
      extensions: { code: SERVICE_UNAVAILABLE, status: 503 },
    });
  }
  log.error({ err: original, requestId, path: error.path }, 'unexpected error in resolver');
  return new GraphQLError('Internal server error.', {
    path: error.path,
    extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 },
  });
}

/** The public shape of an error: what the gateway passes to clients, without internals. */
export function formatPublicError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const { serviceName: _s, exception: _e, stacktrace: _t, ...extensions } = (formatted.extensions ?? {}) as Record<string, unknown>;
  const code = extensions.code;
  if (code === 'INTERNAL_SERVER_ERROR' || code === 'DOWNSTREAM_SERVICE_ERROR' || code === undefined) {
    return { message: 'Internal server error.', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR', status: 500 } };
  }
  return { ...formatted, extensions };
}

/**
 * Apollo Server plugin: a response carrying a `SERVICE_UNAVAILABLE` error (the database is down) is answered with
 * HTTP 503 and `Retry-After` instead of 200, so clients and load balancers see it as retryable.
 */
export const serviceUnavailableStatus: ApolloServerPlugin<any> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        if (!response.body.singleResult.errors?.some((e) => e.extensions?.code === SERVICE_UNAVAILABLE)) return;
        response.http.status = 503;
        response.http.headers.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      },
    };
  },
};
