import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginUsageReportingDisabled } from '@apollo/server/plugin/disabled';
import type { QueryPlan } from '@apollo/query-planner';
import { buildSchema, coerceInputValue, isInputType, Kind, parse, typeFromAST, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { buildSubgraph, SUBGRAPH_NAMES, type SubgraphName } from '../../subgraphs/index.js';
import { formatPublicError, serviceUnavailableStatus } from '../../subgraphs/kernel/graphql-errors.js';
import { operationTypePlugin } from '../../subgraphs/kernel/operation.js';
import type { AppDeps, RequestContext } from '../../subgraphs/kernel/index.js';
import { asKeyValueCache, BoundedCache, CACHE_LIMITS, documentBytes, planBytes, textBytes } from './bounded-cache.js';
import { clientErrorFormatter } from './client-errors.js';
import { composeSupergraph } from './compose.js';
import { costLimitPlugin, createCostLimiter, type CostLimiter } from './cost-limit.js';
import { graphqlMetricsPlugin, timedFetches } from './metrics-plugin.js';
import { directPath, type DirectPath } from './direct.js';
import { inputRulePlugin } from './input-plugin.js';
import { QUERY_LIMITS, queryLimitsRule } from './limits.js';
import { fetchCaches, LocalSubgraphSource } from './local-source.js';
import type { PlanSource } from './local-plan.js';
import { httpSubscriptionPlugin, operationResolutionPlugin } from './operation-plugin.js';
import { InternalRemoteSource } from './remote-source.js';

/** A GraphQL result as the REST facade reads it: `TData` is the generated result type of the document run. */
export interface ExecutionResult<TData = Record<string, unknown>> {
  data?: TData | null;
  errors?: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }>;
}

/**
 * A fixed GraphQL document as its exact text (persisted-operation hashes are taken over it), carrying the generated
 * types of its result and variables (the shape of `DocumentTypeDecoration` of `@graphql-typed-document-node/core`).
 */
export type TypedDocumentString<TResult, TVariables> = string & { readonly __apiType?: (variables: TVariables) => TResult };

/**
 * Variables as the REST facade passes them: every name checked against the document, scalar values typed. An
 * input object is the client's JSON, passed on unchecked: GraphQL validates it, and its errors become the REST 400s.
 */
export type OperationVariables<TVariables> = {
  [K in keyof TVariables]: NonNullable<TVariables[K]> extends string | number | boolean ? TVariables[K] : unknown;
};

/** Runs a fixed operation with variables through the gateway on behalf of a caller. */
export type OperationRunner = <TResult, TVariables>(
  ctx: RequestContext,
  document: TypedDocumentString<TResult, TVariables>,
  variables?: OperationVariables<TVariables>,
) => Promise<ExecutionResult<TResult>>;

export interface Graph {
  server: ApolloServer<RequestContext>;
  execute: OperationRunner;
  /** The supergraph's API schema (what clients query), as the gateway loaded it: subscriptions extend it. */
  apiSchema: GraphQLSchema;
  /** Queries of in-process subgraphs run on their schemas directly (see `direct.ts`, `local-plan.ts`); its counters. */
  direct: DirectPath['stats'];
  /** Known texts without Apollo Server's request pipeline (`direct.ts`): what `/graphql`'s fast path uses. */
  known: Pick<DirectPath, 'seen' | 'operationOf' | 'runFixed'>;
  /** The GraphQL rate limit by cost (`cost-limit.ts`): what `/graphql` and the WebSocket endpoint charge clients. */
  cost: CostLimiter;
  stop(): Promise<void>;
}

/**
 * Builds the gateway: subgraphs in this process by default, or over HTTP when `subgraphUrls` names them
 * (every subgraph must then be named).
 */
