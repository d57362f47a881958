import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { grantStaff } from '../subgraphs/platform/index.js';
import { createTribe, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { countOf, failure, gql, ManualClock, ok, startService, type TestService } from './support.js';

const TICKET = 'id subject body category status createdAt updatedAt author { id } community { id } replies { id body fromStaff author { id } }';
const Q = {
  open: `mutation($s: String!, $b: String!, $c: SupportTicketCategory!, $t: ID){ openSupportTicket(subject: $s, body: $b, category: $c, communityId: $t){ ${TICKET} } }`,
  reply: `mutation($id: ID!, $b: String!){ replyToTicket(ticketId: $id, body: $b){ ${TICKET} } }`,
  status: `mutation($id: ID!, $s: SupportTicketStatus!){ setTicketStatus(ticketId: $id, status: $s){ ${TICKET} } }`,
  list: `query($s: SupportTicketStatus, $f: Int, $a: String){ supportTickets(status: $s, first: $f, after: $a){ edges { cursor node { id status } } pageInfo { hasNextPage endCursor } } }`,
  one: `query($id: ID!){ supportTicket(id: $id){ ${TICKET} } }`,
};

describe('support tickets', () => {
  let t: TestService;
  const clock = new ManualClock();
  const tick = () => clock.advance(1_000);
  const open = async (as: TestUser, input: Partial<{ subject: string; body: string; category: string; communityId: string }> = {}) => {
    tick();
    return ok(await gql(t, as, Q.open, { s: input.subject ?? 'Cannot sign in', b: input.body ?? 'It says my password is wrong.', c: input.category ?? 'ACCOUNT', t: input.communityId })).openSupportTicket;
  };
  const reply = (as: TestUser, id: string, body: string) => {
    tick();
    return gql(t, as, Q.reply, { id, b: body });
  };
  const setStatus = (as: TestUser, id: string, status: string) => gql(t, as, Q.status, { id, s: status });
  const listOf = async (as: TestUser, vars: Record<string, unknown> = {}) => ok(await gql(t, as, Q.list, vars)).supportTickets;

  beforeAll(async () => {
    t = await startService({}, clock.clock);
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('openSupportTicket', () => {
    it('opens an OPEN ticket of the caller, about a tribe when one is named', async () => {
      const user = await signupUser(t);
      const tribe = await createTribe(t, user);
      const ticket = await open(user, { subject: '  Billing question ', body: 'Charged twice', category: 'BILLING', communityId: tribe.id });
      expect(ticket).toMatchObject({ subject: 'Billing question', body: 'Charged twice', category: 'BILLING', status: 'OPEN', author: { id: user.id }, community: { id: tribe.id }, replies: [] });
      expect(await countOf(t, sql`select count(*)::int as n from support_tickets where user_id = ${user.id}`)).toBe(1);
    });

    it('refuses anonymous callers, an empty subject, a subject over 200 characters, control characters and an unknown tribe', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, null, Q.open, { s: 'x', b: 'y', c: 'BUG' })).code).toBe('UNAUTHENTICATED');
      expect(failure(await gql(t, user, Q.open, { s: '   ', b: 'y', c: 'BUG' })).reason).toBe('invalid_input');
      expect(failure(await gql(t, user, Q.open, { s: 'x'.repeat(201), b: 'y', c: 'BUG' })).reason).toBe('invalid_input');
      expect(failure(await gql(t, user, Q.open, { s: 'x', b: 'a\u0001b', c: 'BUG' })).code).toBe('BAD_USER_INPUT');
      expect(failure(await gql(t, user, Q.open, { s: 'x', b: 'y', c: 'BUG', t: UNKNOWN_ID })).code).toBe('NOT_FOUND');
      expect(await countOf(t, sql`select count(*)::int as n from support_tickets where user_id = ${user.id}`)).toBe(0);
      // 200 emoji are 200 characters.
      expect((await open(user, { subject: '😀'.repeat(200) })).subject).toHaveLength(400);
    });
  });

  describe('isolation', () => {
    it('shows a user only their own tickets: another user gets NOT_FOUND on reading, replying and setting a status', async () => {
      const [alice, bob] = await Promise.all([signupUser(t), signupUser(t)]);
      const mine = await open(alice);
      await open(bob);
      const list = await listOf(alice);
      expect(list.edges.map((e: any) => e.node.id)).toEqual([mine.id]);
      expect(ok(await gql(t, alice, Q.one, { id: mine.id })).supportTicket.id).toBe(mine.id);
      expect(failure(await gql(t, bob, Q.one, { id: mine.id })).code).toBe('NOT_FOUND');
      expect(failure(await reply(bob, mine.id, 'let me in')).code).toBe('NOT_FOUND');
      expect(failure(await setStatus(bob, mine.id, 'CLOSED')).code).toBe('NOT_FOUND');
      expect(failure(await gql(t, alice, Q.one, { id: UNKNOWN_ID })).code).toBe('NOT_FOUND');
      expect(await countOf(t, sql`select count(*)::int as n from support_ticket_replies where ticket_id = ${mine.id}`)).toBe(0);
      expect(ok(await gql(t, alice, Q.one, { id: mine.id })).supportTicket.status).toBe('OPEN');
    });

    it('refuses a cursor of another user\'s list', async () => {
      const [alice, bob] = await Promise.all([signupUser(t), signupUser(t)]);
      await open(alice);
      await open(alice);
      const page = await listOf(alice, { f: 1 });
      expect(page.pageInfo.hasNextPage).toBe(true);
      expect(failure(await gql(t, bob, Q.list, { f: 1, a: page.pageInfo.endCursor })).reason).toBe('invalid_cursor');
    });
  });

  describe('staff', () => {
    it('shows platform staff every user\'s tickets and any ticket; a plain user still sees only their own', async () => {
      const [alice, bob, staff] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
      await grantStaff(t.deps, staff.email, 'script');
      const a = await open(alice);
      const b = await open(bob, { category: 'ABUSE' });
      const all = (await listOf(staff, { f: 50 })).edges.map((e: any) => e.node.id);
      expect(all).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(all.indexOf(b.id)).toBeLessThan(all.indexOf(a.id));
      expect(ok(await gql(t, staff, Q.one, { id: a.id })).supportTicket.author).toEqual({ id: alice.id });
      expect((await listOf(alice)).edges.map((e: any) => e.node.id)).toEqual([a.id]);
      // A staff cursor is not a user's.
      const page = await listOf(staff, { f: 1 });
      expect(failure(await gql(t, alice, Q.list, { f: 1, a: page.pageInfo.endCursor })).reason).toBe('invalid_cursor');
    });
  });

  describe('supportTickets', () => {
    it('pages the caller\'s tickets newest first and filters by status', async () => {
      const user = await signupUser(t);
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) ids.push((await open(user, { subject: `ticket ${i}` })).id);
      ok(await setStatus(user, ids[1], 'RESOLVED'));
      const first = await listOf(user, { f: 2 });
      expect(first.edges.map((e: any) => e.node.id)).toEqual([ids[4], ids[3]]);
      const second = await listOf(user, { f: 2, a: first.pageInfo.endCursor });
      expect(second.edges.map((e: any) => e.node.id)).toEqual([ids[2], ids[1]]);
      const third = await listOf(user, { f: 2, a: second.pageInfo.endCursor });
      expect(third.edges.map((e: any) => e.node.id)).toEqual([ids[0]]);
      expect(third.pageInfo.hasNextPage).toBe(false);
      expect((await listOf(user, { s: 'RESOLVED' })).edges.map((e: any) => e.node.id)).toEqual([ids[1]]);
      expect((await listOf(user, { s: 'OPEN' })).edges).toHaveLength(4);
      expect(failure(await gql(t, user, Q.list, { f: 51 })).reason).toBe('invalid_first');
    });
  });

  describe('statuses', () => {
    it('lets the author mark a ticket RESOLVED and reopens it by the author\'s reply', async () => {
      const user = await signupUser(t);
      const ticket = await open(user);
      const resolved = ok(await setStatus(user, ticket.id, 'RESOLVED')).setTicketStatus;
      expect(resolved.status).toBe('RESOLVED');
      const replied = ok(await reply(user, ticket.id, 'It happened again.')).replyToTicket;
      expect(replied.status).toBe('OPEN');
      expect(replied.replies).toEqual([expect.objectContaining({ body: 'It happened again.', fromStaff: false, author: { id: user.id } })]);
      expect(new Date(replied.updatedAt).getTime()).toBeGreaterThan(new Date(ticket.updatedAt).getTime());
    });

    it('keeps PENDING and OPEN for support staff: the author may not set them', async () => {
      const user = await signupUser(t);
      const ticket = await open(user);
      expect(failure(await setStatus(user, ticket.id, 'PENDING')).code).toBe('FORBIDDEN');
      ok(await setStatus(user, ticket.id, 'RESOLVED'));
      expect(failure(await setStatus(user, ticket.id, 'OPEN')).code).toBe('FORBIDDEN');
      expect(ok(await gql(t, user, Q.one, { id: ticket.id })).supportTicket.status).toBe('RESOLVED');
    });

    it('takes no reply on a CLOSED ticket and writes nothing', async () => {
      const user = await signupUser(t);
      const ticket = await open(user);
      expect(ok(await setStatus(user, ticket.id, 'CLOSED')).setTicketStatus.status).toBe('CLOSED');
      expect(failure(await reply(user, ticket.id, 'hello?'))).toEqual({ code: 'CONFLICT', reason: 'ticket_closed' });
      expect(failure(await setStatus(user, ticket.id, 'RESOLVED'))).toEqual({ code: 'CONFLICT', reason: 'ticket_closed' });
      expect(await countOf(t, sql`select count(*)::int as n from support_ticket_replies where ticket_id = ${ticket.id}`)).toBe(0);
    });

    it('lets support staff answer: a staff reply makes an OPEN ticket PENDING, the author\'s reply opens it again', async () => {
      const [user, staff] = await Promise.all([signupUser(t), signupUser(t)]);
      await grantStaff(t.deps, staff.email, 'script');
      const ticket = await open(user);
      const pending = ok(await reply(staff, ticket.id, 'Which browser?')).replyToTicket;
      expect(pending.status).toBe('PENDING');
      expect(pending.replies).toEqual([expect.objectContaining({ body: 'Which browser?', fromStaff: true, author: { id: staff.id } })]);
      expect(ok(await reply(user, ticket.id, 'Firefox')).replyToTicket.status).toBe('OPEN');
      expect(ok(await setStatus(staff, ticket.id, 'RESOLVED')).setTicketStatus.status).toBe('RESOLVED');
      expect(ok(await setStatus(staff, ticket.id, 'CLOSED')).setTicketStatus.status).toBe('CLOSED');
      expect(ok(await setStatus(staff, ticket.id, 'OPEN')).setTicketStatus.status).toBe('OPEN');
    });

    it('refuses an empty reply', async () => {
      const user = await signupUser(t);
      const ticket = await open(user);
      expect(failure(await reply(user, ticket.id, '  ')).reason).toBe('invalid_input');
    });
  });
});
