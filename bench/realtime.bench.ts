// Issue 12: live delivery over GraphQL subscriptions (WebSocket, graphql-ws). A service process (bench/realtime-
// service.ts, its own process so its memory is its own) holds 2,000 subscribers of one tribe, each signed in by a
// session cookie and subscribed to notificationAdded; 20 of them share a conversation and also subscribe to
// messageAdded. Measured from the mutation's HTTP response to the last subscriber's receipt: (1) sendMessage to the
// 20-user conversation, (2) a new event in the tribe, fanned out to 2,000 members by the notification job (run by this
// process right after the response, as a worker would) and pushed to each. Also: memory per connection of the
// service process (heap + external, and RSS, after a full GC), SQL statements per fan-out chunk and per delivery.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { openDeps } from '../server/deps.js';
import { consumeOutbox, runFanouts } from '../subgraphs/engagement/index.js';
import { openSession } from '../subgraphs/identity/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { subscribe, wsConnect, type Received, type WsConnection } from '../test/ws.js';
import { BENCH_DATABASE_URL, percentile } from './lib.js';

const SUBSCRIBERS = 2_000;
const CONVERSATION = 20;
const MESSAGES = 40;
const EVENTS = 3;

interface Stats {
  heapUsed: number;
  external: number;
  rss: number;
  clients: number;
  subscriptions: number;
  statements: number;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const sleep = (n: number) => new Promise((resolve) => setTimeout(resolve, n));

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export default async function run(): Promise<void> {
  const secret = randomBytes(32).toString('hex');
  const config = loadConfig({ DATABASE_URL: BENCH_DATABASE_URL, JWT_SECRET: secret, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', DATABASE_POOL_SIZE: '5' });
  const { deps, close } = await openDeps(config, { log: pino({ level: 'silent' }) });
  const child: ChildProcess = fork(fileURLToPath(new URL('./realtime-service.ts', import.meta.url)), [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: { ...process.env, DATABASE_URL: BENCH_DATABASE_URL, JWT_SECRET: secret, NODE_OPTIONS: '' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: any) => (m.type === 'ready' ? resolve(m.port) : reject(new Error('unexpected message'))));
    child.once('exit', (code) => reject(new Error(`service process exited with ${code}`)));
  });
  const stats = () =>
    new Promise<Stats>((resolve) => {
      child.once('message', (m: any) => resolve(m));
      child.send({ type: 'stats' });
    });
  const base = `http://127.0.0.1:${port}`;
  const gql = async (cookie: string, query: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ query, variables }) });
    const body = (await res.json()) as { data?: any; errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const connections: WsConnection[] = [];
  try {
    // 2,000 users (seeded in one statement), members of one tribe, each with a session.
    const tag = randomBytes(4).toString('hex');
    const db = deps.database.db;
    const rows = async <T>(q: ReturnType<typeof sql>) => ((await db.execute(q)) as unknown as { rows: T[] }).rows;
    const users = await rows<{ id: string }>(sql`insert into users (email, username, display_name)
      select 'rt_' || ${tag} || '_' || i || '@example.com', 'rt_' || ${tag} || '_' || i, 'Rt ' || i from generate_series(1, ${SUBSCRIBERS}) i
      returning id`);
    const cookies: string[] = [];
    for (let i = 0; i < users.length; i += 100) {
      cookies.push(...(await Promise.all(users.slice(i, i + 100).map(async (u) => `svc_session=${await openSession(deps, u.id)}`))));
    }
    const owner = { id: users[0].id, cookie: cookies[0] };
    const tribe = (await gql(owner.cookie, 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }', { i: { name: `Realtime ${tag}`, handle: `rt-${tag}` } })).createCommunity;
    await db.execute(sql`insert into members (community_id, user_id, role)
      select ${tribe.id}::uuid, id, 'member' from users where username like ${`rt_${tag}_%`} and id <> ${owner.id}::uuid`);
    await consumeOutbox(deps); // the tribe's own events, before measuring
    await runFanouts(deps);
    const talkers = users.slice(0, CONVERSATION);
    const conversation = (await gql(cookies[0], 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }', { u: talkers.slice(1).map((u) => u.id) })).startConversation;

    // 2,000 sockets: notificationAdded each; messageAdded for the 20 in the conversation.
    const before = await stats();
    const notifications: Received[] = [];
    const messages: Received[] = [];
    const receiptTimes = new Map<Received, number[]>();
    const stamp = (r: Received) => {
      const times: number[] = [];
      receiptTimes.set(r, times);
      const push = r.events.push.bind(r.events);
      r.events.push = (...items) => {
        times.push(performance.now());
        return push(...items);
      };
      return r;
    };
    const connectStart = performance.now();
    for (let i = 0; i < SUBSCRIBERS; i += 100) {
      const batch = cookies.slice(i, i + 100).map((cookie) => wsConnect(`ws://127.0.0.1:${port}/graphql`, { cookie }));
      await Promise.all(batch.map((c) => c.acknowledged));
      connections.push(...batch);
    }
    for (const [i, c] of connections.entries()) {
      notifications.push(stamp(subscribe(c, 'subscription { notificationAdded { id kind text } }')));
      if (i < CONVERSATION) messages.push(stamp(subscribe(c, 'subscription($c: ID!) { messageAdded(conversationId: $c) { id body author { username } } }', { c: conversation.id })));
    }
    await waitUntil(async () => (await stats()).subscriptions === SUBSCRIBERS + CONVERSATION, 60_000, 'every subscription routed');
    const connectMs = performance.now() - connectStart;
    const after = await stats();
    console.log(`${SUBSCRIBERS} sockets connected and subscribed in ${(connectMs / 1000).toFixed(1)} s (${after.clients} clients, ${after.subscriptions} subscriptions)`);
    const perConnection = (after.heapUsed + after.external - before.heapUsed - before.external) / SUBSCRIBERS;
    console.log(
      `memory per connection (service process, after GC): heap+external ${(perConnection / 1024).toFixed(1)} KiB, RSS ${((after.rss - before.rss) / SUBSCRIBERS / 1024).toFixed(1)} KiB`,
    );

    // (1) A message to the 20-user conversation: from sendMessage's response to the 20th subscriber's receipt.
    const lastMessage: number[] = [];
    const eachMessage: number[] = [];
    for (let m = 0; m < MESSAGES; m++) {
      const counts = messages.map((r) => r.events.length);
      const sender = m % CONVERSATION; // 2 messages each: under the per-sender rate limit
      await gql(cookies[sender], 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }', { c: conversation.id, b: `bench ${m}` });
      const responded = performance.now();
      await waitUntil(() => messages.every((r, i) => r.events.length > counts[i]), 10_000, 'the message at every participant');
      const times = messages.map((r, i) => receiptTimes.get(r)![counts[i]] - responded);
      eachMessage.push(...times.map((t) => Math.max(0, t)));
      lastMessage.push(Math.max(0, ...times));
    }
    console.log(
      `message to a ${CONVERSATION}-user conversation (${MESSAGES} messages): last receipt after the response p50 ${ms(percentile(lastMessage, 50))} p99 ${ms(percentile(lastMessage, 99))}; each receipt p50 ${ms(percentile(eachMessage, 50))} p99 ${ms(percentile(eachMessage, 99))}`,
    );

    // (2) A new event in the tribe: createEvent's response, the fan-out job, every member's receipt.
    const lastNotification: number[] = [];
    const eachNotification: number[] = [];
    const chunkStatements: number[] = [];
    const jobDone: number[] = [];
    let deliveryStatements = 0;
    for (let e = 0; e < EVENTS; e++) {
      const counts = notifications.map((r) => r.events.length);
      const serviceBefore = (await stats()).statements;
      await gql(owner.cookie, 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }', {
        c: tribe.id,
        i: { title: `Bench ${e}`, eventType: 'online', startsAt: '2031-03-01T18:00:00Z', endsAt: '2031-03-01T19:00:00Z' },
      });
      const responded = performance.now();
      await consumeOutbox(deps);
      for (;;) {
        const s = deps.database.stats.statements;
        const written = await runFanouts(deps, { maxChunks: 1 });
        if (!written) break;
        chunkStatements.push(deps.database.stats.statements - s);
      }
      jobDone.push(performance.now() - responded);
      const expected = notifications.map((_, i) => (i === 0 ? counts[i] : counts[i] + 1)); // the owner created it
      await waitUntil(() => notifications.every((r, i) => r.events.length >= expected[i]), 60_000, 'the notification at every member');
      const times = notifications.flatMap((r, i) => (i === 0 ? [] : [receiptTimes.get(r)![counts[i]] - responded]));
      eachNotification.push(...times);
      lastNotification.push(Math.max(...times));
      deliveryStatements += (await stats()).statements - serviceBefore;
    }
    console.log(
      `tribe-wide notification to ${SUBSCRIBERS - 1} members (${EVENTS} events, fan-out job included): last receipt p50 ${ms(percentile(lastNotification, 50))} p99 ${ms(percentile(lastNotification, 99))}; each receipt p50 ${ms(percentile(eachNotification, 50))} p99 ${ms(percentile(eachNotification, 99))}; the fan-out job itself done after p50 ${ms(percentile(jobDone, 50))}`,
    );
    console.log(
      `SQL statements per fan-out chunk (of up to 1,000): ${[...new Set(chunkStatements)].join(', ')} (${new Set(chunkStatements).size === 1 ? 'EQUAL' : 'DIFFERENT'}); service statements per pushed notification ${(deliveryStatements / (EVENTS * (SUBSCRIBERS - 1))).toFixed(2)} (createEvent included)`,
    );
  } finally {
    await Promise.all(connections.map((c) => c.dispose()));
    child.send({ type: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));
    await close();
  }
}