export async function createGraph(app: AppDeps): Promise<Graph> {
  const remote = app.config.subgraphUrls;
  if (remote) {
    const missing = SUBGRAPH_NAMES.filter((n) => !remote[n]);
    if (missing.length) throw new Error(`SUBGRAPH_URLS lacks: ${missing.join(', ')}`);
  }
  const supergraphSdl = composeSupergraph();
  const localSources = new Map<string, LocalSubgraphSource>();
  const planSources = new Map<string, PlanSource>();
  const direct = directPath(localSources, planSources);
  const caches = fetchCaches();
  const remoteSources: InternalRemoteSource[] = [];
  // @apollo/gateway otherwise reports usage to Apollo (usage-reporting.api.apollographql.com, hourly) and, on each
  // construction, probes the cloud metadata endpoints (169.254.169.254, 100.100.100.200, metadata.google.internal)
  // for that report: the service sends nothing to a third party (test/outbound.test.ts). An explicit value is kept.
  process.env.APOLLO_TELEMETRY_DISABLED ??= 'true';
  const gateway = new ApolloGateway({
    supergraphSdl,
    buildService: ({ name }) => {
      if (remote) {
        const source = new InternalRemoteSource({
          name,
          url: remote[name]!,
          secret: app.config.internalSecret!,
          timeoutMs: app.config.subgraphTimeoutMs,
          deduplicateInflight: app.config.subgraphDeduplicateInflight,
          log: app.log,
        });
        remoteSources.push(source);
        planSources.set(name, source);
        return timedFetches(source, name);
      }
      const source = new LocalSubgraphSource(buildSubgraph(name as SubgraphName), name, caches);
      localSources.set(name, source);
      planSources.set(name, source);
      return timedFetches(source, name);
    },
    experimental_didResolveQueryPlan: direct.didResolveQueryPlan,
    // Query plans kept in bytes, a document's plan for good only once it comes back (bounded-cache.ts).
    queryPlannerConfig: { cache: asKeyValueCache(new BoundedCache<QueryPlan>({ ...CACHE_LIMITS.plans, sizeOf: (plan, key) => planBytes(plan) + textBytes(key) })) },
  });
  const clientError = clientErrorFormatter(app.config.graphql);
  const cost = createCostLimiter(app);
  const server = new ApolloServer<RequestContext>({
    gateway: direct.wrap(gateway),
    formatError: (formatted, error) => formatPublicError(clientError(formatted, error)),
    includeStacktraceInErrorResponses: false,
    // The service drains HTTP and then stops the gateway itself; Apollo's own handler would stop it first and re-raise the signal.
    stopOnTerminationSignals: false,
    // Schema details (introspection, "Did you mean" suggestions) only where config allows: not in production by default.
    introspection: app.config.graphql.introspection,
    hideSchemaDetailsFromClientErrors: !app.config.graphql.introspection,
    nodeEnv: app.config.nodeEnv,
    // Depth, aliases, root fields and cost are checked once per distinct document (Apollo caches validated ones).
    validationRules: [queryLimitsRule()],
    parseOptions: { maxTokens: QUERY_LIMITS.tokens },
    // Parsed and validated documents, and texts registered by automatic persisted queries, kept in bytes, a
    // document for good only once it comes back: a flood of one-off documents churns a small part (bounded-cache.ts).
    documentStore: asKeyValueCache(
      new BoundedCache<DocumentNode>({ ...CACHE_LIMITS.documents, sizeOf: (document, key) => documentBytes(document, true) + textBytes(key) }),
    ),
    persistedQueries: { cache: asKeyValueCache(new BoundedCache<string>({ ...CACHE_LIMITS.persistedQueries, sizeOf: (text, key) => textBytes(text) + textBytes(key) })) },
    logger: app.log,
    // No HTTP caching of GraphQL responses here, and no usage reporting: both only cost time per field.
    // An operation that does not resolve is refused first (400 BAD_USER_INPUT), before the input rule and the gateway;
    // then a subscription sent over HTTP (400 BAD_REQUEST: subscriptions are served over WebSocket).
    plugins: [
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      operationResolutionPlugin(),
      httpSubscriptionPlugin(),
      inputRulePlugin(),
      // Each operation a client sent over HTTP is charged its estimated cost; executeOperation (REST facade) is not.
      costLimitPlugin(cost),
      serviceUnavailableStatus,
      operationTypePlugin,
      graphqlMetricsPlugin, // svc_graphql_operations_total, svc_graphql_errors_total
    ],
  });
  await server.start();
  const checkVariables = variableChecker(buildSchema(supergraphSdl));
  const execute: OperationRunner = async <TResult, TVariables>(
    ctx: RequestContext,
    query: TypedDocumentString<TResult, TVariables>,
    variables?: OperationVariables<TVariables>,
  ) => {
    const refused = checkVariables(query, variables as Record<string, unknown> | undefined);
    if (refused) return { errors: [refused] };
    // A fixed document the gateway has planned as local fetches runs without Apollo Server's request pipeline
    // (parsing, hashing, validation and plugin hooks were done for this text already); any error, and Apollo Server
    // and the gateway answer the request as before.
    direct.fixed(query);
    const fast = await direct.runFixed(query, ctx, (variables ?? {}) as Record<string, unknown>);
    if ('data' in fast) return { data: fast.data as TResult };
    const response = await server.executeOperation<Record<string, unknown>>({ query, variables }, { contextValue: fast.context });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by the REST facade');
    // The data has the shape the document selects: the generated result type of that document.
    return response.body.singleResult as ExecutionResult<TResult>;
  };
  const stop = async () => {
    await server.stop();
    await cost.close();
    await Promise.all(remoteSources.map((source) => source.close()));
  };
  return { server, execute, apiSchema: gateway.schema!, direct: direct.stats, known: direct, cost, stop };
}

/**
 * The first variable of a fixed document that does not coerce to its declared type, as a structured error:
 * `extensions: { code: "BAD_USER_INPUT", reason: "invalid_value", field: "input.category", problem: "String cannot
 * represent a non string value: 5" }`. The REST facade runs this before execution, so its 400s name the field from
 * these parts instead of parsing graphql-js's message text; GraphQL clients are not affected.
 */
function variableChecker(schema: GraphQLSchema) {
  const operations = new Map<string, OperationDefinitionNode | undefined>(); // fixed documents: a bounded set
  return (document: string, variables: Record<string, unknown> = {}) => {
    if (!operations.has(document)) {
      operations.set(document, parse(document).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION));
    }
    for (const definition of operations.get(document)?.variableDefinitions ?? []) {
      const name = definition.variable.name.value;
      const type = typeFromAST(schema, definition.type as Parameters<typeof typeFromAST>[1]);
      if (!type || !isInputType(type)) continue; // the gateway's validation reports it
      const value = variables[name];
      if (value === undefined || value === null) continue; // absent or null where required: the gateway refuses it
      let problem: { path: ReadonlyArray<string | number>; message: string } | undefined;
      coerceInputValue(value, type, (path, _invalid, error) => (problem ??= { path, message: error.message }));
      if (problem) return refusedVariable(name, problem.path, problem.message);
    }
    return null;
  };
}

function refusedVariable(name: string, path: ReadonlyArray<string | number>, problem: string) {
  const field = [name, ...path].map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${p}` : p)).join('');
  return { message: `Variable "$${field}": ${problem}`, extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_value', field, problem } };
}
