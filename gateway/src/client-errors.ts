import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { GraphqlConfig } from '../../subgraphs/kernel/config.js';
import { keepLimitCode } from './limits.js';

/** graphql-js ends a message with its suggestions: `... Did you mean "name"?` (Apollo strips the same way). */
const SUGGESTION = / ?Did you mean(.+?)\?$/;

/**
 * Apollo Server refuses some requests with an HTTP 4xx status and no code: an automatic persisted query whose
 * `sha256Hash` does not match its `query` ("provided sha does not match query") or whose `version` is not 1
 * ("Unsupported persisted query version"). Apollo then fills in `INTERNAL_SERVER_ERROR`, which `formatPublicError`
 * would answer as an internal error; they are the client's: `BAD_REQUEST` with their status.
 */
function keepRequestErrorCode(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  if (!(error instanceof GraphQLError) || error.extensions.code !== undefined) return formatted;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  if (typeof status !== 'number' || status < 400 || status > 499) return formatted;
  return { ...formatted, extensions: { ...formatted.extensions, code: 'BAD_REQUEST', status } };
}

/**
 * What the gateway does to an error before `formatPublicError`: a refusal by the limits keeps `QUERY_TOO_COMPLEX`,
 * a request Apollo Server refused with a 4xx status and no code gets `BAD_REQUEST` (not an internal error), and
 * without schema details (production) no message suggests field names. Apollo's
 * `hideSchemaDetailsFromClientErrors` covers validation only; variable coercion (`Field "nam" is not defined by
 * type "CreateCommunityInput". Did you mean "name"?`) happens later and is covered here.
 */
export function clientErrorFormatter(config: GraphqlConfig) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const out = keepRequestErrorCode(keepLimitCode(formatted, error), error);
    return config.introspection ? out : { ...out, message: out.message.replace(SUGGESTION, '') };
  };
}
