// Test infrastructure: the service on the test database, databases of one's own, clocks tests move,
// HTTPS webhook receivers that verify every delivery, a DNS resolver with planted answers, waitFor,
// and small clients for SQL, GraphQL and the Platform API. Test data comes from ./factory.ts.
import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql, type SQL } from 'drizzle-orm';
import pg from 'pg';
import { pino } from 'pino';
import request from 'supertest';
import { databaseName, databaseUrl, templateName, workerDatabaseName } from './databases.js';
import { verify, WebhookVerificationError, type WebhookEvent } from '../verifier/src/index.js';
import { createService, type Service } from '../server/service.js';
import { type AppConfig, type Clock, loadConfig } from '../subgraphs/kernel/index.js';
import { systemResolver, type Resolver } from '../subgraphs/webhooks/index.js';

// ---------------------------------------------------------------------------------------------------------
// The service

/** The server's URL chosen by `npm test` (empty: embedded PGlite in memory), whose databases ./databases.ts names. */
const BASE_DATABASE_URL = process.env.SVC_TEST_DATABASE_URL || undefined;

/**
 * This Jest worker's database on the test server (scripts/prepare-test-db.ts made it, migrated), so that files in
 * other workers never share its schema; undefined without a server (embedded PGlite in memory).
 */
export const TEST_DATABASE_URL = BASE_DATABASE_URL && databaseUrl(BASE_DATABASE_URL, workerDatabaseName(BASE_DATABASE_URL, Number(process.env.JEST_WORKER_ID ?? 1)));

export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATABASE_URL: TEST_DATABASE_URL,
    DATA_DIR: 'memory://',
    COOKIE_SECURE: 'false',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123',
    DATABASE_POOL_SIZE: '5',
    // No background worker unless a test asks for one: a worker drains every tribe's deliveries in the database.
    WORKER_ENABLED: 'false',
    // Tests create many posts and comments a second as one user; test/posting-limits.test.ts sets the limit it tests.
    POSTING_RATE_LIMIT_PER_MINUTE: '1000000',
    // Likewise automod's limit on new members' posts (a tribe's default); test/automod.test.ts sets the real one.
    NEW_MEMBER_POST_LIMIT: '1000',
    // Every test signs in from 127.0.0.1, often with wrong passwords on purpose: test/sign-in-throttle.test.ts sets the
    // sign-in limits it tests (their counters are in the database, shared by every file of a worker).
    SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS: '1000000',
    SIGN_IN_FAILURES_PER_ACCOUNT: '1000000',
    SIGN_IN_FAILURES_PER_ADDRESS: '1000000',
    // Every file signs up and signs in many users: argon2id at its cheapest instead of OWASP's cost (a tenth of the
    // suite's CPU went to hashing), except as production, which refuses it; test/app-auth.test.ts checks the default.
    ...(overrides.NODE_ENV === 'production' ? {} : { PASSWORD_HASH_MEMORY_KIB: '64', PASSWORD_HASH_ITERATIONS: '1' }),
    // Files upload many images a minute as one user: test/upload-limits.test.ts sets the upload limits it tests.
    MEDIA_UPLOADS_PER_MINUTE: '1000000',
    MEDIA_DAILY_UPLOAD_MB: '100000000',
    // Files mint many API keys in one tribe: test/concurrency-limits.test.ts sets the cap it tests.
    API_KEYS_PER_TRIBE: '10000',
    // Every file sends GraphQL from 127.0.0.1, anonymous or as a few users, some of it costly on purpose:
    // test/graphql-rate-limit.test.ts sets the GraphQL cost budgets it tests.
    GRAPHQL_COST_MAX_USER: '1000000000',
    GRAPHQL_COST_RESTORE_USER: '1000000000',
    GRAPHQL_COST_MAX_ANONYMOUS: '1000000000',
    GRAPHQL_COST_RESTORE_ANONYMOUS: '1000000000',
    ...overrides,
  });
}

export interface TestService extends Service {
  api: ReturnType<typeof request>;
}

/** The whole service on the test database, with a supertest client. Stop it in afterAll. */
export async function startService(overrides: Record<string, string> = {}, clock?: Clock): Promise<TestService> {
  const service = await createService(testConfig(overrides), { clock, log: pino({ level: 'silent' }) });
  return Object.assign(service, { api: request(service.http) });
}

/** The whole service on its own in-memory PGlite, whatever database the suite runs on. Stop it in afterAll. */
export async function startPgliteService(clock?: Clock): Promise<TestService> {
  const service = await createService({ ...testConfig(), databaseUrl: undefined, dataDir: 'memory://' }, { clock, log: pino({ level: 'silent' }) });
  return Object.assign(service, { api: request(service.http) });
}

/** Allow-list used by webhook tests: the receivers run on loopback. */
export const LOOPBACK_ALLOWED = '127.0.0.1,localhost,::1';

