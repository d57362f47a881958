import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { CALLER_HEADER, INTERNAL_SECRET_HEADER, type RequestContext } from '../../subgraphs/kernel/index.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Calls a subgraph over HTTP, passing the caller (user and Platform API key) and proving with the shared secret that it is the gateway. */
export class InternalRemoteSource extends RemoteGraphQLDataSource<RequestContext> {
  constructor(url: string, private readonly secret: string) {
    super({ url });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): void {
    request.http?.headers.set(INTERNAL_SECRET_HEADER, this.secret);
    request.http?.headers.set(REQUEST_ID_HEADER, context.requestId ?? '');
    if (context.caller || context.apiKey) {
      const caller = { ...(context.caller ? { userId: context.caller.userId } : {}), ...(context.apiKey ? { apiKey: context.apiKey } : {}) };
      request.http?.headers.set(CALLER_HEADER, JSON.stringify(caller));
    }
  }
}
