import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTribe, join, signupUser } from './factory.js';
import { gql, ok, startPgliteService, waitFor, type TestService } from './support.js';
import { subscribe, wsConnect, type WsConnection } from './ws.js';

/** Live updates on the embedded PGlite: its in-process LISTEN/NOTIFY carries the signals of one process. */
describe('subscriptions on embedded PGlite', () => {
  let t: TestService;
  let url: string;
  const open: WsConnection[] = [];
  beforeAll(async () => {
    t = await startPgliteService();
    url = `ws://127.0.0.1:${await t.listen(0, '127.0.0.1')}/graphql`;
  }, 120_000);
  afterAll(async () => {
    await Promise.all(open.map((c) => c.dispose()));
    await t.stop();
  });

  it('pushes messageAdded and unreadCountsChanged after sendMessage, and frees the socket on close', async () => {
    expect(t.deps.database.kind).toBe('pglite');
    const [a, b] = await Promise.all([signupUser(t), signupUser(t)]);
    const tribe = await createTribe(t, a);
    await join(t, b, tribe.handle);
    const conversation = ok(await gql(t, a, 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }', { u: [b.id] })).startConversation;
    const conn = wsConnect(url, { cookie: b.cookie });
    open.push(conn);
    const messages = subscribe(conn, 'subscription($c: ID!) { messageAdded(conversationId: $c) { body author { id } } }', { c: conversation.id });
    const unread = subscribe(conn, 'subscription { unreadCountsChanged { messages } }');
    await waitFor(() => t.realtime!.subscriptions === 2, 10_000, 'both subscriptions routed');
    ok(await gql(t, a, 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }', { c: conversation.id, b: 'on pglite' }));
    await waitFor(() => messages.events.length === 1 && unread.events.length === 1, 10_000, 'the deliveries');
    expect(messages.events).toEqual([{ messageAdded: { body: 'on pglite', author: { id: a.id } } }]);
    expect(unread.events).toEqual([{ unreadCountsChanged: { messages: 1 } }]);
    await conn.dispose();
    await waitFor(() => t.realtime!.subscriptions === 0 && t.realtime!.clients === 0, 5_000, 'the socket to be freed');
  }, 60_000);
});
