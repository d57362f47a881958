// OpenTelemetry traces across processes (issue 30, docs/operations.md "How to read a trace"): a web process whose
// gateway calls the subgraphs over HTTP, the subgraphs the flow needs each in its own process, and a worker, all
// exporting OTLP/JSON to a receiver in this test process. One signed-in cross-subgraph query, one post whose webhook is
// delivered and one mail; the spans must form one tree per request, and the delivery and the mail must link back to
// the trace of the request that queued them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { freePorts } from '../scripts/split.js';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';
import { createTribe, registerEndpoint, signupUser, type TestUser } from './factory.js';
import { isolatedDatabase, LOOPBACK_ALLOWED, Receiver, TEST_DATABASE_URL, waitFor, type TestService } from './support.js';

const CA = fileURLToPath(new URL('./fixtures/tls/ca.pem', import.meta.url));
/** The subgraphs the flow below reaches, each in its own process; the others' URLs lead nowhere (never called). */
const REMOTE = ['identity', 'communities', 'content', 'webhooks'] as const;
/**
 * Six processes loading the service at once: well under a minute on an idle 2-core machine, minutes on a busy one
 * (TRACING_TEST_STARTUP_MS to wait longer).
 */
const STARTUP_MS = Number(process.env.TRACING_TEST_STARTUP_MS ?? 240_000);

/** One exported span, flattened from OTLP/JSON with its process's `service.name`. */
interface Exported {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: Array<{ key: string; value: AnyValue }> = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP receiver (`POST /v1/traces`, JSON encoding) keeping every span it is sent. */
class OtlpReceiver {
  readonly spans: Exported[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              this.spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({ traceId: l.traceId, spanId: l.spanId })),
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  trace(traceId: string): Exported[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A W3C `traceparent` this test chooses, so that the request's trace is known in advance. */
const ids = () => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') });
const traceparent = (t: { traceId: string; spanId: string }) => `00-${t.traceId}-${t.spanId}-01`;

/** The chain of parents of `span` within its trace, itself first. */
function ancestry(spans: Exported[], span: Exported): Exported[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let s = byId.get(span.parentSpanId ?? ''); s && chain.length < 50; s = byId.get(s.parentSpanId ?? '')) chain.push(s);
  return chain;
}

if (!TEST_DATABASE_URL) console.warn('tracing-processes.test.ts is skipped: the processes need a PostgreSQL server');
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('OpenTelemetry traces across the web, subgraph and worker processes', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  const otlp = new OtlpReceiver();
  const webhooks = new Receiver();
  const children: Array<{ name: string; child: ChildProcess; lines: string[] }> = [];
  const secret = randomBytes(32).toString('base64url');
  let web: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };

  const start = (name: string, args: string[], env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      env: {
        ...process.env,
        DATABASE_URL: database.url!,
        DATABASE_POOL_SIZE: '3',
        JWT_SECRET: secret,
        INTERNAL_SECRET: secret,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = { name, child, lines: [] as string[] };
    for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => proc.lines.push(line));
    children.push(proc);
    return proc;
  };
  const answers = async (url: string, init: RequestInit = {}, ok = (status: number) => status > 0) => {
    try {
      return ok((await fetch(url, { ...init, signal: AbortSignal.timeout(2000) })).status);
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    database = await isolatedDatabase();
    await Promise.all([otlp.start(), webhooks.start()]);
    const ports = await freePorts(REMOTE.length + 2);
    const [webPort, nowhere] = ports;
    const subgraphPort = Object.fromEntries(REMOTE.map((name, i) => [name, ports[i + 2]]));
    const urls = SUBGRAPH_NAMES.map((n) => `${n}=http://127.0.0.1:${subgraphPort[n] ?? nowhere}/graphql`).join(',');
    const shared = { WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED, NODE_EXTRA_CA_CERTS: CA };
    // All at once (start-up is CPU-bound; the first to take the migration lock applies the migrations).
    const webUrl = `http://127.0.0.1:${webPort}`;
    start('web', ['server/web.ts'], { ...shared, PORT: String(webPort), HOST: '127.0.0.1', SUBGRAPH_URLS: urls, COOKIE_SECURE: 'false' });
    for (const name of REMOTE) start(name, ['server/subgraph.ts', name], { ...shared, PORT: String(subgraphPort[name]), HOST: '127.0.0.1' });
    start('worker', ['server/worker.ts'], { ...shared, WORKER_POLL_INTERVAL_MS: '100', WEBHOOK_FANOUT_INTERVAL_MS: '200', WEBHOOK_DRAIN_INTERVAL_MS: '300', MAIL_SEND_INTERVAL_MS: '200' });
    const ready = (what: string, check: () => Promise<boolean> | boolean) => waitFor(check, STARTUP_MS, what);
    await Promise.all([
      ready('the web process', () => answers(`${webUrl}/readyz`, {}, (s) => s === 200)),
      ...REMOTE.map((name) => ready(`subgraph ${name}`, () => answers(`http://127.0.0.1:${subgraphPort[name]}/graphql`, { method: 'POST' }))),
      ready('the worker', () => children.find((c) => c.name === 'worker')!.lines.some((l) => l.includes('worker started'))),
    ]).catch((error) => {
      for (const c of children) console.error(`${c.name} (exit ${c.child.exitCode}):\n${c.lines.slice(-10).join('\n')}`);
      throw error;
    });
    web = { api: request(webUrl) } as unknown as TestService;
    owner = await signupUser(web);
    tribe = await createTribe(web, owner);
    await registerEndpoint(web, owner, tribe.handle, { url: webhooks.url(), events: ['post.created'] }, webhooks);
  }, STARTUP_MS + 30_000);

