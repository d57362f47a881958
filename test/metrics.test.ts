import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import parsePrometheusTextFormat, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';
import { enqueueMail, sendQueuedMail } from '../subgraphs/mail/index.js';
import { drain, fanOut } from '../subgraphs/webhooks/index.js';
import { SmtpSink } from './smtp.js';
import { subscribe, wsConnect } from './ws.js';
import { createKey, createPost, createTribe, registerEndpoint, signupUser } from './factory.js';
import { answer, gql, isolatedDatabase, plantedResolver, platformGet, Receiver, startService, startWebhookService, type TestService, waitFor } from './support.js';

/**
 * One scrape of a metrics endpoint, parsed (never grepped). The parser merges every labelled histogram's series into
 * one sample (its `flattenMetrics`), so the families come from a first parse (names, types) and the samples from a
 * second one that reads histograms as untyped: each `<name>_count` series then keeps its labels.
 */
async function scrape(port: number): Promise<MetricFamily[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const typed = parsePrometheusTextFormat(text);
  const flat = parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
  const names = new Set(typed.map((f) => f.name));
  return [...typed, ...flat.filter((f) => !names.has(f.name))];
}

const family = (families: MetricFamily[], name: string): MetricFamily | undefined => families.find((f) => f.name === name);

/** The samples of `name` whose labels include `labels` (untyped, a histogram's series come in one family per label set). */
function samples(families: MetricFamily[], name: string, labels: Record<string, string> = {}): Sample[] {
  return families.filter((f) => f.name === name).flatMap((f) => f.metrics).filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
}

/** A counter's or gauge's value, or a histogram's observation count (its `_count`), summed over the samples that match. */
function total(families: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const series = family(families, name)?.type === 'HISTOGRAM' ? `${name}_count` : name;
  return samples(families, series, labels).reduce((sum, s) => sum + Number(s.value ?? 0), 0);
}

