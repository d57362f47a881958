import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { DomainError, errorExtensions } from './errors.js';

/**
 * Maps an error raised while executing a subgraph: domain errors keep their code, status and details in
 * `extensions`; anything unexpected is logged with the request id and becomes a generic internal error.
 */
export function toSubgraphError(error: GraphQLError, log: Logger, requestId: string): GraphQLError {
  const original = error.originalError;
  if (original instanceof DomainError) {
    return new GraphQLError(original.message, { path: error.path, extensions: errorExtensions(original) });
  }
  if (!original || original instanceof GraphQLError) return error; // validation and coercion errors: safe to show
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
