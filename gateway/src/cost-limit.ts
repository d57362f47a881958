import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, type GraphQLErrorExtensions, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { addressKey, sha256, type AppDeps, type RequestContext } from '../../subgraphs/kernel/index.js';
import { memoryBuckets, redisBuckets, type CostBuckets, type ThrottleStatus } from './cost-buckets.js';
import { graphqlCost, rateLimitRefusals } from '../../subgraphs/kernel/metrics.js';
import { measureOperation, QUERY_TOO_COMPLEX } from './limits.js';

/**
 * GraphQL rate limiting by cost, as Shopify's and GitHub's GraphQL APIs do it: every operation a client sends is
 * charged its estimated cost (`measureOperation`, the estimate the query limits check: `search` weighs 1,000) to a
 * token bucket of its caller, one per signed-in user or, anonymous, one per client address (IPv6 by its /64). A
 * bucket holds at most `maximumAvailable` points and gets `restoreRate` back every second (`config.graphqlCost`;
 * anonymous budgets are smaller). An operation costing more than the bucket holds does not run: `RATE_LIMITED`
 * (reason `throttled`, HTTP 429, `Retry-After` and `details.retryAfterSeconds`: when the bucket will hold enough);
 * one costing more than a full bucket never could: `QUERY_TOO_COMPLEX` (reason `cost_exceeds_budget`, 400). Every
 * answer reports the budget as `extensions.cost` (`CostReport`).
 *
 * Only GraphQL clients send is charged: `/graphql` over HTTP (POST and GET, Apollo Server's pipeline through
 * `costLimitPlugin` and the fast path of known texts) and subscribe messages over WebSocket. The REST facade's
 * documents and the realtime re-reads run through `executeOperation`, which the plugin leaves alone: the Platform
 * API and the resource API have their own limits.
 */

/** `extensions.cost` of an answer (Shopify's names): the operation's estimated cost and its caller's bucket after it. */
export interface CostReport {
  requestedQueryCost: number;
  throttleStatus: ThrottleStatus;
}

/** What charging one operation did; `refusal` is set when the operation must not run. */
export interface CostCharge {
  report: CostReport;
  refusal?: { code: typeof RATE_LIMITED | typeof QUERY_TOO_COMPLEX; reason: string; message: string; status: number; retryAfterSeconds?: number };
}

/** The error code of an operation refused because its caller's bucket holds too few points. */
export const RATE_LIMITED = 'RATE_LIMITED';

/** Charges client-sent operations to their caller's bucket. */
export interface CostLimiter {
  /** Charges `operation` of `document` (validated against `schema`) to the bucket of `ctx`'s caller. */
  charge(ctx: RequestContext, schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): Promise<CostCharge>;
  close(): Promise<void>;
}

// Per parsed operation (Apollo Server hands the same nodes for the same text): its cost, measured once.
const costs = new WeakMap<OperationDefinitionNode, number>();

/** The estimated cost of one operation of a parsed document, at least 1 (introspection alone counts 1). */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): number {
  let cost = costs.get(operation);
  if (cost === undefined) {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    cost = Math.max(1, measureOperation(schema, operation, (name) => fragments.get(name)).cost);
    costs.set(operation, cost);
  }
  return cost;
}

/** The bucket of a request: its user's, else its client address's (hashed: no address is stored). */
const bucketOf = (ctx: RequestContext): { key: string; anonymous: boolean } =>
  ctx.caller ? { key: `user:${ctx.caller.userId}`, anonymous: false } : { key: `address:${sha256(addressKey(ctx.clientAddress)).slice(0, 32)}`, anonymous: true };

