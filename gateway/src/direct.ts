import type { Experimental_DidResolveQueryPlanCallback } from '@apollo/gateway';
import type { GatewayExecutor, GatewayGraphQLRequestContext, GatewayInterface } from '@apollo/server-gateway-interface';
import { getVariableValues, visit, BREAK, Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { findBadText, type RequestContext } from '../../subgraphs/kernel/index.js';
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
   * run again through the gateway; `fixed`: of the first two, the requests of known texts (REST facade, `/graphql`)
   * answered without Apollo Server's request pipeline.
   */
  readonly stats: { direct: number; local: number; fallback: number; fixed: number };
  /**
   * Known texts skip Apollo Server's request pipeline once the gateway has planned them as a local route (the route
   * is learnt when Apollo Server runs a named text again, with the same parsed document): the REST facade's fixed
   * documents (`fixed`: a bounded set of texts in the code; see `createGraph`'s runner), and the last
   * `CLIENT_TEXTS` texts of up to `CLIENT_TEXT_CHARS` characters web clients sent to `/graphql` (`seen`; see
   * `graphqlFastPath` in the REST facade).
   */
  fixed(text: string): void;
  seen(text: string): void;
  /**
   * `{ data }`, or `{ context }` for Apollo Server to run the request with: the caller's own, or when the fast run
   * fell through (an error to report), a copy marked so that Apollo Server's run goes to the gateway at once.
   */
  runFixed(
    text: string,
    context: RequestContext,
    variables: Record<string, unknown>,
    operationName?: string | null,
  ): Promise<{ data: Record<string, unknown> } | { context: RequestContext }>;
}

/** How many `/graphql` texts keep a learnt route (the oldest is forgotten first), and the longest text kept. */
export const CLIENT_TEXTS = 200;
export const CLIENT_TEXT_CHARS = 8_192;

/** Marks a context whose fast run fell through (a symbol key: Apollo Server's shallow copy keeps it). */
const GATEWAY_ONLY = Symbol('gatewayOnly');

/** A shallow copy of a context, as Apollo Server makes one for every operation it runs. */
const copyOf = (ctx: RequestContext, extra: object): RequestContext => Object.assign(Object.create(Object.getPrototypeOf(ctx)), ctx, extra);

/** Where a document's operation runs: a subgraph's schema, a local plan, or null for the gateway. */
type Route = { source: LocalSubgraphSource } | { plan: LocalPlan } | null;

/** A fixed document's known route, with what Apollo Server had checked before execution. */
interface FixedRoute {
  route: NonNullable<Route>;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  operationName: string | undefined;
  schema: GraphQLSchema;
}

export function directPath(localSources: ReadonlyMap<string, LocalSubgraphSource>): DirectPath {
  // Per parsed document, per operation name: the route. Apollo Server keeps parsed documents in its document store,
  // so this holds at most what that store holds.
  const routes = new WeakMap<DocumentNode, Map<string, Route>>();
  const stats = { direct: 0, local: 0, fallback: 0, fixed: 0 };
  // Known texts, with their route once the gateway has planned them (null until then, or for good when the gateway
  // runs them): the REST facade's fixed texts (a set bounded by the code), and the last CLIENT_TEXTS of /graphql.
  const fixedRoutes = new Map<string, FixedRoute | null>();
  const clientRoutes = new Map<string, FixedRoute | null>();
  const tableOf = (text: string) => (fixedRoutes.has(text) ? fixedRoutes : clientRoutes.has(text) ? clientRoutes : undefined);

  /** Runs a route: the data, or undefined when the gateway must answer. */
  const run = (route: NonNullable<Route>, document: DocumentNode, operationName: string | undefined, context: RequestContext, variables: Record<string, unknown>) =>
    'plan' in route ? route.plan(context, variables) : route.source.executeFast(document, operationName, variables, context);
  const count = (route: NonNullable<Route>) => {
    if ('plan' in route) stats.local += 1;
    else stats.direct += 1;
  };

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

  /**
   * Records the route of a known text once its operation is planned (`didResolveQueryPlan` ran on an earlier run of
   * the same parsed document): only a document of one operation, so that the text alone names the route.
   */
  const learnFixed = (requestContext: GatewayGraphQLRequestContext) => {
    const { source, document, operation, schema } = requestContext;
    const table = tableOf(source);
    if (!table || table.get(source) !== null || document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return;
    const operationName = requestContext.operationName ?? undefined;
    const route = routes.get(document)?.get(operationName ?? '');
    if (route && operation.operation === 'query') table.set(source, { route, document, operation, operationName, schema });
  };

  const fixed = (text: string) => {
    if (!fixedRoutes.has(text)) fixedRoutes.set(text, null);
  };

  const seen = (text: string) => {
    if (text.length > CLIENT_TEXT_CHARS || clientRoutes.has(text) || fixedRoutes.has(text)) return;
    if (clientRoutes.size >= CLIENT_TEXTS) clientRoutes.delete(clientRoutes.keys().next().value!);
    clientRoutes.set(text, null);
  };

  const runFixed = async (text: string, ctx: RequestContext, variables: Record<string, unknown>, operationName?: string | null) => {
    const known = fixedRoutes.get(text) ?? clientRoutes.get(text);
    // An operation name other than the document's one operation: Apollo Server answers (with its error).
    if (!known || (operationName != null && operationName !== known.operationName)) return { context: ctx };
    // What Apollo Server checks per request before execution: the input rule on variables (literals were checked
    // when the text was first run), and the variables against the API schema, as the gateway does.
    if (findBadText(variables)) return { context: ctx };
    const definitions = known.operation.variableDefinitions;
    if (definitions?.length && getVariableValues(known.schema, definitions, variables).errors) return { context: ctx };
    // Apollo Server runs every operation on a shallow copy of the context, with its operation type recorded.
    const data = await run(known.route, known.document, known.operationName, copyOf(ctx, { operation: 'query' }), variables);
    if (!data) return { context: copyOf(ctx, { [GATEWAY_ONLY]: true }) };
    count(known.route);
    stats.fixed += 1;
    return { data };
  };

  const wrap = (gateway: GatewayInterface): GatewayInterface => ({
    onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
    stop: () => gateway.stop(),
    async load(options) {
      const loaded = await gateway.load(options);
      const viaGateway = loaded.executor;
      if (!viaGateway) return loaded;
      const executor: GatewayExecutor = async (requestContext: GatewayGraphQLRequestContext) => {
        learnFixed(requestContext);
        const route = routes.get(requestContext.document)?.get(requestContext.operationName ?? '');
        if (!route || requestContext.operation.operation !== 'query') return viaGateway(requestContext);
        if ((requestContext.context as { [GATEWAY_ONLY]?: true })[GATEWAY_ONLY]) {
          stats.fallback += 1;
          return viaGateway(requestContext);
        }
        // The gateway checks the variables against the API schema first (an input type there can have fewer fields
        // than in one subgraph): a request it would refuse goes to it.
        const definitions = requestContext.operation.variableDefinitions;
        if (definitions?.length && getVariableValues(requestContext.schema, definitions, requestContext.request.variables ?? {}).errors) {
          return viaGateway(requestContext);
        }
        const data = await run(
          route,
          requestContext.document,
          requestContext.operationName ?? undefined,
          requestContext.context as RequestContext,
          requestContext.request.variables ?? {},
        );
        if (!data) {
          stats.fallback += 1;
          return viaGateway(requestContext);
        }
        count(route);
        return { data };
      };
      return { ...loaded, executor };
    },
  });

  return { didResolveQueryPlan, wrap, stats, fixed, seen, runFixed };
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
