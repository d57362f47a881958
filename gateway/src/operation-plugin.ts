import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError } from 'graphql';

/** `extensions.reason` of a request whose document has no operation to run for its `operationName`. */
type UnresolvedOperationReason = 'unknown_operation' | 'operation_name_required';

/**
 * The refusal of an operation Apollo Server could not resolve, in graphql-js's own words: `operationName` names no
 * operation of the document, or the document holds several operations and the request names none.
 */
function unresolvedOperation(operationName: string | null | undefined): GraphQLError {
  const [message, reason]: [string, UnresolvedOperationReason] =
    operationName == null
      ? ['Must provide operation name if query contains multiple operations.', 'operation_name_required']
      : [`Unknown operation named "${operationName}".`, 'unknown_operation'];
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', reason, status: 400, http: { status: 400 } } });
}

/**
 * A document whose operation Apollo Server could not resolve (`getOperationAST` with the request's `operationName`
 * found none) is refused before execution with HTTP 400 and `extensions: { code: "BAD_USER_INPUT", reason:
 * "unknown_operation" | "operation_name_required" }`, over POST and GET alike. Without it, the request reaches the
 * gateway, whose executor throws `INVALID_GRAPHQL` instead of returning the error, and Apollo Server answers a
 * thrown executor error with 500.
 */
export function operationResolutionPlugin<T extends BaseContext>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, request }) {
          if (!operation) throw unresolvedOperation(request.operationName);
        },
      };
    },
  };
}