describe('metrics', () => {
  let t: TestService;
  let publicPort: number;
  let metricsPort: number;
  let before: MetricFamily[];
  let after: MetricFamily[];

  beforeAll(async () => {
    t = await startService({ METRICS_PORT: '0' });
    publicPort = await t.listen(0, '127.0.0.1');
    metricsPort = t.metrics!.port;
    before = await scrape(metricsPort);
    // A small flow over every surface: sign up, create a tribe, post, a GraphQL query, a Platform API call.
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await createPost(t, owner, tribe.id);
    await expect(createTribe(t, owner, { handle: tribe.handle })).rejects.toThrow(/createCommunity failed/);
    const out = await gql(t, owner, 'query Me { me { id } }');
    expect(out.errors).toBeUndefined();
    const refused = await gql(t, owner, 'query Broken { noSuchField }');
    expect(refused.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const key = await createKey(t, owner, tribe.handle);
    expect((await platformGet(t, '/v1/me', key.key)).status).toBe(200);
    expect((await platformGet(t, '/v1/no-such-thing', key.key)).status).toBe(404);
    after = await scrape(metricsPort);
  });

  afterAll(async () => {
    await t?.stop();
  });

  describe('the endpoint', () => {
    it('listens on its own port, on 127.0.0.1 by default, apart from the public port', () => {
      expect(t.deps.config.metrics.host).toBe('127.0.0.1');
      expect(metricsPort).not.toBe(publicPort);
    });

    it('is not served on the public port', async () => {
      const res = await fetch(`http://127.0.0.1:${publicPort}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('svc_');
    });

    it('answers 404 to any other path', async () => {
      expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    });

    it('is off when METRICS_PORT is unset', async () => {
      const plain = await startService();
      try {
        await plain.listen(0, '127.0.0.1');
        expect(plain.metrics).toBeUndefined();
      } finally {
        await plain.stop();
      }
    });

    it('names every series with the svc_ prefix', () => {
      expect(after.length).toBeGreaterThan(10);
      for (const f of after) expect(f.name).toMatch(/^svc_/);
    });
  });

  describe('Node process metrics', () => {
    it('has event-loop lag, heap and GC', () => {
      expect(family(after, 'svc_nodejs_eventloop_lag_seconds')?.type).toBe('GAUGE');
      expect(total(after, 'svc_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
      expect(family(after, 'svc_nodejs_gc_duration_seconds')?.type).toBe('HISTOGRAM');
      expect(total(after, 'svc_process_cpu_seconds_total')).toBeGreaterThan(0);
    });
  });

  describe('svc_http_request_duration_seconds', () => {
    const name = 'svc_http_request_duration_seconds';

    it('is a histogram', () => {
      expect(family(after, name)?.type).toBe('HISTOGRAM');
    });

    it.each([
      ['application', '/auth/signup', 'POST', '2xx'],
      ['graphql', '/graphql', 'POST', '2xx'],
      ['platform', '/v1/me', 'GET', '2xx'],
      ['application', '/communities/:handle/api-keys', 'POST', '2xx'],
    ])('counts %s %s %s %s by its route template', (surface, route, method, statusClass) => {
      const labels = { surface, route, method, status_class: statusClass };
      expect(total(after, name, labels) - total(before, name, labels)).toBeGreaterThanOrEqual(1);
    });

    it('labels a path that no route matched without its raw URL', () => {
      const routes = samples(after, `${name}_count`, { surface: 'platform', status_class: '4xx' }).map((s) => s.labels?.route);
      expect(routes.length).toBeGreaterThan(0);
      expect(routes).not.toContain('/v1/no-such-thing');
    });

    it('never labels a route with a value (a handle, an id)', () => {
      const routes = new Set(samples(after, `${name}_count`).map((s) => s.labels!.route));
      for (const route of routes) expect(route).not.toMatch(/t-[0-9a-f]{10}|[0-9a-f]{8}-[0-9a-f]{4}-/);
    });
  });

  describe('GraphQL', () => {
    it('counts operations by name and type', () => {
      const labels = { operation: 'Me', type: 'query' };
      expect(total(after, 'svc_graphql_operations_total', labels) - total(before, 'svc_graphql_operations_total', labels)).toBe(1);
      const creates = { type: 'mutation' };
      expect(total(after, 'svc_graphql_operations_total', creates) - total(before, 'svc_graphql_operations_total', creates)).toBeGreaterThanOrEqual(2);
    });

    it('counts errors by extensions.code', () => {
      const labels = { code: 'GRAPHQL_VALIDATION_FAILED' };
      expect(total(after, 'svc_graphql_errors_total', labels) - total(before, 'svc_graphql_errors_total', labels)).toBe(1);
    });

    it('times the fetches of query plans from the subgraphs', () => {
      const name = 'svc_graphql_subgraph_fetch_duration_seconds';
      expect(family(after, name)?.type).toBe('HISTOGRAM');
      expect(total(after, name) - total(before, name)).toBeGreaterThanOrEqual(1);
      // The subgraphs that served this file's requests (the registry is the process's: other files' services add to it).
      const grew = samples(after, `${name}_count`).filter((s) => Number(s.value) > total(before, name, s.labels as Record<string, string>));
      expect(grew.length).toBeGreaterThan(0);
      expect(grew.map((s) => s.labels!.subgraph).filter((subgraph) => !/^[a-z]+$/.test(String(subgraph)))).toEqual([]);
    });

    it('times the fast paths\' fetches too (a one-subgraph query runs without a query plan)', async () => {
      const name = 'svc_graphql_subgraph_fetch_duration_seconds';
      const user = await signupUser(t);
      const seen = await scrape(metricsPort);
      for (let i = 0; i < 3; i += 1) expect((await gql(t, user, 'query MyId { me { id } }')).errors).toBeUndefined();
      const now = await scrape(metricsPort);
      expect(total(now, name, { subgraph: 'identity' }) - total(seen, name, { subgraph: 'identity' })).toBe(3);
    });

    it('observes each operation\'s cost', () => {
      expect(family(after, 'svc_graphql_query_cost')?.type).toBe('HISTOGRAM');
      expect(total(after, 'svc_graphql_query_cost', { type: 'query' }) - total(before, 'svc_graphql_query_cost', { type: 'query' })).toBeGreaterThanOrEqual(1);
    });
  });

  describe('database', () => {
    it('reports the pool: connections open and idle, its size, requests waiting', () => {
      expect(total(after, 'svc_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(samples(after, 'svc_db_pool_connections', { state: 'idle' })).toHaveLength(1);
      expect(total(after, 'svc_db_pool_max_connections')).toBe(5); // DATABASE_POOL_SIZE of the tests
      expect(samples(after, 'svc_db_pool_waiting_clients')).toHaveLength(1);
    });

    it('times every statement', () => {
      expect(family(after, 'svc_db_statement_duration_seconds')?.type).toBe('HISTOGRAM');
      expect(total(after, 'svc_db_statement_duration_seconds') - total(before, 'svc_db_statement_duration_seconds')).toBeGreaterThan(10);
    });

    it('counts transactions rolled back', () => {
      expect(total(after, 'svc_db_transactions_rolled_back_total') - total(before, 'svc_db_transactions_rolled_back_total')).toBeGreaterThanOrEqual(1);
    });
  });

  describe('jobs and the outbox (a worker in this process)', () => {
    let w: TestService;
    let seen: MetricFamily[];
    let later: MetricFamily[];
    const fanout = { job: 'webhooks.fanout', outcome: 'succeeded' };
    const drain = { job: 'webhooks.drain', outcome: 'succeeded' };
    // A database of its own: a worker that ran before in this Jest process left its jobs' next runs in the shared
    // one, and Agenda keeps a job's next run (a drain 5 minutes away would not run during this test).
    let db: Awaited<ReturnType<typeof isolatedDatabase>>;

    beforeAll(async () => {
      db = await isolatedDatabase();
      w = await startService({
        ...(db.url ? { DATABASE_URL: db.url } : {}),
        METRICS_PORT: '0',
        WORKER_ENABLED: 'true',
        WORKER_POLL_INTERVAL_MS: '100',
        WORKER_LOCK_LIFETIME_MS: '2000',
        WEBHOOK_TIMEOUT_MS: '1000',
        // Both jobs that fan the outbox out run once at start, then not again during this test.
        WEBHOOK_FANOUT_INTERVAL_MS: '86400000',
        WEBHOOK_DRAIN_INTERVAL_MS: '86400000',
      });
      await w.listen(0, '127.0.0.1');
      const ran = (families: MetricFamily[], labels: Record<string, string>) => total(families, 'svc_job_runs_total', labels) - total(before, 'svc_job_runs_total', labels) >= 1;
      await waitFor(async () => {
        seen = await scrape(w.metrics!.port);
        return ran(seen, fanout) && ran(seen, drain);
      }, 15_000, 'a webhooks.fanout and a webhooks.drain run');
      // A new outbox event (post.created) that no fan-out takes now.
      const owner = await signupUser(w);
      const tribe = await createTribe(w, owner);
      await createPost(w, owner, tribe.id);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      later = await scrape(w.metrics!.port);
    });

    afterAll(async () => {
      await w?.stop();
      await db?.drop();
    });

    it('counts job runs by job name and outcome, and times them', () => {
      expect(family(seen, 'svc_job_runs_total')?.type).toBe('COUNTER');
      expect(total(seen, 'svc_job_duration_seconds', { job: 'webhooks.fanout' })).toBeGreaterThanOrEqual(1);
    });

    it('reports the outbox events waiting and the age of the oldest', () => {
      expect(family(seen, 'svc_outbox_events_waiting')?.type).toBe('GAUGE');
      expect(samples(seen, 'svc_outbox_events_waiting')).toHaveLength(1);
      expect(total(later, 'svc_outbox_events_waiting') - total(seen, 'svc_outbox_events_waiting')).toBeGreaterThanOrEqual(1);
      expect(samples(later, 'svc_outbox_oldest_event_age_seconds')).toHaveLength(1);
      expect(total(later, 'svc_outbox_oldest_event_age_seconds')).toBeGreaterThanOrEqual(1);
    });
  });

  describe('webhook deliveries', () => {
    let h: TestService;
    const receivers: Receiver[] = [];
    let seen: MetricFamily[];
    let later: MetricFamily[];

    beforeAll(async () => {
      // `rebind.example.com` resolves to a public address when registered, to a private one when sent to: refused at dial time.
      const resolver = plantedResolver({ 'rebind.example.com': ['93.184.216.34'] });
      h = await startWebhookService({ resolve: resolver });
      const owner = await signupUser(h);
      const tribe = await createTribe(h, owner);
      const ok = await new Receiver().start();
      const failing = await new Receiver().start();
      failing.behaviour = answer(500);
      receivers.push(ok, failing);
      await registerEndpoint(h, owner, tribe.handle, { url: ok.url('/ok'), events: ['post.created'] }, ok);
      await registerEndpoint(h, owner, tribe.handle, { url: failing.url('/fails'), events: ['post.created'] }, failing);
      await registerEndpoint(h, owner, tribe.handle, { url: 'https://rebind.example.com/hook', events: ['post.created'] });
      resolver.answers['rebind.example.com'] = ['10.9.8.7'];
      await createPost(h, owner, tribe.id);
      seen = await scrape(metricsPort);
      await fanOut(h.deps);
      await drain(h.deps);
      later = await scrape(metricsPort);
    });

    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.stop()));
      await h?.stop();
    });

    it.each(['delivered', 'retried', 'blocked'])('counts a %s attempt', (outcome) => {
      expect(total(later, 'svc_webhook_deliveries_total', { outcome }) - total(seen, 'svc_webhook_deliveries_total', { outcome })).toBeGreaterThanOrEqual(1);
    });

    it('times the attempts', () => {
      expect(family(later, 'svc_webhook_attempt_duration_seconds')?.type).toBe('HISTOGRAM');
      expect(total(later, 'svc_webhook_attempt_duration_seconds') - total(seen, 'svc_webhook_attempt_duration_seconds')).toBeGreaterThanOrEqual(3);
    });

    it('times each delivered delivery from its event (the failing and the blocked ones are not delivered)', () => {
      expect(family(later, 'svc_webhook_delivery_delay_seconds')?.type).toBe('HISTOGRAM');
      expect(total(later, 'svc_webhook_delivery_delay_seconds') - total(seen, 'svc_webhook_delivery_delay_seconds')).toBe(1);
    });
  });

  describe('mail', () => {
    let m: TestService;
    let sink: SmtpSink;
    let seen: MetricFamily[];
    let later: MetricFamily[];
    const queue = (to: string) =>
      m.deps.database.db.transaction((tx) => enqueueMail(tx, { kind: 'digest', to, subject: 'Hello', text: 'Body\n' }));

    beforeAll(async () => {
      sink = await new SmtpSink().start();
      m = await startService({ SMTP_URL: sink.url, MAIL_FROM: 'Tribes <no-reply@tribes.example>' });
      seen = await scrape(metricsPort);
      await queue(`sent-${Date.now()}@example.com`);
      await sendQueuedMail(m.deps);
      sink.refuse = { code: 451, message: 'Try again later' }; // refused at DATA: tried again later
      await queue(`refused-${Date.now()}@example.com`);
      await sendQueuedMail(m.deps);
      later = await scrape(metricsPort);
    });

    afterAll(async () => {
      await m?.stop();
      await sink?.stop();
    });

    it.each(['sent', 'retried'])('counts mail %s', (outcome) => {
      expect(total(later, 'svc_mail_messages_total', { outcome }) - total(seen, 'svc_mail_messages_total', { outcome })).toBeGreaterThanOrEqual(1);
    });
  });

  describe('realtime', () => {
    it('reports the sockets open and the live subscriptions', async () => {
      const user = await signupUser(t);
      const connection = wsConnect(`ws://127.0.0.1:${publicPort}/graphql`, { cookie: user.cookie });
      try {
        await connection.acknowledged;
        const live = subscribe(connection, 'subscription { unreadCountsChanged { notifications messages } }');
        let families: MetricFamily[] = [];
        await waitFor(async () => {
          families = await scrape(metricsPort);
          return total(families, 'svc_realtime_subscriptions') >= 1;
        }, 10_000, 'a live subscription');
        expect(total(families, 'svc_realtime_sockets_open')).toBeGreaterThanOrEqual(1);
        live.stop();
      } finally {
        await connection.dispose();
      }
      await waitFor(async () => total(await scrape(metricsPort), 'svc_realtime_sockets_open') === 0, 10_000, 'the socket closed');
    });
  });

  describe('rate limits', () => {
    let r: TestService;
    let seen: MetricFamily[];
    let later: MetricFamily[];

    beforeAll(async () => {
      r = await startService({ RATE_LIMIT_PER_MINUTE: '1', POSTING_RATE_LIMIT_PER_MINUTE: '1' });
      const owner = await signupUser(r);
      const tribe = await createTribe(r, owner);
      const key = await createKey(r, owner, tribe.handle);
      seen = await scrape(metricsPort);
      expect((await platformGet(r, '/v1/me', key.key)).status).toBe(200);
      expect((await platformGet(r, '/v1/me', key.key)).status).toBe(429);
      await createPost(r, owner, tribe.id);
      await expect(createPost(r, owner, tribe.id)).rejects.toThrow(/RATE_LIMITED/);
      later = await scrape(metricsPort);
    });

    afterAll(async () => {
      await r?.stop();
    });

    it.each(['platform_api_key', 'posting_rate_limited'])('counts refusals of the %s limit', (limit) => {
      expect(total(later, 'svc_rate_limit_refusals_total', { limit }) - total(seen, 'svc_rate_limit_refusals_total', { limit })).toBe(1);
    });
  });

  describe('uploads', () => {
    it('counts uploads stored and refused, by outcome', async () => {
      const user = await signupUser(t);
      const start = await scrape(metricsPort);
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00ff00' } }).png().toBuffer();
      const stored = await t.api.post('/media').set('cookie', user.cookie).field('kind', 'avatar').attach('file', png, { filename: 'a.png', contentType: 'image/png' });
      expect(stored.status).toBe(201);
      const refused = await t.api.post('/media').set('cookie', user.cookie).field('kind', 'avatar').attach('file', Buffer.from('not an image'), { filename: 'a.txt', contentType: 'text/plain' });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const end = await scrape(metricsPort);
      expect(total(end, 'svc_uploads_total', { outcome: 'stored' }) - total(start, 'svc_uploads_total', { outcome: 'stored' })).toBe(1);
      const refusals = total(end, 'svc_uploads_total') - total(start, 'svc_uploads_total') - 1;
      expect(refusals).toBe(1);
      expect(samples(end, 'svc_uploads_total').map((s) => s.labels!.outcome)).toContain(refused.body.error ?? refused.body.code);
    });
  });
});
