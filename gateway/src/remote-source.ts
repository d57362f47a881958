import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { SERVICE_UNAVAILABLE } from '../../subgraphs/kernel/graphql-errors.js';
import { CALLER_HEADER, CLIENT_ADDRESS_HEADER, INTERNAL_SECRET_HEADER, type RequestContext } from '../../subgraphs/kernel/index.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * What the gateway answers for fields of a subgraph it cannot reach: `SERVICE_UNAVAILABLE` with status 503, the
 * code a database outage has (`kernel/graphql-errors.ts`), so the REST surfaces answer it as their 503.
 */
export function subgraphUnavailable(name: string): GraphQLError {
  return new GraphQLError(`The ${name} service is temporarily unavailable; retry later.`, { extensions: { code: SERVICE_UNAVAILABLE, status: 503 } });
}

/** Options of one remote subgraph. */
export interface RemoteSourceOptions {
  /** The subgraph's name, shown in the unavailable error. */
  name: string;
  url: string;
  /** The shared `INTERNAL_SECRET`. */
  secret: string;
  /** Limit on one call (connect to end of body), so a frozen subgraph fails instead of holding requests. */
  timeoutMs: number;
  log: Logger;
}

/**
 * Calls a subgraph over HTTP, passing the caller (user and Platform API key) and proving with the shared secret that it is the gateway.
 * A subgraph that refuses the connection, resets it, does not answer within `timeoutMs` or answers 5xx gives `SERVICE_UNAVAILABLE`.
 */
export class InternalRemoteSource extends RemoteGraphQLDataSource<RequestContext> {
  private readonly options: RemoteSourceOptions;

  constructor(options: RemoteSourceOptions) {
    super({ url: options.url });
    this.options = options;
    const fetcher = this.fetcher;
    // make-fetch-happen (minipass-fetch) reads `timeout` per request; Apollo sets none by default.
    this.fetcher = (url, init) => fetcher(url, { ...init, timeout: options.timeoutMs } as typeof init);
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): void {
    request.http?.headers.set(INTERNAL_SECRET_HEADER, this.options.secret);
    request.http?.headers.set(REQUEST_ID_HEADER, context.requestId ?? '');
    if (context.clientAddress) request.http?.headers.set(CLIENT_ADDRESS_HEADER, context.clientAddress);
    if (context.caller || context.apiKey) {
      const caller = {
        ...(context.caller ? { userId: context.caller.userId, sessionId: context.caller.sessionId } : {}),
        ...(context.apiKey ? { apiKey: context.apiKey } : {}),
      };
      request.http?.headers.set(CALLER_HEADER, JSON.stringify(caller));
    }
  }

  override didEncounterError(error: Error, _request: unknown, response?: { status: number }, context?: RequestContext): void {
    // FetchError: refused, reset, DNS, timeouts (network level, with or without a response started).
    if (!response || response.status >= 500 || error.name === 'FetchError') {
      this.options.log.warn({ subgraph: this.options.name, err: error, status: response?.status, requestId: context?.requestId }, 'subgraph unavailable');
      throw subgraphUnavailable(this.options.name);
    }
    throw error;
  }
}