  afterAll(async () => {
    await Promise.all(children.map(({ child }) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM')) : undefined)));
    await Promise.all([otlp.stop(), webhooks.stop()]);
    await database?.drop();
  }, 30_000);

  let postTrace: { traceId: string; spanId: string };
  let postId: string;

  it('links the webhook delivery of a post to the trace of the request that wrote it', async () => {
    postTrace = ids();
    const created = await web.api
      .post('/graphql')
      .set('cookie', owner.cookie)
      .set('traceparent', traceparent(postTrace))
      .send({ query: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }', variables: { c: tribe.id, i: { content: '<p>traced</p>' } } });
    expect(created.body.errors).toBeUndefined();
    postId = created.body.data.createPost.id;
    await waitFor(() => webhooks.events.some((e) => e.type === 'post.created'), 60_000, 'the post.created delivery');

    const linked = (name: string) => otlp.spans.find((s) => s.name.startsWith(name) && s.links.some((l) => l.traceId === postTrace.traceId));
    await waitFor(() => !!linked('webhook.deliver') && !!linked('webhooks.fanout'), 30_000, 'the worker spans linked to the post');
    const fanout = linked('webhooks.fanout')!;
    const delivery = linked('webhook.deliver')!;
    for (const span of [fanout, delivery]) {
      expect(span.service).toBe('svc-worker');
      expect(span.traceId).not.toBe(postTrace.traceId); // a trace of its own, linked (not a child)
    }
    expect(delivery).toMatchObject({ kind: 3, attributes: expect.objectContaining({ 'svc.webhook.event': 'post.created', 'http.response.status_code': 200 }) });
    // The link points at a span of the post's trace: the one active in the content subgraph when the event was written.
    const writer = otlp.trace(postTrace.traceId).find((s) => s.spanId === delivery.links[0].spanId);
    expect(writer?.service).toBe('svc-subgraph-content');
    // The fan-out's SQL (the deliveries inserted) is in its trace, below it.
    const fanoutSql = otlp.trace(fanout.traceId).filter((s) => s.attributes['db.system'] === 'postgresql');
    expect(fanoutSql.some((s) => /insert into "webhook_deliveries"/i.test(String(s.attributes['db.statement'])) && s.parentSpanId === fanout.spanId)).toBe(true);
  }, 120_000);

  it('links the sending of a mail to the trace of the request that queued it', async () => {
    const asked = ids();
    const res = await web.api.post('/graphql').set('cookie', owner.cookie).set('traceparent', traceparent(asked)).send({ query: 'mutation { requestEmailVerification }' });
    expect(res.body.data).toEqual({ requestEmailVerification: true });
    const linked = () => otlp.spans.find((s) => s.name === 'mail.send verification' && s.links.some((l) => l.traceId === asked.traceId));
    await waitFor(() => !!linked(), 30_000, 'the mail.send span linked to the request');
    const mail = linked()!;
    expect(mail).toMatchObject({ service: 'svc-worker', attributes: expect.objectContaining({ 'svc.mail.kind': 'verification', 'svc.mail.outcome': 'logged' }) });
    expect(mail.traceId).not.toBe(asked.traceId);
    // The mail was queued by the identity subgraph process, inside the request's trace.
    expect(otlp.trace(asked.traceId).find((s) => s.spanId === mail.links[0].spanId)?.service).toBe('svc-subgraph-identity');
  }, 60_000);

  it('makes one trace of a signed-in cross-subgraph query: HTTP answer, operation, subgraph fetches over HTTP, SQL', async () => {
    const given = ids();
    const res = await web.api
      .post('/graphql')
      .set('cookie', owner.cookie)
      .set('traceparent', traceparent(given))
      .send({ query: 'query TracedPost($id: ID!){ post(id: $id){ id author { username } community { handle } } }', variables: { id: postId } });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.post).toEqual({ id: postId, author: { username: owner.username }, community: { handle: tribe.handle } });

    // Each subgraph answers in its own process: its server span arrives last.
    const serverOf = (service: string) => otlp.trace(given.traceId).find((s) => s.service === service && s.kind === 2);
    await waitFor(() => ['svc-web', 'svc-subgraph-content', 'svc-subgraph-identity', 'svc-subgraph-communities'].every((s) => serverOf(s)), 30_000, 'the spans of every process');
    const spans = otlp.trace(given.traceId);

    // The web process's HTTP answer is the child of the caller's span, and the root of everything else.
    const root = serverOf('svc-web')!;
    expect(root).toMatchObject({ name: 'POST /graphql', parentSpanId: given.spanId, attributes: expect.objectContaining({ 'http.response.status_code': 200, 'http.route': '/graphql' }) });
    const operation = spans.find((s) => s.name === 'query TracedPost')!;
    expect(operation).toMatchObject({ service: 'svc-web', parentSpanId: root.spanId, attributes: expect.objectContaining({ 'graphql.operation.type': 'query' }) });

    // One client span per subgraph fetch below the operation, each the parent of that subgraph process's server span
    // (the `traceparent` it was sent), whose SQL statements are its descendants.
    for (const name of ['content', 'identity', 'communities']) {
      const fetches = spans.filter((s) => s.name === `subgraph ${name}` && s.service === 'svc-web');
      expect(fetches.length).toBeGreaterThanOrEqual(1);
      // Apollo Gateway's own spans (gateway.execute, gateway.fetch) may come between the operation and a fetch.
      for (const f of fetches) {
        expect(f.kind).toBe(3);
        expect(ancestry(spans, f).filter((a) => a.service === 'svc-web' && a !== f).every((a) => a === operation || a === root || a.name.startsWith('gateway.'))).toBe(true);
        expect(ancestry(spans, f)).toContain(operation);
      }
      const server = serverOf(`svc-subgraph-${name}`)!;
      expect(fetches.map((f) => f.spanId)).toContain(server.parentSpanId);
      const sql = spans.filter((s) => s.service === `svc-subgraph-${name}` && s.attributes['db.system'] === 'postgresql');
      // A post is read from the database every time; users and tribes are remembered across requests
      // (rowsByIdRemembered), so the identity and communities subgraphs may answer from memory, without SQL.
      if (name === 'content') {
        expect({ name, statements: sql.length > 0 }).toEqual({ name, statements: true });
        expect(sql.some((s) => /^\s*select\b/i.test(String(s.attributes['db.statement'])))).toBe(true);
      }
      for (const s of sql) {
        expect(s).toMatchObject({ kind: 3, name: expect.stringMatching(/^pg\.query:[A-Z]+$/) });
        expect(ancestry(spans, s)).toContain(server);
      }
    }
    // Every span of the trace hangs from the caller's span: no orphan.
    for (const s of spans) expect(ancestry(spans, s).at(-1)!.parentSpanId).toBe(given.spanId);

    // The web process's log lines of the request carry its trace id and a span id of it.
    const logged = children.find((c) => c.name === 'web')!.lines.filter((l) => l.includes(given.traceId)).map((l) => JSON.parse(l));
    expect(logged.length).toBeGreaterThanOrEqual(1);
    for (const line of logged) expect(spans.map((s) => s.spanId)).toContain(line.span_id);
  }, 120_000);
});
