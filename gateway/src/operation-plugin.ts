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

/** `extensions` of the refusal of a subscription sent over HTTP (as formatted: Apollo drops `http`). */
const SUBSCRIPTION_OVER_HTTP = {
  message: 'Subscriptions are served over WebSocket at /graphql (graphql-ws protocol, subprotocol graphql-transport-ws), not over HTTP.',
  extensions: { code: 'BAD_REQUEST', reason: 'subscription_over_http', status: 400 },
} as const;

/**
 * A `subscription` document sent over HTTP (POST or GET `/graphql`) is refused with HTTP 400 and `extensions: {
 * code: "BAD_REQUEST", reason: "subscription_over_http", status: 400 }`, its message naming the WebSocket endpoint.
 * Without it, a POST reaches the gateway, whose supergraph has no subscription root (subscriptions are the
 * WebSocket server's, `subscriptions.ts`), and the thrown executor error is answered 500; a GET is answered 405 by
 * Apollo Server before any plugin sees the operation, so that answer is replaced on its way out.
 */
export function httpSubscriptionPlugin<T extends BaseContext>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation }) {
          if (operation?.operation === 'subscription') {
            throw new GraphQLError(SUBSCRIPTION_OVER_HTTP.message, { extensions: { ...SUBSCRIPTION_OVER_HTTP.extensions, http: { status: 400 } } });
          }
        },
        async willSendResponse({ operation, response }) {
          if (operation?.operation !== 'subscription' || response.body.kind !== 'single' || response.http.status !== 405) return;
          // Apollo Server's own refusal of a GET for a non-query operation (405, `Allow: POST`).
          response.http.status = 400;
          response.http.headers.delete('allow');
          response.body.singleResult = { errors: [{ message: SUBSCRIPTION_OVER_HTTP.message, extensions: { ...SUBSCRIPTION_OVER_HTTP.extensions } }] };
        },
      };
    },
  };
}