/** The service for webhook tests: a clock, a resolver, loopback receivers allowed, optionally its own database. */
export async function startWebhookService(
  options: { env?: Record<string, string>; clock?: Clock; resolve?: Resolver; databaseUrl?: string } = {},
): Promise<TestService> {
  const env = { WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED, ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}), ...options.env };
  const service = await createService(testConfig(env), {
    clock: options.clock,
    log: pino({ level: 'silent' }),
    webhooks: { resolve: options.resolve },
  });
  return Object.assign(service, { api: request(service.http) });
}

/**
 * A database of this test file's own on the test server (dropped by `drop`), migrated (a clone of the run's
 * template), so that draining, which takes every due delivery in the database, sees no other file's deliveries.
 * `{ empty: true }`: an empty database instead, for a test that migrates it itself. Without a server (PGlite),
 * every service already has its own in-memory database: `url` is undefined.
 */
export async function isolatedDatabase(options: { empty?: boolean } = {}): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  if (!BASE_DATABASE_URL || !TEST_DATABASE_URL) return { url: undefined, drop: async () => undefined };
  const name = `${databaseName(BASE_DATABASE_URL)}_iso_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database "${name}"${options.empty ? '' : ` template "${templateName(BASE_DATABASE_URL)}"`}`);
  return { url: databaseUrl(BASE_DATABASE_URL, name), drop: () => admin(`drop database if exists "${name}" with (force)`) };
}

// ---------------------------------------------------------------------------------------------------------
// Clients: SQL, GraphQL, the Platform and resource APIs

/**
 * A signed cursor (`payload.mac`, kernel/connection.ts) with one character of its MAC changed where all six bits are
 * data: the last base64url character of a 32-byte MAC carries two unused bits, so changing only the end of a cursor can
 * leave the decoded MAC as it was (and the cursor valid), now and then.
 */
export function tamperedCursor(cursor: string): string {
  const at = cursor.indexOf('.') + 11;
  return cursor.slice(0, at) + (cursor[at] === 'A' ? 'B' : 'A') + cursor.slice(at + 1);
}

/** Rows of a SQL query on the service's database. */
export async function sqlRows<T = Record<string, any>>(t: TestService, query: SQL): Promise<T[]> {
  return ((await t.deps.database.db.execute(query)) as unknown as { rows: T[] }).rows;
}

/** The `n` column of the query's first row, as a number (`select count(*)::int as n ...`). */
export async function countOf(t: TestService, query: SQL): Promise<number> {
  return Number((await sqlRows(t, query))[0].n);
}

/** A member's xp and level row. */
export async function memberXp(t: TestService, communityId: string, userId: string) {
  return (await sqlRows(t, sql`select xp, level from members where community_id = ${communityId} and user_id = ${userId}`))[0];
}

/** A member's XP awards of one source, oldest first. */
export async function xpAwards(t: TestService, communityId: string, userId: string, source: string) {
  return sqlRows(
    t,
    sql`select amount, source_key from xp_awards where community_id = ${communityId} and user_id = ${userId} and source = ${source} order by created_at, source_key`,
  );
}

/** The data of a tribe's outbox events of one type, oldest first. */
export async function eventsOf(t: TestService, communityId: string, type: string) {
  return sqlRows(t, sql`select data from outbox_events where community_id = ${communityId} and type = ${type} order by created_at`);
}

/** Runs a GraphQL operation as the given user (a `svc_session` cookie) or anonymously. */
/**
 * A GraphQL answer without the budget every answer reports (`extensions.cost`, which each request lowers): files that
 * compare whole answers compare what they are about; test/graphql-rate-limit.test.ts checks the budget itself.
 */
export function withoutBudget<T>(body: T): T {
  const extensions = (body as { extensions?: Record<string, unknown> } | null)?.extensions;
  if (!extensions || !('cost' in extensions)) return body;
  const { cost: _cost, ...rest } = extensions;
  const { extensions: _extensions, ...answer } = body as Record<string, unknown>;
  return (Object.keys(rest).length ? { ...answer, extensions: rest } : answer) as T;
}

export async function gql(t: TestService, user: { cookie: string } | null, query: string, variables: Record<string, unknown> = {}) {
  const req = t.api.post('/graphql').set('content-type', 'application/json');
  if (user) req.set('cookie', user.cookie);
  const res = await req.send({ query, variables });
  return withoutBudget(res.body) as { data?: any; errors?: Array<{ message: string; extensions?: Record<string, any> }> };
}

export type GqlResult = Awaited<ReturnType<typeof gql>>;

/** The data of a GraphQL result that must have no error. */
export function ok(out: GqlResult) {
  expect(out.errors).toBeUndefined();
  return out.data;
}

/** The `extensions.code` and `extensions.reason` of the only error of a GraphQL result. */
export function failure(out: GqlResult) {
  expect(out.errors).toHaveLength(1);
  const ext = out.errors![0].extensions ?? {};
  return { code: ext.code, reason: ext.reason };
}

