import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestContext } from '../../subgraphs/kernel/index.js';
import { countGraphqlErrors, countOperation, subgraphFetchDuration } from '../../subgraphs/kernel/metrics.js';

/**
 * Apollo Server plugin: every answer of the gateway's pipeline counts its operation (name and type) in
 * `svc_graphql_operations_total` and its errors by `extensions.code` in `svc_graphql_errors_total`. The fast path of
 * known texts (`rest-facade/src/graphql-fast.ts`) counts its own; query cost is observed where it is charged.
 */
export const graphqlMetricsPlugin: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ operationName, operation, response }) {
        if (operation) countOperation(operationName, operation.operation);
        if (response.body.kind === 'single') countGraphqlErrors(response.body.singleResult.errors);
      },
    };
  },
};

/**
 * Times every fetch the gateway's query plans make from `source` (in process or over HTTP) in
 * `svc_graphql_subgraph_fetch_duration_seconds`. The direct fast paths (`direct.ts`, `local-plan.ts`) run fetch
 * documents without a query plan: `LocalSubgraphSource` times those itself.
 */
export function timedFetches<T extends { process(options: never): Promise<unknown> }>(source: T, subgraph: string): T {
  const process = source.process.bind(source) as (options: never) => Promise<unknown>;
  (source as { process: unknown }).process = async (options: never) => {
    const end = subgraphFetchDuration.startTimer({ subgraph });
    try {
      return await process(options);
    } finally {
      end();
    }
  };
  return source;
}
