import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { accessToken, createTribe, join, signupUser } from './factory.js';
import { startPgliteService, type TestService } from './support.js';

/** The same end-to-end path as on PostgreSQL, on the embedded PGlite the service uses when DATABASE_URL is unset. */
describe('service on embedded PGlite', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startPgliteService();
  }, 120_000);
  afterAll(async () => {
    await t.stop();
  });

  it('runs on PGlite', () => {
    expect(t.deps.database.kind).toBe('pglite');
  });

  it('signs up, creates a tribe, joins, posts, comments and lists through REST', async () => {
    const owner = await signupUser(t);
    const member = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
    const token = await accessToken(t, member);
    const auth = { authorization: `Bearer ${token}` };
    const post = await t.api.post(`/v1/communities/${tribe.id}/posts`).set(auth).send({ content: '<b>hello</b>', media_urls: ['https://cdn.example.com/a.png'] });
    expect(post.status).toBe(201);
    const comment = await t.api.post(`/v1/communities/${tribe.id}/posts/${post.body.data.id}/comments`).set(auth).send({ content: 'first' });
    expect(comment.status).toBe(201);
    const list = await t.api.get(`/v1/communities/${tribe.id}/posts?per_page=10`).set(auth);
    expect(list.status).toBe(200);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([post.body.data.id]);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 10, has_more: false });
    const members = await t.api.get(`/v1/communities/${tribe.id}/members`).set(auth);
    expect(members.body.data.map((m: { username: string }) => m.username).sort()).toEqual([owner.username, member.username].sort());
    const events = await t.deps.database.pglite!.query<{ type: string }>('select type from outbox_events where community_id = $1 order by created_at', [tribe.id]);
    expect(events.rows.map((r) => r.type)).toEqual(['member.joined', 'post.created']);
  });

  it('keeps one membership when the same user joins concurrently', async () => {
    const owner = await signupUser(t);
    const user = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await Promise.all(Array.from({ length: 5 }, () => join(t, user, tribe.handle)));
    const rows = await t.deps.database.pglite!.query<{ n: number }>('select count(*)::int as n from members where community_id = $1 and user_id = $2', [tribe.id, user.id]);
    expect(rows.rows[0].n).toBe(1);
  });
});

describe('member search on embedded PGlite', () => {
  it('finds members by username through one array parameter', async () => {
    const t = await startPgliteService();
    try {
      const owner = await signupUser(t);
      const member = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, member, tribe.handle);
      const token = await accessToken(t, owner);
      const res = await t.api.get(`/v1/communities/${tribe.id}/members`).query({ search: member.username }).set('authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([member.id]);
    } finally {
      await t.stop();
    }
  }, 120_000);
});
