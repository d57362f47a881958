import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import client from 'prom-client';
import { bindToActive, endSpan, statementSpan, tracingOn } from './tracing.js';

/**
 * The Prometheus metrics of this process: one registry per process (every series starts with `svc_`), the Node
 * default metrics included, served by `serveMetrics` on `METRICS_PORT` (bound to `METRICS_HOST`, 127.0.0.1 by
 * default), never on the public port. Recording is one `inc` or `observe` on a metric defined here, so the names
 * and labels are in one place; every label takes a bounded set of values (route templates, never raw URLs).
 */
export const registry = new client.Registry();

let defaultsCollected = false;
/** Node's process metrics (event-loop lag, heap, GC, CPU, handles): once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics({ register: registry, prefix: 'svc_' });
}

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** HTTP answers of the public port, by surface, route template, method and status class (`2xx`...). */
export const httpDuration = new client.Histogram({
  name: 'svc_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by surface (graphql, platform, resource, application, console, docs, health), route template, method and status class.',
  labelNames: ['surface', 'route', 'method', 'status_class'] as const,
  buckets: SECONDS,
  registers: [registry],
});

/** GraphQL operations executed, by operation name (`anonymous` without one) and type. */
export const graphqlOperations = new client.Counter({
  name: 'svc_graphql_operations_total',
  help: 'GraphQL operations executed, by operation name and type (query, mutation, subscription).',
  labelNames: ['operation', 'type'] as const,
  registers: [registry],
});

/** GraphQL errors returned, by `extensions.code`. */
export const graphqlErrors = new client.Counter({
  name: 'svc_graphql_errors_total',
  help: 'GraphQL errors returned to clients, by extensions.code.',
  labelNames: ['code'] as const,
  registers: [registry],
});

/** The cost of each GraphQL operation (the points charged to the caller's budget). */
export const graphqlCost = new client.Histogram({
  name: 'svc_graphql_query_cost',
  help: 'Estimated cost of each GraphQL operation, in budget points.',
  labelNames: ['type'] as const,
  buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
  registers: [registry],
});

/** Time of each fetch the gateway makes to a subgraph (in process or over HTTP). */
export const subgraphFetchDuration = new client.Histogram({
  name: 'svc_graphql_subgraph_fetch_duration_seconds',
  help: 'Time of each gateway fetch from a subgraph, by subgraph.',
  labelNames: ['subgraph'] as const,
  buckets: SECONDS,
  registers: [registry],
});

const pools = new Set<pg.Pool>();
/** The PostgreSQL pools of this process (normally one), read at each scrape; an ended pool is dropped. */
const livePools = (): pg.Pool[] => {
  for (const pool of pools) if (pool.ended) pools.delete(pool);
  return [...pools];
};

/** Connections of the PostgreSQL pool: open (`state="total"`) and idle among them (`state="idle"`). */
export const poolConnections = new client.Gauge({
  name: 'svc_db_pool_connections',
  help: 'Connections of the PostgreSQL pool: open (state="total") and idle among them (state="idle").',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    let total = 0;
    let idle = 0;
    for (const pool of livePools()) {
      total += pool.totalCount;
      idle += pool.idleCount;
    }
    this.set({ state: 'total' }, total);
    this.set({ state: 'idle' }, idle);
  },
});

/** The most connections the pool may open (`DATABASE_POOL_SIZE`). */
export const poolMax = new client.Gauge({
  name: 'svc_db_pool_max_connections',
  help: 'The most connections the PostgreSQL pool may open (DATABASE_POOL_SIZE).',
  registers: [registry],
  collect() {
    this.set(livePools().reduce((sum, pool) => sum + pool.options.max, 0));
  },
});

/** Requests waiting for a connection of the pool. */
export const poolWaiting = new client.Gauge({
  name: 'svc_db_pool_waiting_clients',
  help: 'Requests waiting for a connection of the PostgreSQL pool (all connections busy).',
  registers: [registry],
  collect() {
    this.set(livePools().reduce((sum, pool) => sum + pool.waitingCount, 0));
  },
});

