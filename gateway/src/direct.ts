import type { Experimental_DidResolveQueryPlanCallback } from '@apollo/gateway';
import type { GatewayExecutor, GatewayGraphQLRequestContext, GatewayInterface } from '@apollo/server-gateway-interface';
import { getVariableValues, visit, BREAK, type DocumentNode } from 'graphql';
import { compileLocalPlan, type LocalPlan } from './local-plan.js';
import type { LocalSubgraphSource } from './local-source.js';

/**
 * The direct path: a query whose query plan is ONE fetch from ONE in-process subgraph (no entity step, no
 * `@requires`, no rewrites) runs on that subgraph's executable schema (compiled with graphql-jit once the document
 * comes back, see `LocalSubgraphSource.executeFast`), without the gateway's plan execution and its second pass over the result (`computeResponse`), which cost more
 * than the subgraph's own execution.
 *
 * The decision is the gateway's own: the first request of a document goes through the gateway, whose
 * `experimental_didResolveQueryPlan` hook records the plan it made; later requests of that document (Apollo Server
 * hands the same parsed `DocumentNode` for the same text) take the direct path when the plan was one local fetch.
 * Everything before execution is unchanged (Apollo Server's parsing, validation, limits, input rule and operation
 * type plugins); only the executor differs. Behaviour stays the gateway's:
 * - variables that do not coerce to the API schema's types go to the gateway, which refuses them;
 * - a result with any error is thrown away and the request is run again through the gateway, so every error,
 *   partial result and null propagation is exactly the gateway's (only queries take the direct path, so running one
 *   again writes nothing);
 * - mutations, subscriptions, introspection (`__schema`, `__type`) and plans of several steps always go through the
 *   gateway.
 *
 * A query whose plan has several fetches, all from in-process subgraphs (a page, then its authors from identity),
 * takes the local plan instead (`local-plan.ts`): the same fetches, without the gateway's plan execution and result
 * pass, under the same rules (any error, or a null to propagate, and the gateway answers).
 */
export interface DirectPath {
  /** Pass to `ApolloGateway`'s config: records the plans the gateway makes. */
  didResolveQueryPlan: Experimental_DidResolveQueryPlanCallback;
  /** Wraps the gateway for Apollo Server: the same gateway, with the direct path in front of its executor. */
  wrap(gateway: GatewayInterface): GatewayInterface;
  /**
   * Counters for tests and benchmarks: requests served directly on one subgraph's schema, by a local plan, and those
   * run again through the gateway.
   */
  readonly stats: { direct: number; local: number; fallback: number };
}

/** Where a document's operation runs: a subgraph's schema, a local plan, or null for the gateway. */
type Route = { source: LocalSubgraphSource } | { plan: LocalPlan } | null;

export function directPath(localSources: ReadonlyMap<string, LocalSubgraphSource>): DirectPath {
  // Per parsed document, per operation name: the route. Apollo Server keeps parsed documents in its document store,
  // so this holds at most what that store holds.
  const routes = new WeakMap<DocumentNode, Map<string, Route>>();
  const stats = { direct: 0, local: 0, fallback: 0 };

  const didResolveQueryPlan: Experimental_DidResolveQueryPlanCallback = ({ queryPlan, requestContext }) => {
    const { document, operation, operationName } = requestContext;
    let byName = routes.get(document);
    if (!byName) routes.set(document, (byName = new Map()));
    const node = queryPlan.node;
    if (operation.operation !== 'query' || hasIntrospection(document)) {
      byName.set(operationName ?? '', null);
      return;
    }
    const single =
      node?.kind === 'Fetch' &&
      !node.requires?.length &&
      !node.inputRewrites?.length &&
      !node.outputRewrites?.length &&
      !node.contextRewrites?.length &&
      !node.hasDefers
        ? localSources.get(node.serviceName)
        : undefined;
    if (single) {
      byName.set(operationName ?? '', { source: single });
      return;
    }
    const plan = compileLocalPlan(queryPlan, document, operation, requestContext.schema, localSources);
    byName.set(operationName ?? '', plan ? { plan } : null);
  };

  const wrap = (gateway: GatewayInterface): GatewayInterface => ({
    onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
    stop: () => gateway.stop(),
    async load(options) {
      const loaded = await gateway.load(options);
      const viaGateway = loaded.executor;
      if (!viaGateway) return loaded;
      const executor: GatewayExecutor = async (requestContext: GatewayGraphQLRequestContext) => {
        const route = routes.get(requestContext.document)?.get(requestContext.operationName ?? '');
        if (!route || requestContext.operation.operation !== 'query') return viaGateway(requestContext);
        // The gateway checks the variables against the API schema first (an input type there can have fewer fields
        // than in one subgraph): a request it would refuse goes to it.
        const definitions = requestContext.operation.variableDefinitions;
        if (definitions?.length && getVariableValues(requestContext.schema, definitions, requestContext.request.variables ?? {}).errors) {
          return viaGateway(requestContext);
        }
        if ('plan' in route) {
          const data = await route.plan(requestContext.context, requestContext.request.variables ?? {});
          if (!data) {
            stats.fallback += 1;
            return viaGateway(requestContext);
          }
          stats.local += 1;
          return { data };
        }
        const data = await route.source.executeFast(
          requestContext.document,
          requestContext.operationName ?? undefined,
          requestContext.request.variables ?? {},
          requestContext.context,
        );
        if (!data) {
          stats.fallback += 1;
          return viaGateway(requestContext);
        }
        stats.direct += 1;
        return { data };
      };
      return { ...loaded, executor };
    },
  });

  return { didResolveQueryPlan, wrap, stats };
}

/** Whether a document selects `__schema` or `__type` anywhere (the gateway answers introspection itself). */
function hasIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}
