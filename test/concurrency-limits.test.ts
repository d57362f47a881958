// Issue 29, "Every check-then-write rule holds under concurrency": for each count-based rule (a limit, a quota, a
// capacity, a one-per rule), 20 requests sent at once, then the rows written are counted. Each rule is decided inside
// the transaction that writes, under a lock of its key or a constraint of the database. The new-member post limit's
// test is in test/automod.test.ts ("holds under concurrency"), the wallet's (payout requests racing refunds) in
// test/wallet.test.ts ("20 concurrent attempts over HTTP").
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { TOKENS_PER_WINDOW } from '../subgraphs/identity/email-tokens.service.js';
import { MESSAGE_RATE_LIMITS } from '../subgraphs/engagement/index.js';
import { actor, createTribe, crew, join, signupUser, staffedTribe, unique, type Cast, type TestUser } from './factory.js';
import { answer, bearer, countOf, failure, gql, ok, Receiver, sqlRows, startWebhookService, type GqlResult, type TestService } from './support.js';

const AT_ONCE = 20;
const POSTS_PER_MINUTE = 5;

const Q = {
  createEndpoint: 'mutation($c: ID!, $i: CreateWebhookEndpointInput!){ createWebhookEndpoint(communityId: $c, input: $i){ id } }',
  testEndpoint: 'mutation($c: ID!, $id: ID!){ testWebhookEndpoint(communityId: $c, id: $id){ ok statusCode } }',
  openTicket: 'mutation($s: String!){ openSupportTicket(subject: $s, body: "Help", category: OTHER){ id } }',
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }',
  startConversation: 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }',
  send: 'mutation($id: ID!, $b: String!){ sendMessage(conversationId: $id, body: $b){ id } }',
  verifyEmail: 'mutation { requestEmailVerification }',
  resetPassword: 'mutation($e: String!){ requestPasswordReset(email: $e) }',
  createEvent: 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }',
  register: 'mutation($e: ID!){ registerForEvent(eventId: $e){ status created order { id } } }',
  markPaid: 'mutation($o: ID!){ markOrderPaid(orderId: $o){ id status } }',
  refund: 'mutation($o: ID!, $a: Int){ refundOrder(orderId: $o, amount: $a){ id refundedCents } }',
  react: 'mutation($p: ID!, $k: ReactionKind!){ react(target: { postId: $p }, kind: $k){ total } }',
  joinTribe: 'mutation($h: String!){ joinCommunity(handle: $h){ id } }',
  createCourse: 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }',
  enroll: 'mutation($c: ID!){ enrollCourse(courseId: $c){ status order { id } } }',
  report: 'mutation($c: ID!, $p: ID!){ report(communityId: $c, target: { postId: $p }, reason: SPAM){ id } }',
};

/** Sends `AT_ONCE` copies of a request at the same time. */
const atOnce = (send: (i: number) => Promise<GqlResult>) => Promise.all(Array.from({ length: AT_ONCE }, (_, i) => send(i)));
const granted = (answers: GqlResult[]) => answers.filter((a) => !a.errors);
const refusals = (answers: GqlResult[]) => answers.filter((a) => a.errors).map((a) => failure(a));