/** Time of each SQL statement on the pool, from sending it to its answer. */
export const statementDuration = new client.Histogram({
  name: 'svc_db_statement_duration_seconds',
  help: 'Time of each SQL statement sent on the PostgreSQL pool, until its answer (or error).',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** Transactions rolled back (a `ROLLBACK` statement sent on the pool: errors, conflicts, refusals). */
export const rollbacks = new client.Counter({
  name: 'svc_db_transactions_rolled_back_total',
  help: 'Transactions rolled back on the PostgreSQL pool.',
  registers: [registry],
});

/**
 * Times every statement of one pg client (callback or promise form) in `svc_db_statement_duration_seconds` and, when
 * tracing is on, records it as a `pg.query:<OPERATION>` span of the active span (kernel/tracing.ts).
 */
function timeStatements(pgClient: pg.PoolClient): void {
  const query = pgClient.query as (...args: unknown[]) => unknown;
  (pgClient as { query: unknown }).query = function timedQuery(this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: unknown } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string' && text.length <= 16 && /^\s*rollback\b/i.test(text)) rollbacks.inc();
    const span = typeof text === 'string' ? statementSpan(text) : undefined; // undefined when tracing is off
    const started = process.hrtime.bigint();
    const done = (error?: unknown) => {
      statementDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      if (span) endSpan(span, error ?? undefined);
    };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (this: unknown, ...results: unknown[]) {
        done(results[0]);
        return callback.apply(this, results);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args) as { then?: (ok: () => void, fail: (error: unknown) => void) => unknown } | undefined;
    if (typeof result?.then === 'function') result.then(() => done(), done);
    else endSpan(span); // a submittable (cursor) is not timed
    return result;
  };
}

/**
 * Reports `pool` in the pool gauges and times each statement of its connections (call it before the first query:
 * connections opened earlier are not timed). Transactions rolled back are counted from their `ROLLBACK`. With tracing
 * on, `pool.query`'s statements are spans of the caller's span, whichever request released the connection it gets.
 */
export function watchPool(pool: pg.Pool): void {
  pools.add(pool);
  pool.on('connect', timeStatements);
  if (tracingOn()) {
    const connect = pool.connect as (callback?: unknown) => unknown;
    (pool as { connect: unknown }).connect = function (this: unknown, callback?: unknown) {
      return connect.call(this, typeof callback === 'function' ? bindToActive(callback as () => void) : callback);
    };
  }
}

/** Agenda job runs that ended, by job name and outcome (`succeeded`, `failed`). */
export const jobRuns = new client.Counter({
  name: 'svc_job_runs_total',
  help: 'Agenda job runs that ended, by job name and outcome (succeeded, failed).',
  labelNames: ['job', 'outcome'] as const,
  registers: [registry],
});

/** Time of each Agenda job run, by job name. */
export const jobDuration = new client.Histogram({
  name: 'svc_job_duration_seconds',
  help: 'Time of each Agenda job run, by job name.',
  labelNames: ['job'] as const,
  buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
});

type Backlog = { waiting: number; oldestAgeSeconds: number };
let backlogSource: (() => Promise<Backlog>) | undefined;
let backlogRead: Promise<Backlog | undefined> | undefined;
/** One read of the outbox per scrape, shared by its two gauges; a database that does not answer leaves them as they were. */
const readBacklog = (): Promise<Backlog | undefined> =>
  (backlogRead ??= (backlogSource?.() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => (backlogRead = undefined)));

/** Outbox events the webhook fan-out has not taken yet. */
export const outboxWaiting = new client.Gauge({
  name: 'svc_outbox_events_waiting',
  help: 'Outbox events not yet fanned out to webhook deliveries.',
  registers: [registry],
  async collect() {
    const backlog = await readBacklog();
    if (backlog) this.set(backlog.waiting);
  },
});

/** Age of the oldest outbox event waiting (0 when none waits). */
export const outboxOldestAge = new client.Gauge({
  name: 'svc_outbox_oldest_event_age_seconds',
  help: 'Age of the oldest outbox event not yet fanned out (0 when none waits).',
  registers: [registry],
  async collect() {
    const backlog = await readBacklog();
    if (backlog) this.set(backlog.oldestAgeSeconds);
  },
});

/** The outbox backlog the gauges read at each scrape (the worker registers it); returns the unregistering function. */
export function watchOutbox(source: () => Promise<Backlog>): () => void {
  backlogSource = source;
  return () => {
    if (backlogSource === source) backlogSource = undefined;
  };
}

/** Webhook delivery attempts, by outcome: delivered, retried (a later attempt is due), failed (the last), blocked (SSRF policy). */
export const deliveryAttempts = new client.Counter({
  name: 'svc_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: delivered, retried (another attempt is due), failed (no attempt left), blocked (address not allowed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Time of each webhook delivery attempt (waiting for the origin's concurrency slot excluded). */
export const deliveryAttemptDuration = new client.Histogram({
  name: 'svc_webhook_attempt_duration_seconds',
  help: 'Time of each webhook delivery attempt, from connecting to the answer.',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/**
 * From an event's creation (the request that wrote it) to its delivery's successful attempt: the fan-out's interval,
 * the queue, the retries and the attempt itself. Observed once per delivered delivery.
 */
export const deliveryDelay = new client.Histogram({
  name: 'svc_webhook_delivery_delay_seconds',
  help: 'Time from a webhook event being written to its delivery being accepted by the receiver (fan-out, queue, retries and the attempt).',
  buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
  registers: [registry],
});

/** Mail the `mail.send` job handled, by outcome: sent, retried (a later attempt is due), failed (for good), logged (no SMTP_URL). */
export const mailMessages = new client.Counter({
  name: 'svc_mail_messages_total',
  help: 'Mail handled by the mail.send job, by outcome: sent, retried (another attempt is due), failed (for good), logged (SMTP_URL unset).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** The WebSocket servers of this process (normally one), read at each scrape. */
const realtimeServers = new Set<{ readonly clients: number; readonly subscriptions: number }>();

/** Open WebSocket connections (GraphQL subscriptions). */
export const realtimeSockets = new client.Gauge({
  name: 'svc_realtime_sockets_open',
  help: 'Open WebSocket connections of GraphQL subscriptions.',
  registers: [registry],
  collect() {
    let open = 0;
    for (const server of realtimeServers) open += server.clients;
    this.set(open);
  },
});

/** Live GraphQL subscriptions. */
export const realtimeSubscriptions = new client.Gauge({
  name: 'svc_realtime_subscriptions',
  help: 'Live GraphQL subscriptions over WebSocket.',
  registers: [registry],
  collect() {
    let live = 0;
    for (const server of realtimeServers) live += server.subscriptions;
    this.set(live);
  },
});

/** Reports a WebSocket server in the realtime gauges until the returned function is called. */
export function watchRealtime(server: { readonly clients: number; readonly subscriptions: number }): () => void {
  realtimeServers.add(server);
  return () => realtimeServers.delete(server);
}

/** Requests refused by a rate limit, by limit (the refusal's code: `posting_rate_limited`, `graphql_cost`, `platform_api_key`...). */
export const rateLimitRefusals = new client.Counter({
  name: 'svc_rate_limit_refusals_total',
  help: 'Requests refused by a rate limit, by limit.',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** Uploads by outcome: `stored`, else the refusal's code (`file_too_large`, `unsupported_file_type`...), `error` when unexpected. */
export const uploads = new client.Counter({
  name: 'svc_uploads_total',
  help: 'Media uploads by outcome: stored, else the refusal code (file_too_large, upload_rate_limited...), or error.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Distinct operation names kept as label values; past it, a new name counts as `other` (clients choose names). */
const MAX_OPERATION_NAMES = 500;
const operationNames = new Set<string>();

/** Counts one GraphQL operation in `svc_graphql_operations_total` (its name bounded: see `MAX_OPERATION_NAMES`). */
export function countOperation(name: string | null | undefined, type: string | undefined): void {
  let label = name || 'anonymous';
  if (!operationNames.has(label)) {
    if (operationNames.size >= MAX_OPERATION_NAMES) label = 'other';
    else operationNames.add(label);
  }
  graphqlOperations.inc({ operation: label, type: type ?? 'unknown' });
}

/** Counts the errors of one GraphQL answer in `svc_graphql_errors_total` by `extensions.code`. */
export function countGraphqlErrors(errors: ReadonlyArray<{ extensions?: Record<string, unknown> }> | undefined): void {
  if (!errors) return;
  for (const error of errors) {
    const code = error.extensions?.code;
    graphqlErrors.inc({ code: typeof code === 'string' && code.length <= 64 ? code : 'UNKNOWN' });
  }
}

/** The status class of an HTTP status: `2xx`, `4xx`... */
export function statusClass(status: number): string {
  return status >= 500 ? '5xx' : status >= 400 ? '4xx' : status >= 300 ? '3xx' : status >= 200 ? '2xx' : '1xx';
}

/** A running metrics endpoint. */
export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on its own port and host, apart from the public port; anything
 * else is 404. Port 0 takes a free port (tests).
 */
export async function serveMetrics(options: { port: number; host: string }): Promise<MetricsServer> {
  collectProcessMetrics();
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