/** The limiter of this process: buckets in Redis with `RATE_LIMIT_REDIS_URL` (shared by every process), else in memory. */
export function createCostLimiter(app: AppDeps): CostLimiter {
  const buckets: CostBuckets = app.config.rateLimit.redisUrl ? redisBuckets(app.config.rateLimit.redisUrl, app.log) : memoryBuckets();
  return {
    async charge(ctx, schema, document, operation) {
      const cost = operationCost(schema, document, operation);
      graphqlCost.observe({ type: operation.operation }, cost);
      const { key, anonymous } = bucketOf(ctx);
      const budget = anonymous ? app.config.graphqlCost.anonymous : app.config.graphqlCost.user;
      const who = anonymous ? 'an anonymous client' : 'a signed-in user';
      if (cost > budget.maximumAvailable) {
        const full = { maximumAvailable: budget.maximumAvailable, currentlyAvailable: budget.maximumAvailable, restoreRate: budget.restoreRate };
        return {
          report: { requestedQueryCost: cost, throttleStatus: full },
          refusal: {
            code: QUERY_TOO_COMPLEX,
            reason: 'cost_exceeds_budget',
            message: `Query cost ${cost} exceeds ${budget.maximumAvailable}, the most ${who} may spend at once.`,
            status: 400,
          },
        };
      }
      const charged = await buckets.charge(key, cost, budget, app.clock().getTime());
      const report = { requestedQueryCost: cost, throttleStatus: charged.status };
      if (charged.allowed) return { report };
      const seconds = charged.retryAfterSeconds;
      rateLimitRefusals.inc({ limit: 'graphql_cost' });
      return {
        report,
        refusal: {
          code: RATE_LIMITED,
          reason: 'throttled',
          message: `Throttled: this query costs ${cost} and ${charged.status.currentlyAvailable} of ${budget.maximumAvailable} points are available (${budget.restoreRate} restored a second). Retry after ${seconds} s.`,
          status: 429,
          retryAfterSeconds: seconds,
        },
      };
    },
    close: () => buckets.close(),
  };
}

/**
 * The error of a refused charge. `overHttp`: with `extensions.http` (status and `Retry-After`), which Apollo Server
 * turns into the HTTP answer's and then drops.
 */
export function costRefusal(refusal: NonNullable<CostCharge['refusal']>, overHttp: boolean): GraphQLError {
  const { code, reason, message, status, retryAfterSeconds } = refusal;
  const headers = retryAfterSeconds ? new HeaderMap([['retry-after', String(retryAfterSeconds)]]) : new HeaderMap();
  const extensions: Record<string, unknown> = {
    code,
    reason,
    status,
    ...(retryAfterSeconds ? { details: { retryAfterSeconds } } : {}),
    // Apollo Server reads `http.headers` as a Map (its HeaderMap), whatever other packages' typings declare.
    ...(overHttp ? { http: { status, headers } } : {}),
  };
  return new GraphQLError(message, { extensions: extensions as GraphQLErrorExtensions });
}

/** Marks a request context whose operation the fast path has charged already (a symbol: context copies keep it). */
const CHARGED = Symbol('graphqlCostCharged');

/**
 * Records on `ctx` how its operation was charged, so that Apollo Server's run of it (the fast path's fallback, or its
 * refusal) answers that charge instead of charging again.
 */
export function markCharged(ctx: RequestContext, charge: CostCharge): RequestContext {
  return Object.assign(ctx, { [CHARGED]: charge });
}

/**
 * Apollo Server plugin charging each operation sent to `/graphql` (a request that came over HTTP: `executeOperation`,
 * the REST facade's and the realtime re-reads' way in, has no `request.http`) once it is resolved and validated, and
 * reporting `extensions.cost` in the answer. A subscription over HTTP is refused by `httpSubscriptionPlugin` and not
 * charged; a request refused before (syntax, validation, the query limits) costs nothing.
 */
export function costLimitPlugin(limiter: CostLimiter): ApolloServerPlugin<RequestContext> {
  return {
    async requestDidStart({ request }) {
      if (!request.http) return;
      let report: CostReport | undefined;
      return {
        async didResolveOperation({ operation, document, schema, contextValue }) {
          if (!operation || operation.operation === 'subscription') return;
          const charge = (contextValue as { [CHARGED]?: CostCharge })[CHARGED] ?? (await limiter.charge(contextValue, schema, document, operation));
          report = charge.report;
          if (charge.refusal) throw costRefusal(charge.refusal, true);
        },
        async willSendResponse({ response }) {
          if (!report || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, cost: report };
        },
      };
    },
  };
}
