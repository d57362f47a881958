import type { GraphQLFormattedError } from 'graphql';
import type { GraphqlConfig } from '../../subgraphs/kernel/config.js';
import { keepLimitCode } from './limits.js';

/** graphql-js ends a message with its suggestions: `... Did you mean "name"?` (Apollo strips the same way). */
const SUGGESTION = / ?Did you mean(.+?)\?$/;

/**
 * What the gateway does to an error before `formatPublicError`: a refusal by the limits keeps `QUERY_TOO_COMPLEX`,
 * and without schema details (production) no message suggests field names. Apollo's
 * `hideSchemaDetailsFromClientErrors` covers validation only; variable coercion (`Field "nam" is not defined by
 * type "CreateCommunityInput". Did you mean "name"?`) happens later and is covered here.
 */
export function clientErrorFormatter(config: GraphqlConfig) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const out = keepLimitCode(formatted, error);
    return config.introspection ? out : { ...out, message: out.message.replace(SUGGESTION, '') };
  };
}
