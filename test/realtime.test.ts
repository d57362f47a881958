import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import WebSocket from 'ws';
import { sql } from 'drizzle-orm';
import { runInNewContext } from 'node:vm';
import { consumeNotifications, conversationAudience } from '../subgraphs/engagement/index.js';
import { publish } from '../subgraphs/realtime/index.js';
import { attachSubscriptions, CLOSE_TOO_MANY_CONNECTIONS, CLOSE_UNAUTHORIZED, REALTIME_LIMITS } from '../gateway/src/subscriptions.js';
import { webSocketAuth } from '../rest-facade/src/auth.js';
import { accessToken, createTribe, join, signupUser, type TestUser } from './factory.js';
import { gql, ok, startService, waitFor, type TestService } from './support.js';
import { subscribe, wsConnect, type Received, type WsConnection } from './ws.js';

const Q = {
  start: 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }',
  send: 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }',
  leave: 'mutation($c: ID!){ leaveConversation(conversationId: $c) }',
  leaveTribe: 'mutation($h: String!){ leaveCommunity(handle: $h) }',
  createEvent: 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }',
  markAll: 'mutation { markNotificationsRead(all: true) }',
  read: 'mutation($c: ID!, $m: ID!){ markConversationRead(conversationId: $c, upToMessageId: $m) }',
};
const S = {
  notifications: 'subscription { notificationAdded { id kind text conversationId community { id } actors { username } } }',
  unread: 'subscription { unreadCountsChanged { notifications messages } }',
  messages: 'subscription($c: ID!) { messageAdded(conversationId: $c) { id body author { username } conversation { id } } }',
  conversations: 'subscription { conversationUpdated { id lastMessage { body } unreadCount participants { id } } }',
};

