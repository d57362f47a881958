import type { RequestHandler } from 'express';
import { markCharged, type CostCharge } from '../../gateway/src/cost-limit.js';
import { countOperation } from '../../subgraphs/kernel/metrics.js';
import type { Graph } from '../../gateway/src/graph.js';
import type { AppDeps, RequestContext } from '../../subgraphs/kernel/index.js';
import { contextOf } from './http.js';

/** `Accept` headers for which Apollo Server answers a result as `application/json; charset=utf-8`. */
const PLAIN_JSON_ACCEPT = new Set([undefined, '*/*', 'application/json']);

/** What Apollo Server's response for `/graphql` takes as its context: the fast path's fallback, else the request's. */
export const graphqlContext = (app: AppDeps, req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1]): RequestContext =>
  (res.locals.graphqlContext as RequestContext | undefined) ?? contextOf(app, req);

/**
 * `/graphql` before Apollo Server (after the JSON body parser, the persisted-operations check and the session): a
 * plain POST of a query text the gateway has planned as a local route (the web app sends the same texts again and
 * again) runs that route without Apollo Server's request pipeline and answers what Apollo Server answers for it,
 * byte for byte: status 200, `content-type: application/json; charset=utf-8`, the body `{"data":...}` and a line
 * feed, through the same `res.send` (with `extensions.cost`: the text is charged to its caller's GraphQL budget first,
 * as `costLimitPlugin` does; a refusal goes on to Apollo Server, which answers it). Anything else goes on to Apollo Server untouched: GET, batches, `extensions`,
 * other `Accept` headers, texts not planned yet or planned through the gateway, and every request whose fast run
 * meets an error (Apollo Server then runs it on the gateway, once, and answers the error as always).
 */
export function graphqlFastPath(app: AppDeps, graph: Graph): RequestHandler {
  return async (req, res, next) => {
    const body: unknown = req.body;
    if (req.method !== 'POST' || !PLAIN_JSON_ACCEPT.has(req.headers.accept) || !body || typeof body !== 'object' || Array.isArray(body)) return next();
    const { query, variables, operationName, extensions, ...rest } = body as Record<string, unknown>;
    const plainVariables = variables === undefined || variables === null || (typeof variables === 'object' && !Array.isArray(variables));
    if (typeof query !== 'string' || !plainVariables || extensions !== undefined || Object.keys(rest).length) return next();
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return next();
    graph.known.seen(query);
    try {
      let ctx = contextOf(app, req);
      const known = graph.known.operationOf(query, operationName);
      let charge: CostCharge | undefined;
      if (known) {
        charge = await graph.cost.charge(ctx, known.schema, known.document, known.operation);
        ctx = markCharged(ctx, charge);
        if (charge.refusal) {
          res.locals.graphqlContext = ctx;
          return next();
        }
      }
      const fast = await graph.known.runFixed(query, ctx, (variables ?? {}) as Record<string, unknown>, operationName);
      if (!('data' in fast)) {
        res.locals.graphqlContext = fast.context;
        return next();
      }
      res.status(200).setHeader('content-type', 'application/json; charset=utf-8');
      res.send(`${JSON.stringify({ data: fast.data, extensions: { cost: charge!.report } })}\n`);
      countOperation(known?.operation.name?.value ?? operationName, known?.operation.operation);
    } catch (error) {
      next(error);
    }
  };
}
