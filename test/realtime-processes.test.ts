import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { createTribe, join, signupUser, type TestUser } from './factory.js';
import { gql, ok, startService, TEST_DATABASE_URL, waitFor, type TestService } from './support.js';
import { subscribe, wsConnect, type WsConnection } from './ws.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const START = 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }';
const SEND = 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }';
const MESSAGES = 'subscription($c: ID!) { messageAdded(conversationId: $c) { id body author { username } } }';

/** Starts `test/fixtures/service-process.ts` on the test database; resolves with the child and its port. */
async function serviceProcess(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/service-process.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(JSON.parse(line).port));
    child.once('exit', (code) => reject(new Error(`the service process exited with ${code} before listening`)));
  });
  return { child, port };
}

/** Real PostgreSQL LISTEN/NOTIFY between processes (PGlite is one process: see realtime-pglite.test.ts). */
(TEST_DATABASE_URL ? describe : describe.skip)('subscriptions across service processes', () => {
  let a: TestService;
  let b: { child: ChildProcess; port: number };
  const open: WsConnection[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startService().then(async (s) => {
        await s.listen(0, '127.0.0.1');
        return s;
      }),
      serviceProcess(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(open.map((c) => c.dispose()));
    b?.child.kill('SIGTERM');
    await a?.stop();
  });

  async function conversationOf(n: number) {
    const users = await Promise.all(Array.from({ length: n }, () => signupUser(a)));
    const tribe = await createTribe(a, users[0]);
    for (const u of users.slice(1)) await join(a, u, tribe.handle);
    const conversation = ok(await gql(a, users[0], START, { u: users.slice(1).map((u) => u.id) })).startConversation as { id: string };
    return { users, conversation };
  }
  /** Sends through process A until the subscription has received something (B's LISTEN is in place by then). */
  async function sendUntilReceived(from: TestUser, conversationId: string, received: { events: unknown[] }): Promise<string[]> {
    const sent: string[] = [];
    await waitFor(async () => {
      if (received.events.length) return true;
      const body = `through A ${sent.length}`;
      ok(await gql(a, from, SEND, { c: conversationId, b: body }));
      sent.push(body);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return received.events.length > 0;
    }, 20_000, 'a message sent through A to arrive at B');
    return sent;
  }

  it('delivers a message sent through process A to a subscriber connected to process B', async () => {
    const { users, conversation } = await conversationOf(2);
    const [sender, reader] = users;
    const onB = wsConnect(`ws://127.0.0.1:${b.port}/graphql`, { cookie: reader.cookie });
    open.push(onB);
    await onB.acknowledged;
    const received = subscribe(onB, MESSAGES, { c: conversation.id });
    const sent = await sendUntilReceived(sender, conversation.id, received);
    const first = (received.events[0] as any).messageAdded;
    expect(sent).toContain(first.body);
    expect(first.author).toEqual({ username: sender.username });
    // And every later one, in order.
    for (const body of ['one', 'two', 'three']) ok(await gql(a, sender, SEND, { c: conversation.id, b: body }));
    const bodies = () => received.events.map((e: any) => e.messageAdded.body);
    await waitFor(() => bodies().at(-1) === 'three', 10_000, 'the three later messages');
    expect(bodies().slice(-3)).toEqual(['one', 'two', 'three']);
    expect(bodies().every((body) => sent.includes(body) || ['one', 'two', 'three'].includes(body))).toBe(true);
    expect(received.error).toBeNull();
  }, 60_000);

  it('closes a socket on process B with 4401 when its session signs out through process A, before any later push', async () => {
    const { users, conversation } = await conversationOf(2);
    const [sender, reader] = users;
    const login = await a.api.post('/auth/login').send({ email: reader.email, password: reader.password });
    const otherCookie = String(login.headers['set-cookie'][0]).split(';')[0];
    const NOTIFICATIONS = 'subscription { notificationAdded { id kind } }';
    const ended = wsConnect(`ws://127.0.0.1:${b.port}/graphql`, { cookie: reader.cookie });
    const kept = wsConnect(`ws://127.0.0.1:${b.port}/graphql`, { cookie: otherCookie });
    open.push(ended, kept);
    await Promise.all([ended.acknowledged, kept.acknowledged]);
    const onEnded = subscribe(ended, NOTIFICATIONS);
    const onKept = subscribe(kept, NOTIFICATIONS);
    await sendUntilReceived(sender, conversation.id, onEnded);
    // The messages sent so far may still be notifying both sessions: wait until neither socket has heard anything new
    // for half a second, so that no push for them arrives after `before` below.
    let heard = -1;
    await waitFor(async () => {
      const now = onEnded.events.length + onKept.events.length;
      const settled = now === heard && onKept.events.length > 0;
      heard = now;
      if (!settled) await new Promise((resolve) => setTimeout(resolve, 500));
      return settled;
    }, 20_000, 'the notifications on both sessions to settle');
    const before = onEnded.events.length;
    expect((await a.api.post('/auth/logout').set('cookie', reader.cookie)).status).toBe(200);
    ok(await gql(a, sender, SEND, { c: conversation.id, b: 'after the sign-out' }));
    const code = await Promise.race([ended.closed.then((c) => c.code), new Promise((resolve) => setTimeout(() => resolve('open'), 20_000).unref())]);
    expect(code).toBe(4401);
    // The other session's socket on B hears the later message's notification; the closed one heard nothing more.
    const keptBefore = onKept.payloads.length;
    ok(await gql(a, sender, SEND, { c: conversation.id, b: 'once more' }));
    await waitFor(() => onKept.payloads.length > keptBefore, 10_000, 'a push to the other session');
    expect(onEnded.events.length).toBe(before);
  }, 60_000);

  it('re-establishes its LISTEN after the connection is cut (as by a database restart), pushes the current unread counts, and delivers again', async () => {
    const { users, conversation } = await conversationOf(2);
    const [sender, reader] = users;
    const conn = wsConnect(`ws://127.0.0.1:${(a.server!.address() as { port: number }).port}/graphql`, { cookie: reader.cookie });
    open.push(conn);
    const received = subscribe(conn, MESSAGES, { c: conversation.id });
    const counts = subscribe(conn, 'subscription { unreadCountsChanged { messages } }');
    await waitFor(() => a.realtime!.subscriptions === 2);
    const before = a.realtime!.listener.reconnects;
    const cut = await a.deps.database.db.execute(
      sql`select pg_terminate_backend(pid) as cut from pg_stat_activity
        where application_name in (${`svc realtime listener ${process.pid}`}, ${`svc realtime listener ${b.child.pid}`}) and datname = current_database()`,
    );
    expect((cut as unknown as { rows: unknown[] }).rows.length).toBe(2); // this process's and B's
    await waitFor(() => a.realtime!.listener.reconnects > before && a.realtime!.listener.listening, 10_000, 'the LISTEN to come back');
    // Signals of the gap are lost: the counts are pushed again at once, unasked.
    await waitFor(() => counts.events.length === 1, 10_000, 'the counts after the reconnect');
    expect(counts.events).toEqual([{ unreadCountsChanged: { messages: 0 } }]);
    ok(await gql(a, sender, SEND, { c: conversation.id, b: 'after the cut' }));
    await waitFor(() => received.events.length === 1, 10_000, 'delivery after the reconnect');
    expect((received.events[0] as any).messageAdded.body).toBe('after the cut');
  }, 60_000);
});
