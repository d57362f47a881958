import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, registerEndpoint, signupUser, type TestUser } from './factory.js';
import { gql, isolatedDatabase, Receiver, sqlRows, startWebhookService, waitFor, type TestService } from './support.js';
import { JOB_WEBHOOKS_DRAIN, JOB_WEBHOOKS_FANOUT } from '../jobs/src/worker.js';

/** The Agenda worker inside the service, on short intervals, against a database of its own. */
describe('webhook worker (Agenda)', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let receiver: Receiver;
  let owner: TestUser;

  beforeAll(async () => {
    db = await isolatedDatabase();
    t = await startWebhookService({
      databaseUrl: db.url,
      env: {
        WORKER_ENABLED: 'true',
        WORKER_POLL_INTERVAL_MS: '100',
        WORKER_LOCK_LIFETIME_MS: '2000',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_FANOUT_INTERVAL_MS: '200',
        WEBHOOK_DRAIN_INTERVAL_MS: '300',
      },
    });
    receiver = await new Receiver().start();
    owner = await signupUser(t);
  });
  afterAll(async () => {
    await receiver?.stop();
    await t?.stop();
    await db?.drop();
  });

  it('runs webhooks.fanout and webhooks.drain as repeating jobs at the configured intervals', async () => {
    expect(t.worker).toBeDefined();
    const jobs = await sqlRows(t, sql`select name, repeat_interval from agenda_jobs where name like 'webhooks.%' order by name`);
    expect(jobs).toEqual([
      { name: JOB_WEBHOOKS_DRAIN, repeat_interval: '300' },
      { name: JOB_WEBHOOKS_FANOUT, repeat_interval: '200' },
    ]);
  });

  it('delivers member and post events end to end, each verified by a receiver built on the verifier package', async () => {
    const tribe = await createTribe(t, owner);
    const endpoint = await registerEndpoint(
      t,
      owner,
      tribe.handle,
      { url: receiver.url(), events: ['member.joined', 'member.left', 'member.removed', 'post.created'] },
      receiver,
    );
    const joiner = await signupUser(t);
    await join(t, joiner, tribe.handle);
    await waitFor(() => receiver.events.some((e) => e.type === 'member.joined'), 10_000, 'member.joined');
    expect(receiver.events.find((e) => e.type === 'member.joined')!.data).toEqual({ userId: joiner.id, handle: tribe.handle });

    const post = await gql(t, joiner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "<p>hello</p>"}){ id } }', { c: tribe.id });
    expect(post.errors).toBeUndefined();
    await gql(t, joiner, 'mutation($h: String!){ leaveCommunity(handle: $h) }', { h: tribe.handle });
    const removed = await signupUser(t);
    await join(t, removed, tribe.handle);
    const out = await gql(t, owner, 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }', { c: tribe.id, u: removed.id });
    expect(out.errors).toBeUndefined();

    await waitFor(() => receiver.events.length >= 5, 10_000, 'five events');
    const byType = (type: string) => receiver.events.filter((e) => e.type === type).map((e) => e.data);
    expect(byType('post.created')).toEqual([expect.objectContaining({ postId: post.data.createPost.id, handle: tribe.handle })]);
    expect(byType('member.left')).toEqual([{ userId: joiner.id, handle: tribe.handle }]);
    expect(byType('member.removed')).toEqual([{ userId: removed.id, handle: tribe.handle }]);
    expect(byType('member.joined')).toEqual([
      { userId: joiner.id, handle: tribe.handle },
      { userId: removed.id, handle: tribe.handle },
    ]);
    expect(receiver.rejected).toEqual([]);

    // The receiver records a request before it answers; the worker records the outcome after the answer.
    const deliveries = () => t.api.get(`/communities/${tribe.handle}/webhooks/${endpoint.id}/deliveries`).set('cookie', owner.cookie);
    await waitFor(async () => (await deliveries()).body.deliveries?.every((d: { status: string }) => d.status === 'success'), 10_000, 'five outcomes recorded');
    const log = await deliveries();
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toHaveLength(5);
    expect(log.body.deliveries.every((d: { status: string; attempts: number }) => d.status === 'success' && d.attempts === 1)).toBe(true);
    expect(new Set(receiver.events.map((e) => e.id))).toEqual(new Set(log.body.deliveries.map((d: { id: string }) => d.id)));
  });
  it('delivers event.created, order.paid and win.approved produced by the real domain flows', async () => {
    const tribe = await createTribe(t, owner);
    await registerEndpoint(t, owner, tribe.handle, { url: receiver.url(), events: ['event.created', 'order.paid', 'win.approved'] }, receiver);
    const buyer = await signupUser(t);
    await join(t, buyer, tribe.handle);
    const ok = (out: { data?: any; errors?: unknown }) => {
      expect(out.errors).toBeUndefined();
      return out.data;
    };

    const event = ok(
      await gql(t, owner, 'mutation($c: ID!, $i: CreateEventInput!){ createEvent(communityId: $c, input: $i){ id } }', {
        c: tribe.id,
        i: { title: 'Meetup', eventType: 'online', startsAt: '2031-05-01T18:00:00Z', endsAt: '2031-05-01T20:00:00Z' },
      }),
    ).createEvent;
    const course = ok(
      await gql(t, owner, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', {
        c: tribe.id,
        i: { title: 'Paid course', accessType: 'paid', price: 49.9 },
      }),
    ).createCourse;
    const enrolled = ok(await gql(t, buyer, 'mutation($id: ID!){ enrollCourse(courseId: $id){ status order { id } } }', { id: course.id })).enrollCourse;
    expect(enrolled.status).toBe('pending_payment');
    ok(await gql(t, owner, 'mutation($o: ID!){ markOrderPaid(orderId: $o){ status } }', { o: enrolled.order.id }));
    const win = ok(
      await gql(t, buyer, 'mutation($c: ID!){ postWin(communityId: $c, input: {title: "First sale"}){ id } }', { c: tribe.id }),
    ).postWin;
    ok(await gql(t, owner, 'mutation($id: ID!){ approveWin(id: $id){ id } }', { id: win.id }));

    const types = ['event.created', 'order.paid', 'win.approved'];
    await waitFor(() => types.every((type) => receiver.events.some((e) => e.type === type && (e.data as { handle?: string }).handle === tribe.handle)), 10_000, 'the three events');
    const mine = receiver.events.filter((e) => (e.data as { handle?: string }).handle === tribe.handle);
    expect(mine.find((e) => e.type === 'event.created')!.data).toMatchObject({ eventId: event.id, handle: tribe.handle });
    expect(mine.find((e) => e.type === 'order.paid')!.data).toMatchObject({ orderId: enrolled.order.id, userId: buyer.id, handle: tribe.handle });
    expect(mine.find((e) => e.type === 'win.approved')!.data).toMatchObject({ winId: win.id, userId: buyer.id, handle: tribe.handle });
    expect(receiver.rejected).toEqual([]);
  });
});