describe('GraphQL subscriptions over WebSocket', () => {
  let t: TestService;
  let url: string;
  const open: WsConnection[] = [];
  /** A connection closed at the end of the file (whatever a test left open). */
  const connect = (auth: Parameters<typeof wsConnect>[1]) => {
    const c = wsConnect(url, auth);
    open.push(c);
    return c;
  };
  const live = () => t.realtime!;
  /** Subscribes and waits until the server routes signals to it (one more router entry). */
  const listen = async (connection: WsConnection, query: string, variables: Record<string, unknown> = {}): Promise<Received> => {
    const before = live().subscriptions;
    const received = subscribe(connection, query, variables);
    await waitFor(() => live().subscriptions > before || received.error !== null, 10_000, 'the subscription to be routed');
    return received;
  };

  beforeAll(async () => {
    t = await startService();
    const port = await t.listen(0, '127.0.0.1');
    url = `ws://127.0.0.1:${port}/graphql`;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(open.map((c) => c.dispose()));
    await t.stop();
  });

  /** A tribe of `n` members (the first its owner) and a conversation of all of them started by the first. */
  async function tribeWithConversation(n: number) {
    const users = await Promise.all(Array.from({ length: n }, () => signupUser(t)));
    const tribe = await createTribe(t, users[0]);
    for (const u of users.slice(1)) await join(t, u, tribe.handle);
    const conversation = ok(await gql(t, users[0], Q.start, { u: users.slice(1).map((u) => u.id) })).startConversation as { id: string };
    return { users, tribe, conversation };
  }
  const send = async (from: TestUser, conversationId: string, body: string) => ok(await gql(t, from, Q.send, { c: conversationId, b: body })).sendMessage.id as string;

  describe('authentication', () => {
    it('closes a connection without credentials with 4401', async () => {
      const c = connect({});
      expect((await c.closed).code).toBe(CLOSE_UNAUTHORIZED);
      expect(CLOSE_UNAUTHORIZED).toBe(4401);
    });

    it('closes a connection with a bad, malformed or session (not access) bearer with 4401', async () => {
      const user = await signupUser(t);
      const session = user.cookie.split('=')[1];
      for (const authorization of ['Bearer not-a-jwt', 'Basic abc', 42, `Bearer ${session}`]) {
        const c = connect({ authorization });
        expect((await c.closed).code).toBe(4401);
      }
      // A bearer, even bad, is the credential: a valid cookie beside it does not rescue it.
      expect((await connect({ authorization: 'Bearer nope', cookie: user.cookie }).closed).code).toBe(4401);
    });

    it('closes a connection whose session cookie was ended, and one whose cookie comes from another site, with 4401', async () => {
      const user = await signupUser(t);
      expect((await t.api.post('/auth/logout').set('cookie', user.cookie)).status).toBeLessThan(300);
      expect((await connect({ cookie: user.cookie }).closed).code).toBe(4401);
      const other = await signupUser(t);
      expect((await connect({ cookie: other.cookie, origin: 'https://evil.example' }).closed).code).toBe(4401);
    });

    it('accepts the session cookie (from no Origin or this host) and a resource-API bearer token, as that user', async () => {
      const { users, conversation } = await tribeWithConversation(2);
      const [a, b] = users;
      const byCookie = connect({ cookie: b.cookie, origin: url.replace('ws://', 'http://').replace('/graphql', '') });
      const byBearer = connect({ token: await accessToken(t, b) });
      await Promise.all([byCookie.acknowledged, byBearer.acknowledged]);
      const viaCookie = await listen(byCookie, S.messages, { c: conversation.id });
      const viaBearer = await listen(byBearer, S.messages, { c: conversation.id });
      const id = await send(a, conversation.id, 'hello both');
      await waitFor(() => viaCookie.events.length === 1 && viaBearer.events.length === 1, 10_000, 'both deliveries');
      const expected = { messageAdded: { id, body: 'hello both', author: { username: a.username }, conversation: { id: conversation.id } } };
      expect(viaCookie.events).toEqual([expected]);
      expect(viaBearer.events).toEqual([expected]);
    });
  });

  describe('the credential, later', () => {
    it('closes the socket with 4401 at the next push once its session was ended (credential re-checked before a push)', async () => {
      // A second WebSocket server on the same service, re-checking the credential before every push.
      const server = createServer((_req, res) => res.writeHead(404).end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const strict = await attachSubscriptions(server, {
        app: t.deps,
        graph: t.graph,
        authenticate: webSocketAuth(t.deps),
        participantsOf: conversationAudience,
        limits: { recheckCredentialMs: 0 },
      });
      try {
        const { users, conversation } = await tribeWithConversation(2);
        const [a, b] = users;
        const conn = wsConnect(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, { cookie: b.cookie });
        open.push(conn);
        const received = subscribe(conn, S.messages, { c: conversation.id });
        await waitFor(() => strict.subscriptions === 1);
        await send(a, conversation.id, 'while signed in');
        await waitFor(() => received.events.length === 1);
        expect((await t.api.post('/auth/logout').set('cookie', b.cookie)).status).toBeLessThan(300);
        await send(a, conversation.id, 'after sign-out');
        expect((await conn.closed).code).toBe(4401);
        expect(received.events.map((e) => e.messageAdded.body)).toEqual(['while signed in']);
        await waitFor(() => strict.subscriptions === 0 && strict.clients === 0, 5_000, 'the socket and its route to go');
      } finally {
        await strict.close();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('is documented in the README: the endpoint /graphql, the session cookie, the bearer in connectionParams, 4401', () => {
      const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
      const section = readme.slice(readme.indexOf('## Real time (GraphQL subscriptions over WebSocket)'));
      expect(section.length).toBeLessThan(readme.length);
      for (const fact of ['`ws(s)://<host>/graphql`', 'graphql-transport-ws', 'session cookie', 'connectionParams: { authorization: "Bearer', '**4401**']) {
        expect(section).toContain(fact);
      }
      expect(String(CLOSE_UNAUTHORIZED)).toBe('4401');
    });

    it('answers an upgrade on another path with 404', async () => {
      const res = await new Promise<number>((resolve) => {
        const ws = new WebSocket(url.replace('/graphql', '/elsewhere'), 'graphql-transport-ws');
        ws.on('unexpected-response', (_req, response) => resolve(response.statusCode ?? 0));
        ws.on('error', () => undefined);
      });
      expect(res).toBe(404);
    });
  });

  describe('subscriptions', () => {
    it('pushes messageAdded, conversationUpdated, unreadCountsChanged and notificationAdded after sendMessage', async () => {
      const { users, tribe, conversation } = await tribeWithConversation(3);
      const [a, b, c] = users;
      const conn = connect({ cookie: b.cookie });
      const messages = await listen(conn, S.messages, { c: conversation.id });
      const conversations = await listen(conn, S.conversations);
      const unread = await listen(conn, S.unread);
      const notifications = await listen(conn, S.notifications);
      const id = await send(a, conversation.id, 'first');
      await waitFor(() => messages.events.length === 1 && conversations.events.length === 1 && notifications.events.length === 1 && unread.events.length >= 1);
      expect(messages.events[0].messageAdded).toMatchObject({ id, body: 'first', author: { username: a.username } });
      expect(conversations.events[0].conversationUpdated).toMatchObject({ id: conversation.id, lastMessage: { body: 'first' }, unreadCount: 1 });
      expect(conversations.events[0].conversationUpdated.participants.map((p: any) => p.id).sort()).toEqual([a.id, b.id, c.id].sort());
      expect(notifications.events[0].notificationAdded).toMatchObject({ kind: 'message', conversationId: conversation.id, actors: [{ username: a.username }] });
      await waitFor(() => unread.events.at(-1)!.unreadCountsChanged.messages === 1);
      expect(unread.events.at(-1)).toEqual({ unreadCountsChanged: { notifications: expect.any(Number), messages: 1 } });
      // Marking notifications read changes the counts again.
      ok(await gql(t, b, Q.markAll));
      await waitFor(() => unread.events.at(-1)!.unreadCountsChanged.notifications === 0, 10_000, 'counts after markNotificationsRead');
      // The sender hears nothing about their own message on their notification stream.
      expect(tribe.id).toBeTruthy();
      for (const r of [messages, conversations, unread, notifications]) expect(r.error).toBeNull();
    });

    it('pushes unreadCountsChanged with both counts: a message adds to each, reading the conversation to its end takes both back to 0', async () => {
      const { users, conversation } = await tribeWithConversation(2);
      const [a, b] = users;
      const unread = await listen(connect({ cookie: b.cookie }), S.unread);
      const first = await send(a, conversation.id, 'one');
      await waitFor(() => unread.events.length >= 1 && unread.events.at(-1)!.unreadCountsChanged.messages === 1, 10_000, 'counts after the first message');
      expect(unread.events.at(-1)).toEqual({ unreadCountsChanged: { notifications: 1, messages: 1 } });
      const second = await send(a, conversation.id, 'two');
      await waitFor(() => unread.events.at(-1)!.unreadCountsChanged.messages === 2, 10_000, 'counts after the second message');
      // Unread messages of one conversation fold into one notification.
      expect(unread.events.at(-1)).toEqual({ unreadCountsChanged: { notifications: 1, messages: 2 } });
      ok(await gql(t, b, Q.read, { c: conversation.id, m: first }));
      await waitFor(() => unread.events.at(-1)!.unreadCountsChanged.messages === 1, 10_000, 'counts after reading the first');
      expect(unread.events.at(-1)).toEqual({ unreadCountsChanged: { notifications: 1, messages: 1 } });
      ok(await gql(t, b, Q.read, { c: conversation.id, m: second }));
      await waitFor(() => unread.events.at(-1)!.unreadCountsChanged.messages === 0, 10_000, 'counts after reading to the end');
      expect(unread.events.at(-1)).toEqual({ unreadCountsChanged: { notifications: 0, messages: 0 } });
      expect(unread.error).toBeNull();
    });

    it('pushes notificationAdded for a tribe-wide event to members, and nothing to who left the tribe', async () => {
      const owner = await signupUser(t);
      const [stays, leaves] = await Promise.all([signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, owner);
      await join(t, stays, tribe.handle);
      await join(t, leaves, tribe.handle);
      await consumeNotifications(t.deps);
      const staying = await listen(connect({ cookie: stays.cookie }), S.notifications);
      const leaving = await listen(connect({ cookie: leaves.cookie }), S.notifications);
      const event = (title: string) =>
        gql(t, owner, Q.createEvent, { c: tribe.id, i: { title, eventType: 'online', startsAt: '2031-01-01T18:00:00Z', endsAt: '2031-01-01T19:00:00Z' } });
      ok(await event('Before'));
      await consumeNotifications(t.deps);
      await waitFor(() => staying.events.length === 1 && leaving.events.length === 1, 10_000, 'event_created to both members');
      const before = leaving.events[0].notificationAdded;
      expect(before).toMatchObject({ kind: 'event_created', community: { id: tribe.id } });

      ok(await gql(t, leaves, Q.leaveTribe, { h: tribe.handle }));
      ok(await event('After'));
      await consumeNotifications(t.deps);
      // The notification they got while a member, announced again (an aggregated update), is re-read and not pushed.
      await t.deps.database.db.transaction((tx) => publish(tx, { topic: 'notification', userId: leaves.id, notificationId: before.id }));
      await waitFor(() => staying.events.length === 2, 10_000, 'the second event_created');
      await t.deps.database.db.transaction((tx) => publish(tx, { topic: 'notification', userId: stays.id, notificationId: staying.events[0].notificationAdded.id }));
      await waitFor(() => staying.events.length === 3, 10_000, 'the re-announced notification to the member');
      expect(leaving.events).toHaveLength(1);
    });

    it('stops pushing messageAdded at once to who left the conversation, and ends their subscription with FORBIDDEN', async () => {
      const { users, conversation } = await tribeWithConversation(3);
      const [a, b, c] = users;
      const staying = await listen(connect({ cookie: b.cookie }), S.messages, { c: conversation.id });
      const leaving = await listen(connect({ cookie: c.cookie }), S.messages, { c: conversation.id });
      const updates = await listen(connect({ cookie: c.cookie }), S.conversations);
      await send(a, conversation.id, 'before');
      await waitFor(() => staying.events.length === 1 && leaving.events.length === 1 && updates.events.length === 1);
      ok(await gql(t, c, Q.leave, { c: conversation.id }));
      const routedBefore = live().subscriptions;
      await send(a, conversation.id, 'after');
      await waitFor(() => staying.events.length === 2, 10_000, 'the member to get the second message');
      await waitFor(() => leaving.error !== null, 10_000, 'the leaver subscription to end');
      expect(leaving.events.map((e) => e.messageAdded.body)).toEqual(['before']);
      expect(leaving.error).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'FORBIDDEN', reason: 'not_a_participant' }) })]);
      expect(live().subscriptions).toBe(routedBefore - 1);
      // conversationUpdated is routed to current participants only.
      await send(a, conversation.id, 'later');
      await waitFor(() => staying.events.length === 3);
      expect(updates.events.map((e) => e.conversationUpdated.lastMessage.body)).not.toContain('after');
      expect(updates.events.map((e) => e.conversationUpdated.lastMessage.body)).not.toContain('later');
    });

    it('keeps the subscriber\'s alias, fragments and variables in what it pushes', async () => {
      const { users, conversation } = await tribeWithConversation(2);
      const [a, b] = users;
      const conn = connect({ cookie: b.cookie });
      const query = `subscription Live($c: ID!, $withAuthor: Boolean!) {
          latest: messageAdded(conversationId: $c) { ...Parts author @include(if: $withAuthor) { ...Who } }
        }
        fragment Parts on Message { id text: body }
        fragment Who on User { username }`;
      const withAuthor = await listen(conn, query, { c: conversation.id, withAuthor: true });
      const without = await listen(conn, query, { c: conversation.id, withAuthor: false });
      const id = await send(a, conversation.id, 'shaped');
      await waitFor(() => withAuthor.events.length === 1 && without.events.length === 1);
      expect(withAuthor.events).toEqual([{ latest: { id, text: 'shaped', author: { username: a.username } } }]);
      expect(without.events).toEqual([{ latest: { id, text: 'shaped' } }]);
      const badVariable = subscribe(conn, query, { c: conversation.id, withAuthor: 'yes' });
      await waitFor(() => badVariable.error !== null);
      expect(badVariable.error[0].message).toMatch(/withAuthor/);
    });

    it('refuses messageAdded on a conversation the subscriber is not in (NOT_FOUND) and an unknown field (validation)', async () => {
      const { conversation } = await tribeWithConversation(2);
      const stranger = await signupUser(t);
      const conn = connect({ cookie: stranger.cookie });
      const refused = subscribe(conn, S.messages, { c: conversation.id });
      await waitFor(() => refused.error !== null);
      expect(refused.error[0].extensions.code).toBe('NOT_FOUND');
      const invalid = subscribe(conn, 'subscription { nothingHere }');
      await waitFor(() => invalid.error !== null);
      expect(invalid.error[0].message).toMatch(/nothingHere/);
      const query = subscribe(conn, '{ me { id } }');
      await waitFor(() => query.error !== null);
      expect(query.error[0].extensions.reason).toBe('not_a_subscription');
      expect(live().fields).toEqual(['notificationAdded', 'unreadCountsChanged', 'messageAdded', 'conversationUpdated']);
    });
  });

  describe('limits', () => {
    it(`closes a user's connection beyond ${REALTIME_LIMITS.connectionsPerUser} with ${CLOSE_TOO_MANY_CONNECTIONS}, and accepts one again once another closes`, async () => {
      const user = await signupUser(t);
      const conns = Array.from({ length: REALTIME_LIMITS.connectionsPerUser }, () => connect({ cookie: user.cookie }));
      await Promise.all(conns.map((c) => c.acknowledged));
      const extra = connect({ cookie: user.cookie });
      expect(await extra.closed).toEqual({ code: 4429, reason: 'Too many connections' });
      await conns[0].dispose();
      await conns[0].closed;
      await waitFor(async () => {
        const again = connect({ cookie: user.cookie });
        const first = await Promise.race([again.acknowledged.then(() => 'ack'), again.closed.then(() => 'closed')]);
        return first === 'ack';
      }, 5_000, 'a connection after one closed');
    });

    it(`answers a subscription beyond ${REALTIME_LIMITS.subscriptionsPerSocket} on one connection with RATE_LIMITED`, async () => {
      const user = await signupUser(t);
      const conn = connect({ cookie: user.cookie });
      const subs = [];
      for (let i = 0; i < REALTIME_LIMITS.subscriptionsPerSocket; i++) subs.push(await listen(conn, S.unread));
      const over = subscribe(conn, S.unread);
      await waitFor(() => over.error !== null);
      expect(over.error[0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'too_many_subscriptions' });
      expect(subs.every((s) => s.error === null)).toBe(true);
    });
  });

  describe('resources', () => {
    it('frees a subscription\'s route when the client completes it, the socket staying open', async () => {
      const user = await signupUser(t);
      const conn = connect({ cookie: user.cookie });
      const before = live().subscriptions;
      const unread = await listen(conn, S.unread);
      const notifications = await listen(conn, S.notifications);
      expect(live().subscriptions).toBe(before + 2);
      unread.stop();
      await waitFor(() => live().subscriptions === before + 1, 5_000, 'the completed subscription to go');
      notifications.stop();
      await waitFor(() => live().subscriptions === before, 5_000, 'the second one to go');
      expect(await Promise.race([conn.closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('open'), 200))])).toBe('open');
    });

    it('frees every router entry and socket after 1,000 connect, subscribe, disconnect cycles (heap within a bound)', async () => {
      const { users, conversation } = await tribeWithConversation(2);
      const [a, b] = users;
      const baseClients = live().clients;
      const baseRoutes = live().router.routeCount;
      const baseSubs = live().subscriptions;
      v8.setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void; // the real collector, without a command-line flag
      const heap = () => {
        gc();
        gc();
        return process.memoryUsage().heapUsed;
      };
      const cycle = async () => {
        const conn = wsConnect(url, { cookie: b.cookie });
        await conn.acknowledged;
        subscribe(conn, S.unread);
        subscribe(conn, S.notifications);
        await waitFor(() => live().subscriptions >= baseSubs + 2, 5_000, 'routed');
        await conn.dispose();
        await conn.closed;
      };
      for (let i = 0; i < 50; i++) await cycle(); // warm-up: caches of documents and plans fill once
      await waitFor(() => live().clients === baseClients && live().subscriptions === baseSubs, 5_000, 'warm-up to settle');
      const heapBefore = heap();
      for (let i = 0; i < 1000; i++) await cycle();
      await waitFor(() => live().clients === baseClients && live().subscriptions === baseSubs, 10_000, 'every socket and route to go');
      expect(live().router.routeCount).toBe(baseRoutes);
      // Still one LISTEN connection for the process (on PostgreSQL; PGlite listens in process), one upgrade listener.
      if (t.deps.database.kind === 'postgres') {
        const listeners = await t.deps.database.db.execute(
          sql`select count(*)::int as n from pg_stat_activity where application_name = ${`svc realtime listener ${process.pid}`} and datname = current_database()`,
        );
        expect((listeners as unknown as { rows: Array<{ n: number }> }).rows[0].n).toBe(1);
      }
      expect(t.server!.listenerCount('upgrade')).toBe(1);
      const grown = heap() - heapBefore;
      expect(grown).toBeLessThan(8 * 1024 * 1024); // 1,000 leaked sockets with their subscriptions would be far more
      // The process still delivers.
      const still = await listen(connect({ cookie: b.cookie }), S.messages, { c: conversation.id });
      await send(a, conversation.id, 'still here');
      await waitFor(() => still.events.length === 1);
    }, 240_000);
  });
});
