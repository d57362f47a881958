import type { Experimental_DidResolveQueryPlanCallback } from '@apollo/gateway';
import type { GatewayExecutor, GatewayGraphQLRequestContext, GatewayInterface } from '@apollo/server-gateway-interface';
import { getVariableValues, visit, BREAK, Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { QueryPlan } from '@apollo/query-planner';
import { findBadText, type RequestContext } from '../../subgraphs/kernel/index.js';
import { inSpan, tracingOn } from '../../subgraphs/kernel/tracing.js';
import { BoundedCache, CACHE_LIMITS, documentBytes, textBytes } from './bounded-cache.js';
import { compileLocalPlan, type LocalPlan, type PlanSource } from './local-plan.js';
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
 * A query whose plan has several fetches (a page, then its authors from identity), or whose subgraphs are served
 * over HTTP (distributed mode), takes the local plan instead (`local-plan.ts`): the same fetches, without the
 * gateway's plan execution and result pass, under the same rules (any error, or a null to propagate, and the gateway
 * answers).
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
   * documents (`fixed`: a bounded set of texts in the code; see `createGraph`'s runner), and the texts of up to
   * `CLIENT_TEXT_CHARS` characters web clients sent to `/graphql` more than once, the most recently used within
   * `CACHE_LIMITS.clientRoutes` (`seen`; see `graphqlFastPath` in the REST facade).
   */
  fixed(text: string): void;
  seen(text: string): void;
  /**
   * The parsed operation `runFixed` would run for a known text (and `operationName`), with the schema Apollo Server
   * validated it against; undefined when Apollo Server would run the text instead.
   */
  operationOf(text: string, operationName?: string | null): { document: DocumentNode; operation: OperationDefinitionNode; schema: GraphQLSchema } | undefined;
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

/** The longest `/graphql` text that may keep a learnt route. */
export const CLIENT_TEXT_CHARS = 8_192;

/** Marks a context whose fast run fell through (a symbol key: Apollo Server's shallow copy keeps it). */
const GATEWAY_ONLY = Symbol('gatewayOnly');

/** A shallow copy of a context, as Apollo Server makes one for every operation it runs. */
const copyOf = (ctx: RequestContext, extra: object): RequestContext => Object.assign(Object.create(Object.getPrototypeOf(ctx)), ctx, extra);

/**
 * Where a document's operation runs: a subgraph's schema, a local plan, or null for the gateway. A local plan is
 * compiled when its document comes back (`{ planned }` until then): a document sent once is not compiled.
 */
type Route = { source: LocalSubgraphSource } | { plan: LocalPlan } | null;
type Learnt = Route | { planned: QueryPlan };

/** A fixed document's known route, with what Apollo Server had checked before execution. */
interface FixedRoute {
  route: NonNullable<Route>;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  operationName: string | undefined;
  schema: GraphQLSchema;
}

/**
 * `localSources`: the subgraphs in this process (one-fetch queries run on their schema); `planSources`: every subgraph
 * a local plan may fetch from, in process or over HTTP.
 */
export function directPath(localSources: ReadonlyMap<string, LocalSubgraphSource>, planSources: ReadonlyMap<string, PlanSource> = localSources): DirectPath {
  // Per parsed document, per operation name: the route. Apollo Server keeps parsed documents in its document store,
  // so this holds at most what that store holds.
  const routes = new WeakMap<DocumentNode, Map<string, Learnt>>();
  const stats = { direct: 0, local: 0, fallback: 0, fixed: 0 };
  // Known texts, with their route once the gateway has planned them (null until then, or for good when the gateway
  // runs them): the REST facade's fixed texts (a set bounded by the code), and /graphql's texts, bounded in bytes (a
  // text sent once waits in the cache's small one-off part; a learnt route keeps its parsed document).
  const fixedRoutes = new Map<string, FixedRoute | null>();
  const clientRoutes = new BoundedCache<FixedRoute | null>({
    ...CACHE_LIMITS.clientRoutes,
    sizeOf: (known, text) => textBytes(text) + (known ? documentBytes(known.document) : 0),
  });
  const tableOf = (text: string) => (fixedRoutes.has(text) ? fixedRoutes : clientRoutes.has(text) ? clientRoutes : undefined);

  /** A document's route for an operation, its local plan compiled on first use. */
  const routeOf = (document: DocumentNode, operation: OperationDefinitionNode, operationName: string | undefined, schema: GraphQLSchema): Route | undefined => {
    const byName = routes.get(document);
    const learnt = byName?.get(operationName ?? '');
    if (!learnt || !('planned' in learnt)) return learnt;
    const plan = compileLocalPlan(learnt.planned, document, operation, schema, planSources);
    const route = plan ? { plan } : null;
    byName!.set(operationName ?? '', route);
    return route;
  };

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
    byName.set(operationName ?? '', { planned: queryPlan });
  };

  /**
   * Records the route of a known text once its operation is planned (`didResolveQueryPlan` ran on an earlier run of
   * the same parsed document): only a document of one operation, so that the text alone names the route.
   */
  const learnFixed = (requestContext: GatewayGraphQLRequestContext) => {
    const { source, document, operation, schema } = requestContext;
    const table = tableOf(source);
    const known = table === fixedRoutes ? fixedRoutes.get(source) : clientRoutes.peek(source);
    if (!table || known !== null || document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length !== 1) return;
    const operationName = requestContext.operationName ?? undefined;
    const route = operation.operation === 'query' ? routeOf(document, operation, operationName, schema) : undefined;
    if (route) table.set(source, { route, document, operation, operationName, schema });
  };

  const fixed = (text: string) => {
    if (!fixedRoutes.has(text)) fixedRoutes.set(text, null);
  };

  // Each request of a text is a sighting: the second keeps the text (and the route it learns) for good.
  const seen = (text: string) => {
    if (text.length > CLIENT_TEXT_CHARS || fixedRoutes.has(text)) return;
    if (clientRoutes.has(text)) clientRoutes.get(text);
    else clientRoutes.set(text, null);
  };

  const operationOf = (text: string, operationName?: string | null) => {
    const known = fixedRoutes.get(text) ?? clientRoutes.peek(text);
    if (!known || (operationName != null && operationName !== known.operationName)) return undefined;
    return { document: known.document, operation: known.operation, schema: known.schema };
  };

  const runFixedUntraced = async (text: string, ctx: RequestContext, variables: Record<string, unknown>, operationName?: string | null) => {
    const known = fixedRoutes.get(text) ?? clientRoutes.peek(text);
    // An operation name other than the document's one operation: Apollo Server answers (with its error).
    if (!known || (operationName != null && operationName !== known.operationName)) return { context: ctx };
    // What Apollo Server checks per request before execution: the input rule on variables (literals were checked
    // when the text was first run), and the variables against the API schema, as the gateway does.
    if (findBadText(variables)) return { context: ctx };
    const definitions = known.operation.variableDefinitions;
    if (definitions?.length && getVariableValues(known.schema, definitions, variables).errors) return { context: ctx };
    // Apollo Server runs every operation on a shallow copy of the context, with its operation type recorded. A run
    // that falls through hands Apollo Server a copy of that copy: what the run left on it for the gateway's run goes
    // along (the answers a fetch over HTTP fell through on, `InternalRemoteSource.fetchFast`).
    const fast = copyOf(ctx, { operation: 'query' });
    const data = await run(known.route, known.document, known.operationName, fast, variables);
    if (!data) return { context: copyOf(fast, { [GATEWAY_ONLY]: true }) };
    count(known.route);
    stats.fixed += 1;
    return { data };
  };
  // With tracing on, a known text's run is the operation's span (`query <name>`), parent of its subgraph fetches.
  const runFixed: typeof runFixedUntraced = (text, ctx, variables, operationName) => {
    const known = tracingOn() ? (fixedRoutes.get(text) ?? clientRoutes.peek(text)) : undefined;
    if (!known) return runFixedUntraced(text, ctx, variables, operationName);
    return inSpan(operationSpanName('query', known.operationName), { attributes: operationAttributes('query', known.operationName, 'known text') }, () =>
      runFixedUntraced(text, ctx, variables, operationName),
    );
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
        const { document, operation, schema } = requestContext;
        if (operation.operation !== 'query') return viaGateway(requestContext);
        const route = routeOf(document, operation, requestContext.operationName ?? undefined, schema);
        if (!route) return viaGateway(requestContext);
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
      if (!tracingOn()) return { ...loaded, executor };
      // With tracing on, every operation the gateway's executor runs is a span (`query <name>`, `mutation <name>`),
      // the parent of its subgraph fetches: decided once here, so tracing off costs nothing per request.
      const traced: GatewayExecutor = (requestContext) => {
        const type = requestContext.operation.operation;
        const name = requestContext.operationName ?? undefined;
        return inSpan(operationSpanName(type, name), { attributes: operationAttributes(type, name, 'apollo server') }, () => executor(requestContext));
      };
      return { ...loaded, executor: traced };
    },
  });

  return { didResolveQueryPlan, wrap, stats, fixed, seen, operationOf, runFixed };
}

/** A GraphQL operation's span name: its type and name (`query PostPage`), as OpenTelemetry's GraphQL conventions have it. */
const operationSpanName = (type: string, name: string | undefined) => (name ? `${type} ${name}` : type);

/** The operation span's attributes; `entry`: run by Apollo Server's pipeline, or a known text without it (`runFixed`). */
const operationAttributes = (type: string, name: string | undefined, entry: string) => ({
  'graphql.operation.type': type,
  ...(name ? { 'graphql.operation.name': name } : {}),
  'svc.graphql.entry': entry,
});

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
