import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { actor, createTribe, join, type Actor } from './factory.js';
import { bearer, countOf, gql, ManualClock, ok, startService, type TestService } from './support.js';

const Q = {
  post: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
};

/** The per-user posting rate limit across posts and comments (POSTING_RATE_LIMIT_PER_MINUTE), here 3 a minute. */
describe('posting rate limit', () => {
  let t: TestService;
  let other: TestService;
  const clock = new ManualClock();
  const LIMIT = 3;

  beforeAll(async () => {
    t = await startService({ POSTING_RATE_LIMIT_PER_MINUTE: String(LIMIT) }, clock.clock);
    other = await startService({ POSTING_RATE_LIMIT_PER_MINUTE: String(LIMIT) }, clock.clock);
  });
  afterAll(async () => {
    await Promise.all([t.stop(), other.stop()]);
  });

  const written = (userId: string) =>
    countOf(t, sql`select ((select count(*) from posts where author_id = ${userId}) + (select count(*) from comments where author_id = ${userId}))::int as n`);
  const post = (as: Actor, communityId: string, svc = t) => gql(svc, as, Q.post, { c: communityId, i: { content: '<p>hello</p>' } });
  const comment = (as: Actor, postId: string) => gql(t, as, Q.comment, { p: postId, i: { content: 'a comment' } });
  /** A member of a new tribe (and the tribe), who has posted nothing yet. */
  const poster = async () => {
    const [owner, member] = await Promise.all([actor(t), actor(t)]);
    const tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
    return { owner, member, tribe };
  };

  it('is 30 a minute unless POSTING_RATE_LIMIT_PER_MINUTE says otherwise, and refuses 0', () => {
    expect(loadConfig({}).posting.perMinute).toBe(30);
    expect(loadConfig({ POSTING_RATE_LIMIT_PER_MINUTE: '5' }).posting.perMinute).toBe(5);
    expect(() => loadConfig({ POSTING_RATE_LIMIT_PER_MINUTE: '0' })).toThrow(/POSTING_RATE_LIMIT_PER_MINUTE/);
  });

  it('counts posts and comments together and answers RATE_LIMITED with retryAfterSeconds on GraphQL, writing nothing', async () => {
    const { member, tribe } = await poster();
    const first = ok(await post(member, tribe.id)).createPost;
    clock.advance(10_000);
    ok(await comment(member, first.id));
    clock.advance(10_000);
    ok(await post(member, tribe.id));
    expect(await written(member.id)).toBe(3);

    for (const refused of [await post(member, tribe.id), await comment(member, first.id)]) {
      expect(refused.data).toBeNull();
      expect(refused.errors).toHaveLength(1);
      expect(refused.errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'posting_rate_limited', details: { retryAfterSeconds: 40 } });
    }
    expect(await written(member.id)).toBe(3);

    // A minute after the first post, one more fits (and only one).
    clock.advance(40_000);
    ok(await post(member, tribe.id));
    expect((await post(member, tribe.id)).errors![0].extensions?.code).toBe('RATE_LIMITED');
    expect(await written(member.id)).toBe(4);
  });

  it('is per user: another member of the same tribe still posts', async () => {
    const { owner, member, tribe } = await poster();
    for (let i = 0; i < LIMIT; i += 1) ok(await post(member, tribe.id));
    expect((await post(member, tribe.id)).errors![0].extensions?.code).toBe('RATE_LIMITED');
    ok(await post(owner, tribe.id));
  });

  it('counts across tribes', async () => {
    const a = await poster();
    const b = await createTribe(t, a.owner);
    await join(t, a.member, b.handle);
    ok(await post(a.member, a.tribe.id));
    ok(await post(a.member, b.id));
    ok(await post(a.member, a.tribe.id));
    expect((await post(a.member, b.id)).errors![0].extensions?.code).toBe('RATE_LIMITED');
  });

  it('holds across processes: two services on one database share the count', async () => {
    const { member, tribe } = await poster();
    ok(await post(member, tribe.id, t));
    ok(await post(member, tribe.id, other));
    ok(await post(member, tribe.id, t));
    expect((await post(member, tribe.id, other)).errors![0].extensions?.code).toBe('RATE_LIMITED');
    expect(await written(member.id)).toBe(LIMIT);
  });

  it('lets exactly the limit through when requests arrive at once', async () => {
    const { member, tribe } = await poster();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(member, tribe.id, i % 2 ? t : other)));
    expect(results.filter((r) => !r.errors).length).toBe(LIMIT);
    expect(results.filter((r) => r.errors?.[0].extensions?.code === 'RATE_LIMITED').length).toBe(8 - LIMIT);
    expect(await written(member.id)).toBe(LIMIT);
  });

  describe('on the resource API', () => {
    it('answers 429 posting_rate_limited with Retry-After for posts and comments, and writes nothing', async () => {
      const { member, tribe } = await poster();
      const create = () => t.api.post(`/v1/communities/${tribe.id}/posts`).set(bearer(member)).send({ content: 'hi' });
      const first = await create();
      expect(first.status).toBe(201);
      clock.advance(15_000);
      expect((await t.api.post(`/v1/communities/${tribe.id}/posts/${first.body.data.id}/comments`).set(bearer(member)).send({ content: 'c' })).status).toBe(201);
      expect((await create()).status).toBe(201);

      const refused = await create();
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('45');
      expect(refused.body).toEqual({ error: expect.objectContaining({ code: 'posting_rate_limited', message: expect.any(String) }) });
      const refusedComment = await t.api.post(`/v1/communities/${tribe.id}/posts/${first.body.data.id}/comments`).set(bearer(member)).send({ content: 'c' });
      expect(refusedComment.status).toBe(429);
      expect(refusedComment.headers['retry-after']).toBe('45');
      expect(await written(member.id)).toBe(3);
    });
  });
});