describe('count-based rules under concurrency', () => {
  let t: TestService;
  let cast: Cast;
  let receiver: Receiver;

  beforeAll(async () => {
    // The product's defaults, except the posting rate limit (the tests' default lifts it; 5 keeps the test short).
    // Sign-in: the product's 5 failures per account and address (the per-address counter of 127.0.0.1 is shared with the
    // other files of this worker, so it stays lifted).
    t = await startWebhookService({
      env: { API_KEYS_PER_TRIBE: '10', POSTING_RATE_LIMIT_PER_MINUTE: String(POSTS_PER_MINUTE), NEW_MEMBER_POST_LIMIT: '1000', SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS: '5' },
    });
    receiver = await new Receiver().start();
    receiver.behaviour = answer(200);
    cast = await crew(t);
  }, 60_000);
  afterAll(async () => {
    await receiver?.stop();
    await t?.stop();
  });

  describe('webhook endpoints per tribe (WEBHOOK_ENDPOINTS_PER_TRIBE, 16)', () => {
    it(`${AT_ONCE} creations at once write 16; the others are CONFLICT webhook_endpoint_limit naming the number`, async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const answers = await atOnce((i) => gql(t, owner, Q.createEndpoint, { c: tribe.id, i: { url: receiver.url(`/hooks/${i}`), events: ['member.joined'] } }));
      expect(granted(answers)).toHaveLength(16);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 16).fill({ code: 'CONFLICT', reason: 'webhook_endpoint_limit' }));
      expect(answers.find((a) => a.errors)!.errors![0].message).toMatch(/at most 16 webhook endpoints/);
      expect(await countOf(t, sql`select count(*)::int as n from webhook_endpoints where community_id = ${tribe.id}`)).toBe(16);
    });

    it('answers 409 in the envelope of each REST surface; deleting an endpoint makes room for one', async () => {
      const owner = await actor(t);
      const tribe = await createTribe(t, owner);
      const body = (i: number | string) => ({ url: receiver.url(`/cap/${i}`), events: ['member.joined'] });
      const ids: string[] = [];
      for (let i = 0; i < 16; i += 1) ids.push(ok(await gql(t, owner, Q.createEndpoint, { c: tribe.id, i: body(i) })).createWebhookEndpoint.id);
      const control = await t.api.post(`/communities/${tribe.handle}/webhooks`).set('cookie', owner.cookie).send(body('x'));
      expect([control.status, control.body]).toEqual([409, { error: 'webhook_endpoint_limit', message: expect.any(String), requestId: expect.any(String) }]);
      const resource = await t.api.post(`/v1/communities/${tribe.id}/webhooks`).set(bearer(owner)).send(body('y'));
      expect(resource.status).toBe(409);
      expect(resource.body.error).toMatchObject({ code: 'webhook_endpoint_limit', message: expect.stringMatching(/at most 16 webhook endpoints/) });
      const graphql = await gql(t, owner, Q.createEndpoint, { c: tribe.id, i: body('z') });
      expect(graphql.errors![0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'webhook_endpoint_limit', details: { limit: 16 } });
      expect((await t.api.delete(`/communities/${tribe.handle}/webhooks/${ids[0]}`).set('cookie', owner.cookie)).status).toBe(200);
      expect((await t.api.post(`/communities/${tribe.handle}/webhooks`).set('cookie', owner.cookie).send(body('again'))).status).toBe(201);
      expect(await countOf(t, sql`select count(*)::int as n from webhook_endpoints where community_id = ${tribe.id}`)).toBe(16);
    });
  });

  describe('live API keys per tribe (API_KEYS_PER_TRIBE, 10)', () => {
    it(`${AT_ONCE} creations at once write 10; the others are 409 api_key_limit; revoking one makes room for one`, async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const create = (i: number | string) => t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send({ name: `k${i}`, scopes: ['members:read'] });
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => create(i)));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(10);
      expect(answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body])).toEqual(Array(AT_ONCE - 10).fill([409, { error: 'api_key_limit', message: expect.any(String), requestId: expect.any(String) }]));
      const live = sql`select count(*)::int as n from api_keys where community_id = ${tribe.id} and revoked_at is null`;
      expect(await countOf(t, live)).toBe(10);
      const graphql = await gql(t, owner, 'mutation($h: String!){ createApiKey(handle: $h, input: { name: "g", scopes: ["members:read"] }){ id } }', { h: tribe.handle });
      expect(graphql.errors![0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'api_key_limit', details: { limit: 10 } });
      const first = answers.find((a) => a.status === 201)!.body.id as string;
      expect((await t.api.delete(`/communities/${tribe.handle}/api-keys/${first}`).set('cookie', owner.cookie)).status).toBe(200);
      expect((await create('again')).status).toBe(201);
      expect(await countOf(t, live)).toBe(10);
    });
  });

  describe('test pings per tribe (WEBHOOK_TEST_PINGS_PER_MINUTE, 10)', () => {
    it(`${AT_ONCE} pings at once over two endpoints send 10; the others are RATE_LIMITED with Retry-After and send nothing`, async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const ids: string[] = [];
      for (const path of ['/a', '/b']) {
        ids.push(ok(await gql(t, owner, Q.createEndpoint, { c: tribe.id, i: { url: receiver.url(`/ping${path}`), events: ['member.joined'] } })).createWebhookEndpoint.id);
      }
      const sentBefore = receiver.received.length;
      const answers = await atOnce((i) => gql(t, owner, Q.testEndpoint, { c: tribe.id, id: ids[i % 2] }));
      expect(granted(answers)).toHaveLength(10);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 10).fill({ code: 'RATE_LIMITED', reason: 'webhook_test_rate_limited' }));
      const refused = answers.find((a) => a.errors)!.errors![0].extensions as Record<string, any>;
      expect(refused.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.details.retryAfterSeconds).toBeLessThanOrEqual(60);
      expect(receiver.received.length - sentBefore).toBe(10);
      expect(await countOf(t, sql`select count(*)::int as n from webhook_deliveries where community_id = ${tribe.id} and event = 'ping'`)).toBe(10);
      // The control plane answers 429 with Retry-After; another tribe's pings are counted apart.
      const rest = await t.api.post(`/communities/${tribe.handle}/webhooks/${ids[0]}/test`).set('cookie', owner.cookie);
      expect(rest.status).toBe(429);
      expect(rest.body).toEqual({ error: 'webhook_test_rate_limited', message: expect.any(String), requestId: expect.any(String) });
      expect(Number(rest.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const other = await createTribe(t, owner);
      const otherId = ok(await gql(t, owner, Q.createEndpoint, { c: other.id, i: { url: receiver.url('/ping/other'), events: ['member.joined'] } })).createWebhookEndpoint.id;
      // (The receiver refuses the ping's signature, as it knows no secret: the ping was sent all the same.)
      expect(ok(await gql(t, owner, Q.testEndpoint, { c: other.id, id: otherId })).testWebhookEndpoint).toEqual({ ok: false, statusCode: 400 });
    });
  });

  describe('open support tickets per user (SUPPORT_OPEN_TICKETS_PER_USER, 10)', () => {
    it(`with 9 open, ${AT_ONCE} tickets at once write 1; the others are CONFLICT open_ticket_limit`, async () => {
      const user = await signupUser(t);
      // Nine open tickets from yesterday (the hourly limit does not count them).
      await sqlRows(t, sql`insert into support_tickets (user_id, category, subject, body, status, created_at, updated_at)
        select ${user.id}, 'other', 'old ' || g, 'x', case when g % 2 = 0 then 'open' else 'pending' end, now() - interval '1 day', now() - interval '1 day'
          from generate_series(1, 9) g`);
      const answers = await atOnce((i) => gql(t, user, Q.openTicket, { s: `at once ${i}` }));
      expect(granted(answers)).toHaveLength(1);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 1).fill({ code: 'CONFLICT', reason: 'open_ticket_limit' }));
      expect(await countOf(t, sql`select count(*)::int as n from support_tickets where user_id = ${user.id}`)).toBe(10);
    });

    it('counts a reply that would reopen a resolved ticket; resolving or closing one makes room', async () => {
      const user = await signupUser(t);
      const [resolved] = await sqlRows<{ id: string }>(t, sql`insert into support_tickets (user_id, category, subject, body, status, created_at, updated_at)
        values (${user.id}, 'other', 'done', 'x', 'resolved', now() - interval '1 day', now() - interval '1 day') returning id`);
      await sqlRows(t, sql`insert into support_tickets (user_id, category, subject, body, status, created_at, updated_at)
        select ${user.id}, 'other', 'old ' || g, 'x', 'open', now() - interval '1 day', now() - interval '1 day' from generate_series(1, 10) g`);
      const reply = 'mutation($id: ID!){ replyToTicket(ticketId: $id, body: "again"){ status } }';
      expect(failure(await gql(t, user, reply, { id: resolved.id }))).toEqual({ code: 'CONFLICT', reason: 'open_ticket_limit' });
      expect(failure(await gql(t, user, Q.openTicket, { s: 'one more' }))).toEqual({ code: 'CONFLICT', reason: 'open_ticket_limit' });
      expect(await countOf(t, sql`select count(*)::int as n from support_ticket_replies where ticket_id = ${resolved.id}`)).toBe(0);
      const [open] = await sqlRows<{ id: string }>(t, sql`select id from support_tickets where user_id = ${user.id} and status = 'open' limit 1`);
      ok(await gql(t, user, 'mutation($id: ID!){ setTicketStatus(ticketId: $id, status: CLOSED){ status } }', { id: open.id }));
      expect(ok(await gql(t, user, reply, { id: resolved.id })).replyToTicket.status).toBe('OPEN');
    });
  });

  describe('support tickets per hour (SUPPORT_TICKETS_PER_HOUR, 5)', () => {
    it(`${AT_ONCE} tickets at once write 5; the others are RATE_LIMITED support_ticket_rate_limited with Retry-After`, async () => {
      const user = await signupUser(t);
      const answers = await atOnce((i) => gql(t, user, Q.openTicket, { s: `burst ${i}` }));
      expect(granted(answers)).toHaveLength(5);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 5).fill({ code: 'RATE_LIMITED', reason: 'support_ticket_rate_limited' }));
      const details = (answers.find((a) => a.errors)!.errors![0].extensions as Record<string, any>).details;
      expect(details.retryAfterSeconds).toBeGreaterThan(3500);
      expect(await countOf(t, sql`select count(*)::int as n from support_tickets where user_id = ${user.id}`)).toBe(5);
    });
  });

  describe('posting rate limit (POSTING_RATE_LIMIT_PER_MINUTE)', () => {
    it(`${AT_ONCE} posts at once by one member write ${POSTS_PER_MINUTE}`, async () => {
      const s = await staffedTribe(t, await crew(t));
      const answers = await atOnce((i) => gql(t, s.member, Q.post, { c: s.tribe.id, i: { content: `<p>burst ${i}</p>` } }));
      expect(granted(answers)).toHaveLength(POSTS_PER_MINUTE);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - POSTS_PER_MINUTE).fill({ code: 'RATE_LIMITED', reason: 'posting_rate_limited' }));
      expect(await countOf(t, sql`select count(*)::int as n from posts where author_id = ${s.member.id}`)).toBe(POSTS_PER_MINUTE);
    });
  });

  describe('message rate limit (20 per 10 seconds)', () => {
    it(`after 10 messages, ${AT_ONCE} sent at once write 10 more`, async () => {
      const max = MESSAGE_RATE_LIMITS[0].max;
      const [a, b] = await Promise.all([signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, a);
      await join(t, b, tribe.handle);
      const id = ok(await gql(t, a, Q.startConversation, { u: [b.id] })).startConversation.id;
      for (let i = 0; i < max - 10; i += 1) ok(await gql(t, a, Q.send, { id, b: `before ${i}` }));
      const answers = await atOnce((i) => gql(t, a, Q.send, { id, b: `burst ${i}` }));
      expect(granted(answers)).toHaveLength(10);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 10).fill({ code: 'RATE_LIMITED', reason: 'message_rate_limited' }));
      expect(await countOf(t, sql`select count(*)::int as n from direct_messages where author_id = ${a.id}`)).toBe(max);
    });
  });

  describe(`verification and reset mails (${TOKENS_PER_WINDOW} per account per hour)`, () => {
    it(`${AT_ONCE} verification requests at once issue ${TOKENS_PER_WINDOW} tokens and queue ${TOKENS_PER_WINDOW} mails`, async () => {
      const user = await signupUser(t);
      const answers = await atOnce(() => gql(t, user, Q.verifyEmail));
      expect(granted(answers)).toHaveLength(TOKENS_PER_WINDOW);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - TOKENS_PER_WINDOW).fill({ code: 'RATE_LIMITED', reason: 'too_many_requests' }));
      expect(await countOf(t, sql`select count(*)::int as n from email_tokens where user_id = ${user.id} and purpose = 'verify_email'`)).toBe(TOKENS_PER_WINDOW);
      expect(await countOf(t, sql`select count(*)::int as n from mail_outbox where to_address = ${user.email} and kind = 'verification'`)).toBe(TOKENS_PER_WINDOW);
    });

    it(`${AT_ONCE} password-reset requests at once answer true and issue ${TOKENS_PER_WINDOW} tokens`, async () => {
      const user = await signupUser(t);
      const answers = await atOnce(() => gql(t, null, Q.resetPassword, { e: user.email }));
      expect(answers.map((a) => ok(a).requestPasswordReset)).toEqual(Array(AT_ONCE).fill(true));
      expect(await countOf(t, sql`select count(*)::int as n from email_tokens where user_id = ${user.id} and purpose = 'reset_password'`)).toBe(TOKENS_PER_WINDOW);
    });
  });

  describe('sign-in failures (5 per account and address)', () => {
    it(`${AT_ONCE} wrong passwords at once answer 401 five times, then 429 too_many_attempts`, async () => {
      const user = await signupUser(t);
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => t.api.post('/auth/login').send({ email: user.email, password: 'wrong password 1' })));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(5).fill(401), ...Array(AT_ONCE - 5).fill(429)]);
      expect(answers.filter((r) => r.status === 429).every((r) => Number(r.headers['retry-after']) >= 1)).toBe(true);
    });
  });

  describe('event capacity (maxAttendees)', () => {
    it(`${AT_ONCE} members registering at once for 5 seats get 5 tickets; the others are CONFLICT event_full`, async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const people: TestUser[] = await Promise.all(Array.from({ length: AT_ONCE }, () => signupUser(t)));
      for (const p of people) await join(t, p, tribe.handle);
      const input = { title: `Small ${unique()}`, eventType: 'online', startsAt: '2031-05-01T18:00:00Z', endsAt: '2031-05-01T19:00:00Z', maxAttendees: 5 };
      const event = ok(await gql(t, owner, Q.createEvent, { c: tribe.id, i: input })).createEvent;
      const answers = await Promise.all(people.map((p) => gql(t, p, Q.register, { e: event.id })));
      expect(granted(answers)).toHaveLength(5);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 5).fill({ code: 'CONFLICT', reason: 'event_full' }));
      expect(await countOf(t, sql`select count(*)::int as n from event_registrations where event_id = ${event.id}`)).toBe(5);
    });
  });

  describe('refunds never exceed the order', () => {
    it(`${AT_ONCE} partial refunds of 10.00 at once on a 49.90 order refund 40.00 (4 refunds)`, async () => {
      const s = await staffedTribe(t, cast);
      const input = { title: `Paid ${unique()}`, eventType: 'online', startsAt: '2031-05-01T18:00:00Z', endsAt: '2031-05-01T19:00:00Z', price: 49.9 };
      const event = ok(await gql(t, s.owner, Q.createEvent, { c: s.tribe.id, i: input })).createEvent;
      const orderId = ok(await gql(t, s.member, Q.register, { e: event.id })).registerForEvent.order.id;
      expect(ok(await gql(t, s.owner, Q.markPaid, { o: orderId })).markOrderPaid.status).toBe('paid');
      const answers = await atOnce(() => gql(t, s.owner, Q.refund, { o: orderId, a: 1000 }));
      expect(granted(answers)).toHaveLength(4);
      expect(refusals(answers)).toEqual(Array(AT_ONCE - 4).fill({ code: 'BAD_USER_INPUT', reason: 'amount_exceeds_refundable' }));
      expect(await sqlRows(t, sql`select refunded_cents, status from orders where id = ${orderId}`)).toEqual([{ refunded_cents: 4000, status: 'partially_refunded' }]);
      expect(await countOf(t, sql`select count(*)::int as n from order_refunds where order_id = ${orderId}`)).toBe(4);
      expect(await countOf(t, sql`select count(*)::int as n from ledger_transactions where order_id = ${orderId} and kind = 'refund'`)).toBe(4);
    });
  });

  describe('one-per rules held by a constraint', () => {
    it(`${AT_ONCE} identical reactions, joins, course enrollments and reports at once write one row each and answer no error`, async () => {
      const s = await staffedTribe(t, cast);
      const post = ok(await gql(t, s.owner, Q.post, { c: s.tribe.id, i: { content: '<p>react to me</p>' } })).createPost;
      const course = ok(
        await gql(t, s.owner, Q.createCourse, { c: s.tribe.id, i: { title: `Course ${unique()}`, accessType: 'paid', price: 20 } }),
      ).createCourse;
      const newcomer = await signupUser(t);
      const [reactions, joins, enrollments, reports] = await Promise.all([
        atOnce((i) => gql(t, s.member, Q.react, { p: post.id, k: i % 2 ? 'LIKE' : 'LOVE' })),
        atOnce(() => gql(t, newcomer, Q.joinTribe, { h: s.tribe.handle })),
        atOnce(() => gql(t, s.member2, Q.enroll, { c: course.id })),
        atOnce(() => gql(t, s.member2, Q.report, { c: s.tribe.id, p: post.id })),
      ]);
      for (const answers of [reactions, joins, enrollments, reports]) expect(refusals(answers)).toEqual([]);
      expect(await countOf(t, sql`select count(*)::int as n from reactions where post_id = ${post.id} and user_id = ${s.member.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from members where community_id = ${s.tribe.id} and user_id = ${newcomer.id}`)).toBe(1);
      expect(new Set(enrollments.map((a) => a.data.enrollCourse.order.id)).size).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from orders where buyer_id = ${s.member2.id} and product_id = ${course.id}`)).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from moderation_reports where reporter_id = ${s.member2.id} and target_id = ${post.id}`)).toBe(1);
    });
  });
});
