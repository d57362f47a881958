// Issue 32: how long a notification takes to reach the recipient's open socket, with default settings, (1) in one
// process with the worker as `npm start` runs it (the service process of bench/realtime-service.ts with
// WORKER_ENABLED=true), (2) in the split deployment (scripts/split.ts: two gateways, a process per subgraph, two
// workers), the socket on one gateway and the writes through the other. The notifications consumer wakes on the
// outbox's signal (migration 0034); its polled job stays at the default 10 s.
// Measured from the mutation's HTTP response to the `notificationAdded` frame on the recipient's graphql-ws socket:
// a comment on their post (a reply, through the outbox), an @mention in a post (through the outbox) and a direct
// message (written by the mutation itself). Goal: p99 under 1 s, p50 under 100 ms.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { openDeps } from '../server/deps.js';
import { startSplit } from '../scripts/split.js';
import type { AppDeps } from '../subgraphs/kernel/index.js';
import { openSession } from '../subgraphs/identity/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { subscribe, wsConnect } from '../test/ws.js';
import { BENCH_DATABASE_URL, createDatabaseIfMissing, percentile } from './lib.js';

const ROUNDS = 50;
const WRITERS = 10; // each writes ROUNDS / WRITERS comments and posts: under the default 30 a minute

const sleep = (n: number) => new Promise((resolve) => setTimeout(resolve, n));

/**
 * Seeds a recipient and WRITERS members of a new tribe (sessions opened through `deps`, on the service's database),
 * subscribes the recipient's socket at `wsUrl` and times each kind of write sent to `writeBase`.
 */
async function measure(label: string, deps: AppDeps, writeBase: string, wsUrl: string): Promise<void> {
  const gql = async (cookie: string, query: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${writeBase}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ query, variables }) });
    const body = (await res.json()) as { data?: any; errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const tag = randomBytes(4).toString('hex');
  const db = deps.database.db;
  const users = ((await db.execute(sql`insert into users (email, username, display_name)
    select 'nl_' || ${tag} || '_' || i || '@example.com', 'nl_' || ${tag} || '_' || i, 'Nl ' || i from generate_series(0, ${WRITERS}) i
    returning id, username`)) as unknown as { rows: Array<{ id: string; username: string }> }).rows;
  const cookies = await Promise.all(users.map(async (u) => `svc_session=${await openSession(deps, u.id)}`));
  const [recipient, ...writers] = users.map((u, i) => ({ ...u, cookie: cookies[i] }));
  const tribe = (await gql(recipient.cookie, 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }', { i: { name: `Latency ${tag}`, handle: `nl-${tag}` } })).createCommunity;
  // Members for two days: past the new-member post limit (3 in the first 24 hours).
  await db.execute(sql`insert into members (community_id, user_id, role, joined_at)
    select ${tribe.id}::uuid, id, 'member', now() - interval '2 days' from users where username like ${`nl_${tag}_%`} and id <> ${recipient.id}::uuid`);
  const post = (await gql(recipient.cookie, 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }', { c: tribe.id, i: { content: '<p>talk to me</p>' } })).createPost;
  const conversations = await Promise.all(
    writers.map(async (w) => (await gql(w.cookie, 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }', { u: [recipient.id] })).startConversation.id as string),
  );

  const connection = wsConnect(wsUrl, { cookie: recipient.cookie });
  try {
    await connection.acknowledged;
    const received = subscribe(connection, 'subscription { notificationAdded { id kind } }');
    const frames: number[] = [];
    const push = received.events.push.bind(received.events);
    received.events.push = (...items) => {
      frames.push(performance.now());
      return push(...items);
    };
    await sleep(500); // the subscription is routed

    type Writer = (typeof writers)[number];
    const kinds: Record<string, (w: Writer, i: number) => Promise<unknown>> = {
      reply: (w) => gql(w.cookie, 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }', { p: post.id, i: { content: 'a reply' } }),
      mention: (w) => gql(w.cookie, 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }', { c: tribe.id, i: { content: `<p>hey @${recipient.username}</p>` } }),
      message: (w, i) => gql(w.cookie, 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }', { c: conversations[writers.indexOf(w)], b: `message ${i}` }),
    };
    const all: number[] = [];
    for (const [kind, send] of Object.entries(kinds)) {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const before = frames.length;
        await send(writers[i % WRITERS]!, i);
        const answered = performance.now();
        const deadline = answered + 15_000;
        while (frames.length === before && performance.now() < deadline) await sleep(1);
        if (frames.length === before) throw new Error(`no ${kind} notification on the socket 15 s after the mutation's answer (${label})`);
        times.push(Math.max(0, frames[before]! - answered));
        await sleep(20 + Math.random() * 80); // writes spread out, not back to back with the previous push
      }
      all.push(...times);
      console.log(`${label}: notification to socket (${kind}, ${ROUNDS} writes): p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`);
    }
    const p50 = percentile(all, 50);
    const p99 = percentile(all, 99);
    console.log(`${label}: notification to socket p50: ${p50.toFixed(0)} ms, p99: ${p99.toFixed(0)} ms (goal: p50 under 100 ms, p99 under 1000 ms: ${p50 < 100 && p99 < 1000 ? 'MET' : 'NOT MET'})`);
  } finally {
    await connection.dispose();
  }
}

export default async function run(): Promise<void> {
  await createDatabaseIfMissing(BENCH_DATABASE_URL);
  const secret = randomBytes(32).toString('hex');
  const config = loadConfig({ DATABASE_URL: BENCH_DATABASE_URL, JWT_SECRET: secret, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', DATABASE_POOL_SIZE: '2' });
  const { deps, close } = await openDeps(config, { log: pino({ level: 'silent' }) });
  try {
    // (1) One process, the worker in it.
    const child: ChildProcess = fork(fileURLToPath(new URL('./realtime-service.ts', import.meta.url)), [], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      env: { ...process.env, DATABASE_URL: BENCH_DATABASE_URL, JWT_SECRET: secret, WORKER_ENABLED: 'true', NODE_OPTIONS: '' },
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.once('message', (m: any) => (m.type === 'ready' ? resolve(m.port) : reject(new Error('unexpected message'))));
        child.once('exit', (code) => reject(new Error(`service process exited with ${code}`)));
      });
      await measure('one process', deps, `http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/graphql`);
    } finally {
      child.send({ type: 'stop' });
      await new Promise((resolve) => child.once('exit', resolve));
    }

    // (2) The split deployment: the socket on gateway 1, the writes through gateway 2, the consumer in a worker.
    const split = await startSplit({ databaseUrl: BENCH_DATABASE_URL, source: true, env: { JWT_SECRET: secret, LOG_LEVEL: 'silent', COOKIE_SECURE: 'false', NODE_ENV: 'production' } });
    try {
      const [socketGateway, writeGateway] = split.gatewayUrls;
      await measure('split deployment', deps, writeGateway!, `${socketGateway!.replace(/^http/, 'ws')}/graphql`);
    } finally {
      await split.stop();
    }
  } finally {
    await close();
  }
}
