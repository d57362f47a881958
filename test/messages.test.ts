import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { MESSAGE_RATE_LIMITS } from '../subgraphs/engagement/index.js';
import { REALTIME_CHANNEL } from '../subgraphs/realtime/index.js';
import { createTribe, join, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { countOf, failure, gql, ManualClock, ok, sqlRows, startService, TEST_DATABASE_URL, waitFor, type TestService, tamperedCursor } from './support.js';

const MESSAGE = 'id body createdAt editedAt deletedAt author { id } conversation { id }';
const CONVERSATION = `id participants { id } unreadCount updatedAt createdAt lastMessage { id body }`;
const Q = {
  start: `mutation($u: [ID!]!){ startConversation(userIds: $u){ ${CONVERSATION} } }`,
  send: `mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ ${MESSAGE} } }`,
  edit: `mutation($id: ID!, $b: String!){ editMessage(id: $id, body: $b){ ${MESSAGE} } }`,
  del: 'mutation($id: ID!){ deleteMessage(id: $id) }',
  read: 'mutation($c: ID!, $m: ID!){ markConversationRead(conversationId: $c, upToMessageId: $m) }',
  leave: 'mutation($c: ID!){ leaveConversation(conversationId: $c) }',
  block: 'mutation($u: ID!){ blockUser(userId: $u) }',
  unreadNotifications: 'query{ unreadNotificationCount notifications(first: 10, unreadOnly: true){ edges { node { id kind } } } }',
  unblock: 'mutation($u: ID!){ unblockUser(userId: $u) }',
  conversations: `query($f: Int, $a: String){ conversations(first: $f, after: $a){ edges { cursor node { ${CONVERSATION} } } pageInfo { hasNextPage endCursor } } }`,
  conversation: `query($id: ID!){ conversation(id: $id){ ${CONVERSATION} } }`,
  messages: `query($c: ID!, $f: Int, $a: String){ messages(conversationId: $c, first: $f, after: $a){ edges { cursor node { ${MESSAGE} } } pageInfo { hasNextPage endCursor } } }`,
  message: `query($id: ID!){ message(id: $id){ ${MESSAGE} } }`,
};

describe('direct messages', () => {
  let t: TestService;
  const clock = new ManualClock();
  const start = (as: TestUser, users: TestUser[] | string[]) =>
    gql(t, as, Q.start, { u: users.map((u) => (typeof u === 'string' ? u : u.id)) });
  const started = async (as: TestUser, users: TestUser[]) => ok(await start(as, users)).startConversation;
  const send = (as: TestUser, conversationId: string, body: string) => gql(t, as, Q.send, { c: conversationId, b: body });
  const sent = async (as: TestUser, conversationId: string, body: string) => ok(await send(as, conversationId, body)).sendMessage;
  const messagesOf = async (as: TestUser, conversationId: string, first?: number, after?: string) =>
    ok(await gql(t, as, Q.messages, { c: conversationId, f: first, a: after })).messages;
  const conversationsOf = async (as: TestUser, first?: number, after?: string) => ok(await gql(t, as, Q.conversations, { f: first, a: after })).conversations;
  const messageRows = (conversationId: string) => countOf(t, sql`select count(*)::int as n from direct_messages where conversation_id = ${conversationId}`);
  const messageNotifications = (userId: string) =>
    countOf(t, sql`select count(*)::int as n from notifications where user_id = ${userId} and kind = 'message'`);
  /** Moves the service clock by a second, so that each message of a test has its own time. */
  const tick = () => clock.advance(1_000);

  /** `n` users who all belong to one new public tribe. */
  const tribeOf = async (n: number) => {
    const users = await Promise.all(Array.from({ length: n }, () => signupUser(t)));
    const tribe = await createTribe(t, users[0]);
    for (const u of users.slice(1)) await join(t, u, tribe.handle);
    return { users, tribe };
  };

  beforeAll(async () => {
    t = await startService({}, clock.clock);
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('startConversation', () => {
    it('starts a conversation of the caller and 1 to 19 users of a shared tribe, and refuses 21 users', async () => {
      const { users } = await tribeOf(21);
      const [me, ...others] = users;
      const group = await started(me, others.slice(0, 19));
      expect(group.participants.map((p: { id: string }) => p.id).sort()).toEqual([me, ...others.slice(0, 19)].map((u) => u.id).sort());
      expect(group).toMatchObject({ unreadCount: 0, lastMessage: null });
      expect(failure(await start(me, others))).toEqual({ code: 'BAD_USER_INPUT', reason: 'too_many_participants' });
      const pair = await started(me, [others[0]]);
      expect(pair.participants.map((p: { id: string }) => p.id).sort()).toEqual([me.id, others[0].id].sort());
      expect(await countOf(t, sql`select count(*)::int as n from conversations where created_by = ${me.id}`)).toBe(2);
    });

    it('returns the existing 1:1 conversation to either side, also when both start it at once', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const results = await Promise.all([start(a, [b]), start(b, [a]), start(a, [b, b]), start(b, [a]), start(a, [b]), start(b, [a, b])]);
      const ids = results.map((r) => ok(r).startConversation.id);
      expect(new Set(ids).size).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from conversations where created_by in (${a.id}, ${b.id})`)).toBe(1);
      expect((await started(a, [b])).id).toBe(ids[0]);
    });

    it('refuses the caller alone, an empty list and ids that are not user ids', async () => {
      const { users: [a] } = await tribeOf(1);
      expect(failure(await start(a, [a]))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_participants' });
      expect(failure(await start(a, []))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_participants' });
      expect(failure(await start(a, ['nope']))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(failure(await gql(t, null, Q.start, { u: [a.id] }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
    });

    it('refuses users who share no tribe with the others (no_shared_tribe), and unknown users alike', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { users: [c] } = await tribeOf(1);
      const before = await countOf(t, sql`select count(*)::int as n from conversations where created_by = ${a.id}`);
      expect(failure(await start(a, [c]))).toEqual({ code: 'BAD_USER_INPUT', reason: 'no_shared_tribe' });
      expect(failure(await start(a, [b, c]))).toEqual({ code: 'BAD_USER_INPUT', reason: 'no_shared_tribe' });
      expect(failure(await start(a, [UNKNOWN_ID]))).toEqual({ code: 'BAD_USER_INPUT', reason: 'no_shared_tribe' });
      expect(await countOf(t, sql`select count(*)::int as n from conversations where created_by = ${a.id}`)).toBe(before);
      // c joins a's tribe: now they share one.
      const tribe = await createTribe(t, a);
      await join(t, c, tribe.handle);
      expect((await started(a, [c])).participants).toHaveLength(2);
    });
  });

  describe('sendMessage, editMessage, deleteMessage', () => {
    it('sends plain text as written (links and markup kept as text) and shows it to every participant', async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const conversation = await started(a, [b, c]);
      const body = 'See https://example.com/?q=1&x=<b>bold</b> 🙂\nline two';
      tick();
      const message = await sent(a, conversation.id, body);
      expect(message).toMatchObject({ body, editedAt: null, deletedAt: null, author: { id: a.id }, conversation: { id: conversation.id } });
      for (const who of [b, c]) {
        expect(ok(await gql(t, who, Q.message, { id: message.id })).message.body).toBe(body);
        expect(ok(await gql(t, who, Q.conversation, { id: conversation.id })).conversation).toMatchObject({
          lastMessage: { id: message.id, body },
          unreadCount: 1,
          updatedAt: message.createdAt,
        });
      }
      expect(ok(await gql(t, a, Q.conversation, { id: conversation.id })).conversation.unreadCount).toBe(0);
      expect(await messageNotifications(b.id)).toBe(1);
      expect(await messageNotifications(a.id)).toBe(0);
    });

    it('accepts 4,000 characters (emoji count one each) and refuses 4,001, empty and blank bodies, writing nothing', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      expect((await sent(a, id, '🙂'.repeat(4_000))).body).toHaveLength(8_000);
      expect((await sent(a, id, 'x'.repeat(4_000))).body).toHaveLength(4_000);
      for (const body of ['x'.repeat(4_001), '🙂'.repeat(4_001), '', '   \n ']) {
        expect(failure(await send(a, id, body))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      }
      expect(failure(await send(a, id, 'bell\u0007'))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_text' });
      expect(await messageRows(id)).toBe(2);
    });

    it('edits and deletes only the caller’s own messages; a deleted one stays as a tombstone', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      tick();
      const first = await sent(a, id, 'first');
      tick();
      const second = await sent(b, id, 'second');
      tick();
      const edited = ok(await gql(t, a, Q.edit, { id: first.id, b: 'first, edited' })).editMessage;
      expect(edited).toMatchObject({ id: first.id, body: 'first, edited', deletedAt: null });
      expect(edited.editedAt).toBe(clock.current.toISOString());
      expect(failure(await gql(t, b, Q.edit, { id: first.id, b: 'hijack' }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(failure(await gql(t, a, Q.del, { id: second.id }))).toEqual({ code: 'FORBIDDEN', reason: 'forbidden' });
      expect(ok(await gql(t, b, Q.del, { id: second.id })).deleteMessage).toBe(true);
      expect(ok(await gql(t, b, Q.del, { id: second.id })).deleteMessage).toBe(false);
      const page = await messagesOf(a, id);
      expect(page.edges.map((e: any) => [e.node.id, e.node.body, e.node.deletedAt !== null])).toEqual([
        [second.id, null, true],
        [first.id, 'first, edited', false],
      ]);
      expect(failure(await gql(t, b, Q.edit, { id: second.id, b: 'back' }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      const rows = await sqlRows(t, sql`select body, deleted_at from direct_messages where id = ${second.id}`);
      expect(rows[0].body).toBeNull();
      expect(rows[0].deleted_at).not.toBeNull();
      // The tombstone no longer counts as unread for a.
      expect(ok(await gql(t, a, Q.conversation, { id })).conversation.unreadCount).toBe(0);
    });
  });

  describe('conversations and messages', () => {
    it('lists conversations by latest message with unread counts, in keyset pages', async () => {
      const { users: [a, b, c, d] } = await tribeOf(4);
      const ab = await started(a, [b]);
      tick();
      const ac = await started(a, [c]);
      tick();
      const abcd = await started(a, [b, c, d]);
      tick();
      await sent(b, ab.id, 'one');
      tick();
      await sent(b, ab.id, 'two');
      tick();
      await sent(c, abcd.id, 'hello all');
      const all = await conversationsOf(a);
      expect(all.edges.map((e: any) => [e.node.id, e.node.unreadCount, e.node.lastMessage?.body ?? null])).toEqual([
        [abcd.id, 1, 'hello all'],
        [ab.id, 2, 'two'],
        [ac.id, 0, null],
      ]);
      const first = await conversationsOf(a, 2);
      expect(first.pageInfo.hasNextPage).toBe(true);
      const rest = await conversationsOf(a, 2, first.pageInfo.endCursor);
      expect([...first.edges, ...rest.edges].map((e: any) => e.node.id)).toEqual([abcd.id, ab.id, ac.id]);
      expect(rest.pageInfo).toEqual({ hasNextPage: false, endCursor: rest.edges[0].cursor });
      // b's list: only what b takes part in.
      expect((await conversationsOf(b)).edges.map((e: any) => e.node.id)).toEqual([abcd.id, ab.id]);
    });

    it('pages messages newest first, and marks a conversation read up to a message (never back)', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      const sentIds: string[] = [];
      for (let i = 1; i <= 5; i += 1) {
        tick();
        sentIds.push((await sent(a, id, `m${i}`)).id);
      }
      const page1 = await messagesOf(b, id, 2);
      const page2 = await messagesOf(b, id, 2, page1.pageInfo.endCursor);
      const page3 = await messagesOf(b, id, 2, page2.pageInfo.endCursor);
      expect([page1, page2, page3].flatMap((p) => p.edges.map((e: any) => e.node.body))).toEqual(['m5', 'm4', 'm3', 'm2', 'm1']);
      expect([page1.pageInfo.hasNextPage, page2.pageInfo.hasNextPage, page3.pageInfo.hasNextPage]).toEqual([true, true, false]);

      const unread = async () => ok(await gql(t, b, Q.conversation, { id })).conversation.unreadCount;
      expect(await unread()).toBe(5);
      expect(ok(await gql(t, b, Q.read, { c: id, m: sentIds[2] })).markConversationRead).toBe(true);
      expect(await unread()).toBe(2);
      expect(ok(await gql(t, b, Q.read, { c: id, m: sentIds[0] })).markConversationRead).toBe(false);
      expect(await unread()).toBe(2);
      expect(ok(await gql(t, b, Q.read, { c: id, m: sentIds[4] })).markConversationRead).toBe(true);
      expect(await unread()).toBe(0);
      // A message of another conversation is not a read mark here.
      const { users: [x] } = await tribeOf(1);
      const tribe = await createTribe(t, x);
      await join(t, b, tribe.handle);
      const other = await started(x, [b]);
      const elsewhere = await sent(x, other.id, 'elsewhere');
      expect(failure(await gql(t, b, Q.read, { c: id, m: elsewhere.id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
    });

    it("marks the reader's message notification of the conversation read once read up to the latest message (or on writing), not before", async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      tick();
      const m1 = await sent(a, id, 'one');
      tick();
      const m2 = await sent(a, id, 'two');
      const unreadOfB = async () => ok(await gql(t, b, Q.unreadNotifications));
      const unreadRows = () => countOf(t, sql`select count(*)::int as n from notifications where user_id = ${b.id} and kind = 'message' and conversation_id = ${id} and read_at is null`);
      expect(await unreadOfB()).toMatchObject({ unreadNotificationCount: 1, notifications: { edges: [{ node: { kind: 'message' } }] } });
      // Read up to the first message only: the second is still unread, so is the notification.
      expect(ok(await gql(t, b, Q.read, { c: id, m: m1.id })).markConversationRead).toBe(true);
      expect((await unreadOfB()).unreadNotificationCount).toBe(1);
      tick();
      expect(ok(await gql(t, b, Q.read, { c: id, m: m2.id })).markConversationRead).toBe(true);
      expect(await unreadOfB()).toEqual({ unreadNotificationCount: 0, notifications: { edges: [] } });
      expect(await unreadRows()).toBe(0);
      expect(await messageNotifications(b.id)).toBe(1);
      // A new message notifies again; b's reply reads the conversation up to it, and the notification with it.
      tick();
      await sent(a, id, 'three');
      expect((await unreadOfB()).unreadNotificationCount).toBe(1);
      tick();
      await sent(b, id, 'reply');
      expect((await unreadOfB()).unreadNotificationCount).toBe(0);
      expect(await unreadRows()).toBe(0);
      // The other conversation's notification is left alone.
      const { users: [x] } = await tribeOf(1);
      const tribe = await createTribe(t, x);
      await join(t, b, tribe.handle);
      const other = await started(x, [b]);
      tick();
      await sent(x, other.id, 'elsewhere');
      tick();
      await sent(a, id, 'four');
      const four = (await messagesOf(b, id, 1)).edges[0].node;
      ok(await gql(t, b, Q.read, { c: id, m: four.id }));
      expect(await unreadOfB()).toMatchObject({ unreadNotificationCount: 1 });
      expect(await countOf(t, sql`select count(*)::int as n from notifications where user_id = ${b.id} and read_at is null and conversation_id = ${other.id}`)).toBe(1);
    });

    it('numbers concurrent sends of both sides without gaps, and lists them in that order', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      tick();
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i % 2 ? b : a, id, `c${i}`)));
      for (const r of results) expect(r.errors).toBeUndefined();
      const rows = await sqlRows<{ seq: number; id: string }>(t, sql`select seq::int as seq, id from direct_messages where conversation_id = ${id} order by seq`);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      const listed = [...(await messagesOf(a, id, 10)).edges, ...(await messagesOf(a, id, 10, (await messagesOf(a, id, 10)).pageInfo.endCursor)).edges];
      expect(listed.map((e: any) => e.node.id)).toEqual(rows.map((r) => r.id).reverse());
    });

    it("refuses a cursor of another list (another conversation's, the conversations list's, or changed) with invalid_cursor", async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const ab = await started(a, [b]);
      const ac = await started(a, [c]);
      for (const body of ['1', '2']) {
        tick();
        await sent(a, ab.id, body);
        await sent(a, ac.id, body);
      }
      const abCursor = (await messagesOf(a, ab.id, 1)).pageInfo.endCursor;
      const listCursor = (await conversationsOf(a, 1)).pageInfo.endCursor;
      const bListCursor = (await conversationsOf(b, 1)).pageInfo.endCursor;
      const invalidCursor = { code: 'BAD_USER_INPUT', reason: 'invalid_cursor' };
      expect(failure(await gql(t, a, Q.messages, { c: ac.id, a: abCursor }))).toEqual(invalidCursor);
      expect(failure(await gql(t, a, Q.messages, { c: ab.id, a: listCursor }))).toEqual(invalidCursor);
      expect(failure(await gql(t, a, Q.conversations, { a: abCursor }))).toEqual(invalidCursor);
      expect(failure(await gql(t, a, Q.conversations, { a: bListCursor }))).toEqual(invalidCursor);
      expect(failure(await gql(t, a, Q.messages, { c: ab.id, a: tamperedCursor(abCursor) }))).toEqual(invalidCursor);
    });
  });

  describe('a page of conversations', () => {
    it('costs the same number of SQL statements at first: 3 and first: 12 (participants, last message, unread counts)', async () => {
      const { users } = await tribeOf(13);
      const [me, ...others] = users;
      for (const [i, other] of others.entries()) {
        const conversation = await started(me, i % 4 === 0 ? [other, others[(i + 1) % others.length]] : [other]);
        tick();
        await sent(other, conversation.id, `hello ${i}`);
      }
      const page = `query($f: Int){ conversations(first: $f){ edges { node { id unreadCount updatedAt participants { id username }
        lastMessage { id body author { id username } conversation { id } } } } } }`;
      const statements = async (first: number) => {
        const before = t.deps.database.stats.statements;
        const edges = ok(await gql(t, me, page, { f: first })).conversations.edges;
        expect(edges).toHaveLength(first);
        for (const e of edges) {
          expect(e.node.unreadCount).toBeGreaterThanOrEqual(1);
          expect(e.node.participants.every((p: any) => p.username)).toBe(true);
          expect(e.node.lastMessage.author.username).toBeTruthy();
          expect(e.node.lastMessage.conversation.id).toBe(e.node.id);
        }
        return t.deps.database.stats.statements - before;
      };
      await statements(12); // the first page also reads the users, remembered from then on
      const s3 = await statements(3);
      const s12 = await statements(12);
      expect(s12).toBe(s3);
      expect(s3).toBeLessThanOrEqual(10);
    });
  });

  describe('tribe isolation', () => {
    it('shows a conversation and its messages to current participants only: null or NOT_FOUND for anyone else', async () => {
      const { users: [a, b, outsider] } = await tribeOf(3);
      const { id } = await started(a, [b]);
      const message = await sent(a, id, 'just us');
      const notFound = { code: 'NOT_FOUND', reason: 'not_found' };
      expect(ok(await gql(t, outsider, Q.conversation, { id })).conversation).toBeNull();
      expect(ok(await gql(t, outsider, Q.message, { id: message.id })).message).toBeNull();
      expect(ok(await gql(t, outsider, Q.conversation, { id: UNKNOWN_ID })).conversation).toBeNull();
      expect(failure(await gql(t, outsider, Q.messages, { c: id }))).toEqual(notFound);
      expect(failure(await gql(t, outsider, Q.messages, { c: UNKNOWN_ID }))).toEqual(notFound);
      expect(failure(await send(outsider, id, 'let me in'))).toEqual(notFound);
      expect(failure(await gql(t, outsider, Q.edit, { id: message.id, b: 'x' }))).toEqual(notFound);
      expect(failure(await gql(t, outsider, Q.del, { id: message.id }))).toEqual(notFound);
      expect(failure(await gql(t, outsider, Q.read, { c: id, m: message.id }))).toEqual(notFound);
      expect(failure(await gql(t, outsider, Q.leave, { c: id }))).toEqual(notFound);
      expect((await conversationsOf(outsider)).edges).toEqual([]);
      expect(failure(await gql(t, null, Q.conversation, { id }))).toEqual({ code: 'UNAUTHENTICATED', reason: 'unauthorized' });
      expect(await messageRows(id)).toBe(1);
      expect(ok(await gql(t, a, Q.message, { id: message.id })).message.body).toBe('just us');
    });
  });

  describe('leaveConversation', () => {
    it('takes a group away from who left at once; the others carry on', async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const { id } = await started(a, [b, c]);
      const before = await sent(a, id, 'before');
      expect(ok(await gql(t, c, Q.leave, { c: id })).leaveConversation).toBe(true);
      expect(ok(await gql(t, c, Q.conversation, { id })).conversation).toBeNull();
      expect(ok(await gql(t, c, Q.message, { id: before.id })).message).toBeNull();
      expect(failure(await send(c, id, 'back?'))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      expect(failure(await gql(t, c, Q.leave, { c: id }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      tick();
      await sent(b, id, 'after');
      expect(ok(await gql(t, a, Q.conversation, { id })).conversation.participants.map((p: any) => p.id).sort()).toEqual([a.id, b.id].sort());
      expect(ok(await gql(t, c, Q.conversation, { id })).conversation).toBeNull();
      expect((await conversationsOf(c)).edges).toEqual([]);
    });

    it("removes the leaver's notifications of the conversation (read or unread) with it, and no one else's", async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const group = await started(a, [b, c]);
      const pair = await started(a, [c]);
      tick();
      await sent(a, group.id, 'to the group');
      tick();
      await sent(a, pair.id, 'just you');
      const unreadCount = async (who: TestUser) => ok(await gql(t, who, Q.unreadNotifications)).unreadNotificationCount;
      expect(await unreadCount(c)).toBe(2);
      expect(ok(await gql(t, c, Q.leave, { c: group.id })).leaveConversation).toBe(true);
      expect(await countOf(t, sql`select count(*)::int as n from notifications where user_id = ${c.id} and conversation_id = ${group.id}`)).toBe(0);
      expect(await unreadCount(c)).toBe(1);
      expect(ok(await gql(t, c, Q.unreadNotifications)).notifications.edges).toHaveLength(1);
      expect(await unreadCount(b)).toBe(1);
      // A read one goes too (1:1): the leaver has nothing left of it; a new message brings them back, notified again.
      const last = (await messagesOf(c, pair.id, 1)).edges[0].node;
      ok(await gql(t, c, Q.read, { c: pair.id, m: last.id }));
      expect(await countOf(t, sql`select count(*)::int as n from notifications where user_id = ${c.id} and conversation_id = ${pair.id} and read_at is not null`)).toBe(1);
      expect(ok(await gql(t, c, Q.leave, { c: pair.id })).leaveConversation).toBe(true);
      expect(await countOf(t, sql`select count(*)::int as n from notifications where user_id = ${c.id}`)).toBe(0);
      tick();
      await sent(a, pair.id, 'come back');
      expect(await unreadCount(c)).toBe(1);
    });

    it('hides a 1:1 conversation from who left until the other side writes again (or they start it again)', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      tick();
      await sent(a, id, 'hi');
      expect(ok(await gql(t, b, Q.leave, { c: id })).leaveConversation).toBe(true);
      expect(ok(await gql(t, b, Q.conversation, { id })).conversation).toBeNull();
      expect(ok(await gql(t, a, Q.conversation, { id })).conversation.participants.map((p: any) => p.id)).toEqual([a.id]);
      tick();
      await sent(a, id, 'are you there?');
      const back = ok(await gql(t, b, Q.conversation, { id })).conversation;
      expect(back).toMatchObject({ unreadCount: 1, lastMessage: { body: 'are you there?' } });
      expect(ok(await gql(t, b, Q.leave, { c: id })).leaveConversation).toBe(true);
      expect((await started(b, [a])).id).toBe(id);
      expect((await messagesOf(b, id)).edges.map((e: any) => e.node.body)).toEqual(['are you there?', 'hi']);
    });
  });

  describe('blockUser', () => {
    it('stops a 1:1 conversation both ways and refuses starting one, until unblocked', async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      await sent(b, id, 'hello');
      expect(ok(await gql(t, a, Q.block, { u: b.id })).blockUser).toBe(true);
      expect(ok(await gql(t, a, Q.block, { u: b.id })).blockUser).toBe(false);
      const blocked = { code: 'FORBIDDEN', reason: 'blocked' };
      const rows = await messageRows(id);
      expect(failure(await send(b, id, 'why?'))).toEqual(blocked);
      expect(failure(await send(a, id, 'bye'))).toEqual(blocked);
      expect(failure(await start(b, [a]))).toEqual(blocked);
      expect(failure(await start(a, [b]))).toEqual(blocked);
      expect(await messageRows(id)).toBe(rows);
      // The history stays readable to both.
      expect((await messagesOf(b, id)).edges).toHaveLength(1);
      expect(ok(await gql(t, a, Q.unblock, { u: b.id })).unblockUser).toBe(true);
      expect(ok(await gql(t, a, Q.unblock, { u: b.id })).unblockUser).toBe(false);
      await sent(b, id, 'friends again');
      expect((await started(b, [a])).id).toBe(id);
    });

    it('refuses a group that includes who blocked the caller; in an existing group, a blocker is not notified', async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const group = await started(a, [b, c]);
      expect(ok(await gql(t, c, Q.block, { u: a.id })).blockUser).toBe(true);
      expect(failure(await start(a, [b, c]))).toEqual({ code: 'FORBIDDEN', reason: 'blocked' });
      await sent(a, group.id, 'group message');
      expect(await messageNotifications(b.id)).toBe(1);
      expect(await messageNotifications(c.id)).toBe(0);
    });

    it('stops a 1:1 conversation both ways when the other side is the blocker (sends and edits), and refuses a group with a user the caller blocked', async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const { id } = await started(a, [b]);
      const mine = await sent(a, id, 'hello');
      const theirs = await sent(b, id, 'hi');
      expect(ok(await gql(t, b, Q.block, { u: a.id })).blockUser).toBe(true);
      const blocked = { code: 'FORBIDDEN', reason: 'blocked' };
      const rows = await messageRows(id);
      expect(failure(await send(a, id, 'why?'))).toEqual(blocked);
      expect(failure(await send(b, id, 'bye'))).toEqual(blocked);
      expect(failure(await gql(t, a, Q.edit, { id: mine.id, b: 'edited' }))).toEqual(blocked);
      expect(failure(await gql(t, b, Q.edit, { id: theirs.id, b: 'edited' }))).toEqual(blocked);
      expect(failure(await start(a, [b]))).toEqual(blocked);
      expect(failure(await start(b, [a]))).toEqual(blocked);
      expect(failure(await start(b, [a, c]))).toEqual(blocked);
      expect(failure(await start(a, [b, c]))).toEqual(blocked);
      expect(await messageRows(id)).toBe(rows);
      expect((await messagesOf(a, id)).edges.map((e: any) => e.node.body)).toEqual(['hi', 'hello']);
    });

    it('blocks across tribes, refuses blocking oneself and unknown users', async () => {
      const { users: [a] } = await tribeOf(1);
      const { users: [stranger] } = await tribeOf(1);
      expect(ok(await gql(t, a, Q.block, { u: stranger.id })).blockUser).toBe(true);
      expect(failure(await gql(t, a, Q.block, { u: a.id }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_user' });
      expect(failure(await gql(t, a, Q.block, { u: UNKNOWN_ID }))).toEqual({ code: 'NOT_FOUND', reason: 'not_found' });
      expect(await countOf(t, sql`select count(*)::int as n from user_blocks where blocker_id = ${a.id}`)).toBe(1);
    });
  });

  describe('live updates', () => {
    /** Collects every realtime signal committed from now on (a LISTEN of its own, as another process would have). */
    const listen = async () => {
      const signals: Array<Record<string, string>> = [];
      const deliver = (payload: string) => signals.push(JSON.parse(payload));
      if (!TEST_DATABASE_URL) {
        const unlisten = await t.deps.database.pglite!.listen(REALTIME_CHANNEL, deliver);
        return { signals, close: unlisten };
      }
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      client.on('notification', (n) => n.channel === REALTIME_CHANNEL && n.payload && deliver(n.payload));
      await client.query(`listen ${REALTIME_CHANNEL}`);
      return { signals, close: () => client.end() };
    };

    it('announces message, conversation and unread signals (ids only) for each write, and nothing for a refused one', async () => {
      const { users: [a, b, c] } = await tribeOf(3);
      const { id } = await started(a, [b, c]);
      const live = await listen();
      try {
        const ofThis = () => live.signals.filter((s) => s.conversationId === id || [a.id, b.id, c.id].includes(s.userId));
        const message = await sent(a, id, 'live');
        await waitFor(() => ofThis().some((s) => s.topic === 'message'), 5_000, 'the message signal');
        await waitFor(() => ofThis().filter((s) => s.topic === 'unread').length >= 2, 5_000, 'the unread signals');
        expect(ofThis()).toEqual(
          expect.arrayContaining([
            { topic: 'message', conversationId: id, messageId: message.id },
            { topic: 'conversation', conversationId: id },
            { topic: 'unread', userId: b.id },
            { topic: 'unread', userId: c.id },
          ]),
        );
        expect(JSON.stringify(live.signals)).not.toContain('live"');
        live.signals.length = 0;
        ok(await gql(t, b, Q.read, { c: id, m: message.id }));
        await waitFor(() => ofThis().length > 0, 5_000, 'the read-mark signal');
        expect(ofThis()).toEqual([{ topic: 'unread', userId: b.id }]);
        live.signals.length = 0;
        expect(failure(await send(a, id, ''))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
        ok(await gql(t, a, Q.edit, { id: message.id, b: 'edited' }));
        await waitFor(() => ofThis().length >= 2, 5_000, 'the edit signals');
        expect(ofThis()).toEqual([
          { topic: 'message', conversationId: id, messageId: message.id },
          { topic: 'conversation', conversationId: id },
        ]);
      } finally {
        await live.close();
      }
    });
  });

  describe('rate limit', () => {
    it(`refuses the message past ${MESSAGE_RATE_LIMITS[0].max} in ${MESSAGE_RATE_LIMITS[0].windowSeconds} s with RATE_LIMITED, writing nothing`, async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      const { max, windowSeconds } = MESSAGE_RATE_LIMITS[0];
      tick();
      const results = await Promise.all(Array.from({ length: max + 3 }, (_, i) => send(a, id, `burst ${i}`)));
      const refused = results.filter((r) => r.errors);
      expect(results.length - refused.length).toBe(max);
      for (const r of refused) {
        expect(r.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'message_rate_limited', details: { retryAfterSeconds: windowSeconds } });
      }
      expect(await messageRows(id)).toBe(max);
      expect(await countOf(t, sql`select last_seq::int as n from conversations where id = ${id}`)).toBe(max);
      // Another sender is not affected; the sender may write again once the window has passed.
      await sent(b, id, 'my turn');
      clock.advance(windowSeconds * 1000);
      await sent(a, id, 'again');
      expect(await messageRows(id)).toBe(max + 2);
    });

    it(`refuses the message past ${MESSAGE_RATE_LIMITS[1].max} in an hour`, async () => {
      const { users: [a, b] } = await tribeOf(2);
      const { id } = await started(a, [b]);
      const { max } = MESSAGE_RATE_LIMITS[1];
      // The hour's earlier messages, a minute apart and ending a minute ago (the burst window is clear).
      const now = clock.current.getTime();
      await sqlRows(
        t,
        sql`insert into direct_messages (conversation_id, seq, author_id, body, created_at)
            select ${id}, -g, ${a.id}, 'old', ${new Date(now).toISOString()}::timestamptz - g * interval '5 seconds' - interval '1 minute'
            from generate_series(1, ${max}) as g`,
      );
      const refused = await send(a, id, 'one too many');
      expect(refused.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: expect.any(Number) } });
      const retryAfter = refused.errors![0].extensions!.details.retryAfterSeconds as number;
      expect(retryAfter).toBeGreaterThan(3_600 - max * 5 - 60 - 2);
      expect(retryAfter).toBeLessThanOrEqual(3_600 - max * 5 - 60 + 1);
      expect(await messageRows(id)).toBe(max);
    });
  });
});