/** GET a Platform API path with the key as `Authorization: Bearer`. */
export const platformGet = (t: TestService, path: string, key: string): request.Test => t.api.get(path).set('authorization', `Bearer ${key}`);

/** The resource API's `Authorization` header for an actor's access token. */
export const bearer = (who: { token: string }) => ({ authorization: `Bearer ${who.token}` });

// ---------------------------------------------------------------------------------------------------------
// Time

/** A clock that stands still until a test moves it. */
export class ManualClock {
  constructor(public current = new Date()) {}
  readonly clock: Clock = () => new Date(this.current.getTime());
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
  /** Unix seconds now. */
  get seconds(): number {
    return Math.floor(this.current.getTime() / 1000);
  }
}

/** A clock the test moves: real time plus an offset, so tokens issued "now" stay valid. */
export function movableClock() {
  let offsetMs = 0;
  let held: Date | undefined;
  return {
    now: () => held ?? new Date(Date.now() + offsetMs),
    /** Stops the clock at its current instant until `release` (a window's edge then stays an edge however long a request takes). */
    hold() {
      held = new Date(Date.now() + offsetMs);
      return held;
    },
    release() {
      if (held) offsetMs = held.getTime() - Date.now();
      held = undefined;
    },
    advance(ms: number) {
      offsetMs += ms;
      if (held) held = new Date(held.getTime() + ms);
    },
    advanceDays(days: number) {
      this.advance(days * 24 * 60 * 60 * 1000);
    },
  };
}

/** Polls `check` until it returns true (or throws after `timeoutMs`). */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // Checks again after 1, 2, 4, 8 and 16 ms, then every 25 ms: most conditions hold within a few milliseconds.
  for (let pause = 1; !(await check()); pause = Math.min(pause * 2, 25)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Webhook receivers and DNS

const TLS_DIR = new URL('./fixtures/tls/', import.meta.url);
const tls = (name: string) => readFileSync(new URL(name, TLS_DIR));

/** One request a receiver got, with the verifier's verdict. */
export interface Received {
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The verified event, or null when verification failed (`error` says why). */
  event: WebhookEvent | null;
  error: string | null;
}

/** What the receiver does with a request (after verifying it): answer, hang, or drop the connection. */
export type Behaviour = (received: Received, req: IncomingMessage, res: ServerResponse) => void;

export const answer = (status: number, headers: Record<string, string> = {}): Behaviour => (_r, _req, res) => {
  res.writeHead(status, headers).end(status >= 300 && status < 400 ? '' : '{"received":true}');
};
/** Never answers (the service must give up after its timeout). */
export const hang: Behaviour = () => undefined;
/** Closes the TCP connection without a response. */
export const dropConnection: Behaviour = (_r, req) => req.socket.destroy();

/**
 * An HTTPS receiver built only on `@svc/webhook-verifier`: it reads the raw body, verifies the signature
 * with the endpoint's secret (set once the endpoint exists) and records every request.
 */
export class Receiver {
  readonly received: Received[] = [];
  secret = '';
  behaviour: Behaviour = answer(200);
  private server!: Server;
  port = 0;

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly certificate: 'trusted' | 'untrusted' = 'trusted',
  ) {}

  async start(): Promise<this> {
    const [key, cert] = this.certificate === 'trusted' ? [tls('server-key.pem'), tls('server.pem')] : [tls('untrusted-key.pem'), tls('untrusted.pem')];
    this.server = createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const received: Received = { headers: req.headers, rawBody: raw.toString('utf8'), event: null, error: null };
        try {
          received.event = verify({ payload: raw, headers: req.headers, secret: this.secret, now: this.now });
        } catch (error) {
          received.error = error instanceof WebhookVerificationError ? error.code : String(error);
        }
        this.received.push(received);
        if (received.error) {
          res.writeHead(400).end(JSON.stringify({ error: received.error }));
          return;
        }
        this.behaviour(received, req, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** `https://127.0.0.1:<port><path>` (the certificate covers 127.0.0.1 and localhost). */
  url(path = '/hooks', host = '127.0.0.1'): string {
    return `https://${host}:${this.port}${path}`;
  }

  /** Verified events, in arrival order. */
  get events(): WebhookEvent[] {
    return this.received.flatMap((r) => (r.event ? [r.event] : []));
  }

  /** Requests whose signature did not verify (always expected to be none). */
  get rejected(): Received[] {
    return this.received.filter((r) => r.error);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A resolver with planted answers (host → addresses); other names go to the system resolver. */
export function plantedResolver(answers: Record<string, string[]>): Resolver & { answers: Record<string, string[]> } {
  const resolver = (async (hostname: string) => {
    const planted = resolver.answers[hostname.toLowerCase()];
    if (!planted) return systemResolver(hostname);
    return planted.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
  }) as Resolver & { answers: Record<string, string[]> };
  resolver.answers = { ...answers };
  return resolver;
}
