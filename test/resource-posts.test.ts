import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import { accessToken, createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

type Actor = TestUser & { token: string };
type Who = 'owner' | 'moderator' | 'member' | 'member2' | 'outsider';

/** Token-authenticated resource API, posts and comments of a tribe (spec 2.6, 4.4, 4.5). */
describe('resource API posts', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const rows = async (query: SQL) => ((await t.deps.database.db.execute(query)) as unknown as { rows: Record<string, any>[] }).rows;
  const postsBy = async (communityId: string, authorId: string) =>
    rows(sql`select id, body, media_urls, pinned_at from posts where community_id = ${communityId} and author_id = ${authorId}`);
  const postRow = async (id: string) =>
    (await rows(sql`select body, media_urls, pinned_at, visibility, status, updated_at from posts where id = ${id}`))[0] ?? null;
  const commentCount = async (postId: string) => Number((await rows(sql`select count(*)::int as n from comments where post_id = ${postId}`))[0].n);
  const actor = async (): Promise<Actor> => {
    const user = await signupUser(t);
    return { ...user, token: await accessToken(t, user) };
  };
  const as = (who: Actor) => ({ authorization: `Bearer ${who.token}` });
  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  const UNKNOWN = '00000000-0000-4000-8000-000000000000';

  async function crew() {
    const [owner, moderator, member, member2, outsider] = await Promise.all([actor(), actor(), actor(), actor(), actor()]);
    return { owner, moderator, member, member2, outsider };
  }
  // Signing up costs an Argon2 hash, so two casts are made once; each test still gets fresh tribes (roles live per tribe).
  let cast: Awaited<ReturnType<typeof crew>>;
  let otherCast: Awaited<ReturnType<typeof crew>>;
  beforeAll(async () => {
    [cast, otherCast] = await Promise.all([crew(), crew()]);
  });

  /** A new tribe with an owner, a moderator and two members of `people`; the outsider never joins. */
  async function staffedTribe(options: { isPublic?: boolean } = {}, people = cast) {
    const tribe = await createTribe(t, people.owner, { isPublic: options.isPublic ?? true });
    let code: string | undefined;
    if (!tribe.isPublic) {
      const invite = await gql(t, people.owner, 'mutation($c: ID!){ createInvite(communityId: $c) }', { c: tribe.id });
      code = invite.data.createInvite;
    }
    for (const m of [people.moderator, people.member, people.member2]) await join(t, m, tribe.handle, code);
    await setRole(t, people.owner, tribe.id, people.moderator.id, 'moderator');
    return { ...people, tribe };
  }

  const createPost = (tribeId: string, who: Actor, body: Record<string, unknown>) =>
    t.api.post(`/v1/communities/${tribeId}/posts`).set(as(who)).send(body);
  async function newPost(tribeId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await createPost(tribeId, who, { content: `<p>post ${unique()}</p>`, ...body });
    if (res.status !== 201) throw new Error(`createPost: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }
  async function newComment(tribeId: string, postId: string, who: Actor, body: Record<string, unknown> = {}) {
    const res = await t.api.post(`/v1/communities/${tribeId}/posts/${postId}/comments`).set(as(who)).send({ content: `comment ${unique()}`, ...body });
    if (res.status !== 201) throw new Error(`createComment: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Record<string, any>;
  }

  describe('POST /v1/communities/:community_id/posts', () => {
    it('creates a post for a member with 201, the post record and a post.created event', async () => {
      const s = await staffedTribe();
      const res = await createPost(s.tribe.id, s.member, { content: '<p>Hello <em>tribe</em></p>' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          community_id: s.tribe.id,
          author_id: s.member.id,
          author: { id: s.member.id, username: s.member.username, display_name: expect.any(String) },
          body: '<p>Hello <em>tribe</em></p>',
          content: '<p>Hello <em>tribe</em></p>',
          media_urls: [],
          is_pinned: false,
          pinned_at: null,
          visibility: 'public',
          status: 'published',
          published_at: expect.stringMatching(ISO),
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      });
      expect(await postsBy(s.tribe.id, s.member.id)).toEqual([{ id: res.body.data.id, body: '<p>Hello <em>tribe</em></p>', media_urls: [], pinned_at: null }]);
      const events = await rows(sql`select data from outbox_events where community_id = ${s.tribe.id} and type = 'post.created'`);
      expect(events.map((e) => e.data)).toEqual([{ postId: res.body.data.id, authorId: s.member.id, handle: s.tribe.handle }]);
    });

    it('removes <script> and event-handler attributes but keeps safe HTML', async () => {
      const s = await staffedTribe();
      const res = await createPost(s.tribe.id, s.member, {
        content:
          '<p>Hi <strong>there</strong> <a href="https://example.com/x">link</a></p><script>alert(1)</script>' +
          '<img src="https://cdn.example.com/a.png" onerror="alert(2)"><a href="javascript:alert(3)">bad</a><div onclick="x()">div</div>',
      });
      expect(res.status).toBe(201);
      const content: string = res.body.data.content;
      expect(content).not.toMatch(/<script/i);
      expect(content).not.toMatch(/alert\(/);
      expect(content).not.toMatch(/onerror|onclick/i);
      expect(content).not.toMatch(/javascript:/i);
      expect(content).toContain('<p>Hi <strong>there</strong> <a href="https://example.com/x">link</a></p>');
      expect(content).toContain('<img src="https://cdn.example.com/a.png" />');
      expect(content).toContain('<div>div</div>');
      expect((await postRow(res.body.data.id)).body).toBe(content);
    });

    it('stores up to 10 http(s) media_urls', async () => {
      const s = await staffedTribe();
      const urls = Array.from({ length: 10 }, (_, i) => (i % 2 ? `https://cdn.example.com/${i}.png` : `http://cdn.example.com/${i}.mp4`));
      const res = await createPost(s.tribe.id, s.member, { content: 'with media', media_urls: urls });
      expect(res.status).toBe(201);
      expect(res.body.data.media_urls).toEqual(urls);
      expect((await postRow(res.body.data.id)).media_urls).toEqual(urls);
    });

    it.each([
      ['a javascript: URL', ['javascript:alert(1)']],
      ['an ftp URL', ['ftp://example.com/a.png']],
      ['a data: URL', ['data:image/png;base64,AAAA']],
      ['text that is not a URL', ['not a url']],
      ['11 URLs', Array.from({ length: 11 }, (_, i) => `https://cdn.example.com/${i}.png`)],
      ['a number in the list', [42]],
      ['an object instead of a list', { url: 'https://cdn.example.com/a.png' }],
    ])('answers 400 invalid_input for media_urls with %s and writes no row', async (_name, mediaUrls) => {
      const s = await staffedTribe();
      expectError(await createPost(s.tribe.id, s.member, { content: 'x', media_urls: mediaUrls }), 400, 'invalid_input');
      expect(await postsBy(s.tribe.id, s.member.id)).toEqual([]);
    });

    it('answers 403 forbidden when a plain member pins, and writes no row', async () => {
      const s = await staffedTribe();
      expectError(await createPost(s.tribe.id, s.member, { content: 'pin me', is_pinned: true }), 403, 'forbidden');
      expect(await postsBy(s.tribe.id, s.member.id)).toEqual([]);
    });

    it('lets a moderator create a pinned post', async () => {
      const s = await staffedTribe();
      const res = await createPost(s.tribe.id, s.moderator, { content: 'Rules', is_pinned: true });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ is_pinned: true, pinned_at: expect.stringMatching(ISO) });
      expect((await postRow(res.body.data.id)).pinned_at).not.toBeNull();
    });

    it('accepts content of exactly 50000 characters', async () => {
      const s = await staffedTribe();
      const res = await createPost(s.tribe.id, s.member, { content: 'a'.repeat(50_000) });
      expect(res.status).toBe(201);
      expect((await postRow(res.body.data.id)).body).toHaveLength(50_000);
    });

    it.each([
      ['content over 50000 characters', { content: 'a'.repeat(50_001) }],
      ['no content', { media_urls: ['https://cdn.example.com/a.png'] }],
      ['content that is only a script', { content: '<script>alert(1)</script>' }],
      ['whitespace content', { content: '   ' }],
      ['numeric content', { content: 42 }],
      ['a string is_pinned', { content: 'x', is_pinned: 'yes' }],
      ['an unknown visibility', { content: 'x', visibility: 'secret' }],
    ])('answers 400 invalid_input for %s and writes no row', async (_name, body) => {
      const s = await staffedTribe();
      expectError(await createPost(s.tribe.id, s.member, body), 400, 'invalid_input');
      expect(await postsBy(s.tribe.id, s.member.id)).toEqual([]);
    });

    it('answers 413 payload_too_large for a body over 100 KB and writes no row', async () => {
      const s = await staffedTribe();
      expectError(await createPost(s.tribe.id, s.member, { content: 'a'.repeat(120 * 1024) }), 413, 'payload_too_large');
      expect(await postsBy(s.tribe.id, s.member.id)).toEqual([]);
    });

    it('answers 403 forbidden to outsiders of public and private tribes, and writes no row', async () => {
      const open = await staffedTribe();
      expectError(await createPost(open.tribe.id, open.outsider, { content: 'hi' }), 403, 'forbidden');
      const closed = await staffedTribe({ isPublic: false });
      expectError(await createPost(closed.tribe.id, closed.outsider, { content: 'hi' }), 403, 'forbidden');
      expect(await postsBy(open.tribe.id, open.outsider.id)).toEqual([]);
      expect(await postsBy(closed.tribe.id, closed.outsider.id)).toEqual([]);
    });

    it('answers 401 unauthorized without a token and 404 for an unknown tribe', async () => {
      const s = await staffedTribe();
      expectError(await t.api.post(`/v1/communities/${s.tribe.id}/posts`).send({ content: 'hi' }), 401, 'unauthorized');
      expectError(await createPost(UNKNOWN, s.member, { content: 'hi' }), 404, 'not_found');
      expectError(await createPost('nope', s.member, { content: 'hi' }), 404, 'not_found');
    });
  });

  describe('GET /v1/communities/:community_id/posts', () => {
    const list = (tribeId: string, who: Actor, query: Record<string, unknown> = {}) =>
      t.api.get(`/v1/communities/${tribeId}/posts`).query(query).set(as(who));

    it('lists published posts newest first with exact pagination', async () => {
      const s = await staffedTribe();
      const a = await newPost(s.tribe.id, s.member);
      const b = await newPost(s.tribe.id, s.member2);
      const c = await newPost(s.tribe.id, s.moderator);
      await newPost(s.tribe.id, s.member, { status: 'draft' });
      const res = await list(s.tribe.id, s.outsider);
      expect(res.status).toBe(200);
      expect(res.body.data.map((p: any) => p.id)).toEqual([c.id, b.id, a.id]);
      expect(res.body.data[0]).toEqual(c);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });

      const page1 = await list(s.tribe.id, s.member, { per_page: 2 });
      expect(page1.body.data.map((p: any) => p.id)).toEqual([c.id, b.id]);
      expect(page1.body.pagination).toEqual({ page: 1, per_page: 2, has_more: true });
      const page2 = await list(s.tribe.id, s.member, { per_page: 2, page: 2 });
      expect(page2.body.data.map((p: any) => p.id)).toEqual([a.id]);
      expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, has_more: false });
      expect((await list(s.tribe.id, s.member, { per_page: 99 })).body.pagination.per_page).toBe(50);
    });

    it('filters by pinned', async () => {
      const s = await staffedTribe();
      const plain = await newPost(s.tribe.id, s.member);
      const pinned = await newPost(s.tribe.id, s.moderator, { is_pinned: true });
      expect((await list(s.tribe.id, s.member, { pinned: 'true' })).body.data.map((p: any) => p.id)).toEqual([pinned.id]);
      expect((await list(s.tribe.id, s.member, { pinned: 'false' })).body.data.map((p: any) => p.id)).toEqual([plain.id]);
    });

    it('filters by author_id', async () => {
      const s = await staffedTribe();
      const mine = await newPost(s.tribe.id, s.member);
      await newPost(s.tribe.id, s.member2);
      const mine2 = await newPost(s.tribe.id, s.member);
      const res = await list(s.tribe.id, s.member2, { author_id: s.member.id });
      expect(res.body.data.map((p: any) => p.id)).toEqual([mine2.id, mine.id]);
      expect((await list(s.tribe.id, s.member2, { author_id: s.outsider.id })).body.data).toEqual([]);
    });

    it('shows members-only posts to members but not to outsiders', async () => {
      const s = await staffedTribe();
      const open = await newPost(s.tribe.id, s.member);
      const inner = await newPost(s.tribe.id, s.member, { visibility: 'members' });
      expect((await list(s.tribe.id, s.member2)).body.data.map((p: any) => p.id)).toEqual([inner.id, open.id]);
      expect((await list(s.tribe.id, s.outsider)).body.data.map((p: any) => p.id)).toEqual([open.id]);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${inner.id}`).set(as(s.outsider)), 404, 'not_found');
    });

    it.each([
      ['a short non-UUID author_id', 'author_id=abc'],
      ['a long non-UUID author_id', `author_id=${'x'.repeat(40)}`],
      ['an author_id given twice', `author_id=${UNKNOWN}&author_id=${UNKNOWN}`],
      ['pinned=yes', 'pinned=yes'],
      ['per_page=0', 'per_page=0'],
      ['page=abc', 'page=abc'],
    ])('answers 400 invalid_query for %s', async (_name, query) => {
      const s = await staffedTribe();
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts?${query}`).set(as(s.member)), 400, 'invalid_query');
    });

    it('answers 403 forbidden to an outsider of a private tribe and 200 to its members', async () => {
      const s = await staffedTribe({ isPublic: false });
      const post = await newPost(s.tribe.id, s.member);
      expectError(await list(s.tribe.id, s.outsider), 403, 'forbidden');
      expect((await list(s.tribe.id, s.member2)).body.data.map((p: any) => p.id)).toEqual([post.id]);
    });

    it('answers 404 for an unknown tribe and 401 without a token', async () => {
      const s = await staffedTribe();
      expectError(await list(UNKNOWN, s.member), 404, 'not_found');
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts`), 401, 'unauthorized');
    });
  });

  describe('GET /v1/communities/:community_id/posts/:id', () => {
    it('returns the post to members and to outsiders of a public tribe', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      for (const who of [s.member2, s.outsider]) {
        const res = await t.api.get(`/v1/communities/${s.tribe.id}/posts/${post.id}`).set(as(who));
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ data: post });
      }
    });

    it('answers 404 not_found to an outsider of a private tribe', async () => {
      const s = await staffedTribe({ isPublic: false });
      const post = await newPost(s.tribe.id, s.member);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${post.id}`).set(as(s.outsider)), 404, 'not_found');
      expect((await t.api.get(`/v1/communities/${s.tribe.id}/posts/${post.id}`).set(as(s.member2))).status).toBe(200);
    });

    it('hides a draft from everyone but its author and moderators', async () => {
      const s = await staffedTribe();
      const draft = await newPost(s.tribe.id, s.member, { status: 'draft' });
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${draft.id}`).set(as(s.member2)), 404, 'not_found');
      expect((await t.api.get(`/v1/communities/${s.tribe.id}/posts/${draft.id}`).set(as(s.member))).status).toBe(200);
      expect((await t.api.get(`/v1/communities/${s.tribe.id}/posts/${draft.id}`).set(as(s.moderator))).status).toBe(200);
    });

    it.each([
      ['an unknown post id', UNKNOWN],
      ['a non-UUID post id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const s = await staffedTribe();
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${id}`).set(as(s.member)), 404, 'not_found');
    });
  });

  describe('PATCH /v1/communities/:community_id/posts/:id', () => {
    const patch = (tribeId: string, postId: string, who: Actor, body: unknown) =>
      t.api.patch(`/v1/communities/${tribeId}/posts/${postId}`).set(as(who)).send(body as object);

    it('lets the author edit the content, sanitized, leaving other fields as they were', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member, { media_urls: ['https://cdn.example.com/a.png'] });
      const res = await patch(s.tribe.id, post.id, s.member, { content: '<p>Edited</p><script>x()</script>' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: post.id, content: '<p>Edited</p>', media_urls: ['https://cdn.example.com/a.png'], is_pinned: false, visibility: 'public', created_at: post.created_at });
      expect(await postRow(post.id)).toMatchObject({ body: '<p>Edited</p>', media_urls: ['https://cdn.example.com/a.png'], pinned_at: null });
    });

    it('lets the author replace media_urls only', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member, { content: '<p>keep</p>' });
      const res = await patch(s.tribe.id, post.id, s.member, { media_urls: ['https://cdn.example.com/b.png'] });
      expect(res.status).toBe(200);
      expect(await postRow(post.id)).toMatchObject({ body: '<p>keep</p>', media_urls: ['https://cdn.example.com/b.png'] });
    });

    it('lets a moderator pin and unpin another member post', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      const pinned = await patch(s.tribe.id, post.id, s.moderator, { is_pinned: true });
      expect(pinned.status).toBe(200);
      expect(pinned.body.data).toMatchObject({ is_pinned: true, content: post.content });
      expect((await postRow(post.id)).pinned_at).not.toBeNull();
      const unpinned = await patch(s.tribe.id, post.id, s.moderator, { is_pinned: false });
      expect(unpinned.body.data.is_pinned).toBe(false);
      expect((await postRow(post.id)).pinned_at).toBeNull();
    });

    it.each<[string, Who, Record<string, unknown>]>([
      ['another member edits the content', 'member2', { content: 'hijacked' }],
      ['a moderator edits the content', 'moderator', { content: 'moderated' }],
      ['a moderator pins and edits at once', 'moderator', { content: 'moderated', is_pinned: true }],
      ['the owner edits the content', 'owner', { content: 'owned' }],
      ['the author, a plain member, pins', 'member', { is_pinned: true }],
      ['an outsider edits the content', 'outsider', { content: 'outside' }],
    ])('answers 403 forbidden when %s, and the row is unchanged', async (_name, who, body) => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      const before = await postRow(post.id);
      expectError(await patch(s.tribe.id, post.id, s[who], body), 403, 'forbidden');
      expect(await postRow(post.id)).toEqual(before);
    });

    it.each([
      ['an empty body', {}, 'empty'],
      ['only unknown fields', { title: 'x', author_id: UNKNOWN }, 'empty'],
      ['content over 50000 characters', { content: 'a'.repeat(50_001) }, 'invalid_input'],
      ['content that is only a script', { content: '<script>x()</script>' }, 'invalid_input'],
      ['a bad media URL', { media_urls: ['javascript:alert(1)'] }, 'invalid_input'],
      ['11 media URLs', { media_urls: Array.from({ length: 11 }, (_, i) => `https://cdn.example.com/${i}.png`) }, 'invalid_input'],
    ])('answers 400 for %s and changes nothing', async (_name, body, code) => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      const before = await postRow(post.id);
      expectError(await patch(s.tribe.id, post.id, s.member, body), 400, code);
      expect(await postRow(post.id)).toEqual(before);
    });

    it.each([
      ['an unknown post id', UNKNOWN],
      ['a non-UUID post id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const s = await staffedTribe();
      expectError(await patch(s.tribe.id, id, s.owner, { content: 'x' }), 404, 'not_found');
    });
  });

  describe('DELETE /v1/communities/:community_id/posts/:id', () => {
    const del = (tribeId: string, postId: string, who: Actor) => t.api.delete(`/v1/communities/${tribeId}/posts/${postId}`).set(as(who));

    /** A post by the member with a comment and a reply. */
    async function discussed(s: Awaited<ReturnType<typeof staffedTribe>>) {
      const post = await newPost(s.tribe.id, s.member);
      const top = await newComment(s.tribe.id, post.id, s.member2);
      await newComment(s.tribe.id, post.id, s.member, { parent_id: top.id });
      expect(await commentCount(post.id)).toBe(2);
      return post;
    }

    it('lets the author delete the post with 204 and deletes its comments', async () => {
      const s = await staffedTribe();
      const post = await discussed(s);
      const other = await discussed(s);
      const res = await del(s.tribe.id, post.id, s.member);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await postRow(post.id)).toBeNull();
      expect(await commentCount(post.id)).toBe(0);
      expect(await postRow(other.id)).not.toBeNull();
      expect(await commentCount(other.id)).toBe(2);
      expectError(await t.api.get(`/v1/communities/${s.tribe.id}/posts/${post.id}`).set(as(s.member)), 404, 'not_found');
      expectError(await del(s.tribe.id, post.id, s.member), 404, 'not_found');
    });

    it('lets a moderator delete another member post', async () => {
      const s = await staffedTribe();
      const post = await discussed(s);
      expect((await del(s.tribe.id, post.id, s.moderator)).status).toBe(204);
      expect(await postRow(post.id)).toBeNull();
      expect(await commentCount(post.id)).toBe(0);
    });

    it.each<[string, Who]>([
      ['another member', 'member2'],
      ['an outsider', 'outsider'],
    ])('answers 403 forbidden to %s and deletes nothing', async (_name, who) => {
      const s = await staffedTribe();
      const post = await discussed(s);
      expectError(await del(s.tribe.id, post.id, s[who]), 403, 'forbidden');
      expect(await postRow(post.id)).not.toBeNull();
      expect(await commentCount(post.id)).toBe(2);
    });

    it('answers 404 for an unknown post and 401 without a token', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      expectError(await del(s.tribe.id, UNKNOWN, s.owner), 404, 'not_found');
      expectError(await t.api.delete(`/v1/communities/${s.tribe.id}/posts/${post.id}`), 401, 'unauthorized');
      expect(await postRow(post.id)).not.toBeNull();
    });
  });

  describe('comments', () => {
    const path = (tribeId: string, postId: string) => `/v1/communities/${tribeId}/posts/${postId}/comments`;

    it('creates top-level comments and replies and lists them oldest first', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      const top = await t.api.post(path(s.tribe.id, post.id)).set(as(s.member2)).send({ content: '<b>First</b><script>x()</script>' });
      expect(top.status).toBe(201);
      expect(top.body).toEqual({
        data: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          post_id: post.id,
          author_id: s.member2.id,
          author: { id: s.member2.id, username: s.member2.username, display_name: expect.any(String) },
          parent_id: null,
          body: '<b>First</b>',
          content: '<b>First</b>',
          created_at: expect.stringMatching(ISO),
        },
      });
      const reply = await t.api.post(path(s.tribe.id, post.id)).set(as(s.member)).send({ content: 'Reply', parent_id: top.body.data.id });
      expect(reply.status).toBe(201);
      expect(reply.body.data).toMatchObject({ parent_id: top.body.data.id, post_id: post.id });
      const second = await t.api.post(path(s.tribe.id, post.id)).set(as(s.owner)).send({ content: 'Second', parent_id: null });
      expect(second.status).toBe(201);
      expect(second.body.data.parent_id).toBeNull();

      const stored = await rows(sql`select id, parent_id, body, community_id from comments where post_id = ${post.id} order by created_at`);
      expect(stored).toEqual([
        { id: top.body.data.id, parent_id: null, body: '<b>First</b>', community_id: s.tribe.id },
        { id: reply.body.data.id, parent_id: top.body.data.id, body: 'Reply', community_id: s.tribe.id },
        { id: second.body.data.id, parent_id: null, body: 'Second', community_id: s.tribe.id },
      ]);

      const listed = await t.api.get(path(s.tribe.id, post.id)).set(as(s.outsider));
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((c: any) => [c.id, c.parent_id])).toEqual([
        [top.body.data.id, null],
        [reply.body.data.id, top.body.data.id],
        [second.body.data.id, null],
      ]);
      expect(listed.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });
      const paged = await t.api.get(path(s.tribe.id, post.id)).query({ per_page: 2, page: 2 }).set(as(s.member));
      expect(paged.body).toEqual({ data: [listed.body.data[2]], pagination: { page: 2, per_page: 2, has_more: false } });
      expectError(await t.api.get(`${path(s.tribe.id, post.id)}?per_page=0`).set(as(s.member)), 400, 'invalid_query');
    });

    it('answers 400 invalid_parent for a parent comment of another post, and writes no row', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      const elsewhere = await newPost(s.tribe.id, s.member);
      const foreign = await newComment(s.tribe.id, elsewhere.id, s.member);
      expectError(await t.api.post(path(s.tribe.id, post.id)).set(as(s.member)).send({ content: 'x', parent_id: foreign.id }), 400, 'invalid_parent');
      expectError(await t.api.post(path(s.tribe.id, post.id)).set(as(s.member)).send({ content: 'x', parent_id: UNKNOWN }), 400, 'invalid_parent');
      expect(await commentCount(post.id)).toBe(0);
    });

    it.each([
      ['a non-UUID parent_id', { content: 'x', parent_id: 'not-a-uuid' }],
      ['a numeric parent_id', { content: 'x', parent_id: 7 }],
      ['no content', { parent_id: null }],
      ['content that is only a script', { content: '<script>x()</script>' }],
      ['content over 50000 characters', { content: 'c'.repeat(50_001) }],
    ])('answers 400 invalid_input for %s and writes no row', async (_name, body) => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      expectError(await t.api.post(path(s.tribe.id, post.id)).set(as(s.member)).send(body), 400, 'invalid_input');
      expect(await commentCount(post.id)).toBe(0);
    });

    it('lets an outsider of a public tribe read but not comment', async () => {
      const s = await staffedTribe();
      const post = await newPost(s.tribe.id, s.member);
      expect((await t.api.get(path(s.tribe.id, post.id)).set(as(s.outsider))).status).toBe(200);
      expectError(await t.api.post(path(s.tribe.id, post.id)).set(as(s.outsider)).send({ content: 'hi' }), 403, 'forbidden');
      expect(await commentCount(post.id)).toBe(0);
    });

    it('answers 404 to an outsider of a private tribe for listing and commenting', async () => {
      const s = await staffedTribe({ isPublic: false });
      const post = await newPost(s.tribe.id, s.member);
      await newComment(s.tribe.id, post.id, s.member2);
      expectError(await t.api.get(path(s.tribe.id, post.id)).set(as(s.outsider)), 404, 'not_found');
      expectError(await t.api.post(path(s.tribe.id, post.id)).set(as(s.outsider)).send({ content: 'hi' }), 404, 'not_found');
      expect(await commentCount(post.id)).toBe(1);
    });

    it('answers 404 for an unknown or non-UUID post', async () => {
      const s = await staffedTribe();
      for (const id of [UNKNOWN, 'nope']) {
        expectError(await t.api.get(path(s.tribe.id, id)).set(as(s.member)), 404, 'not_found');
        expectError(await t.api.post(path(s.tribe.id, id)).set(as(s.member)).send({ content: 'x' }), 404, 'not_found');
      }
    });
  });

  describe('tribe isolation', () => {
    it('answers 404 for a post of tribe B under tribe A path on every post route and leaves tribe B unchanged', async () => {
      const a = await staffedTribe();
      const b = await staffedTribe({}, otherCast);
      const post = await newPost(b.tribe.id, b.member);
      await newComment(b.tribe.id, post.id, b.member2);
      const before = await postRow(post.id);
      const base = `/v1/communities/${a.tribe.id}/posts/${post.id}`;

      expectError(await t.api.get(base).set(as(a.owner)), 404, 'not_found');
      expectError(await t.api.patch(base).set(as(a.owner)).send({ is_pinned: true }), 404, 'not_found');
      expectError(await t.api.patch(base).set(as(a.owner)).send({ content: 'rewritten' }), 404, 'not_found');
      expectError(await t.api.delete(base).set(as(a.owner)), 404, 'not_found');
      expectError(await t.api.get(`${base}/comments`).set(as(a.owner)), 404, 'not_found');
      expectError(await t.api.post(`${base}/comments`).set(as(a.owner)).send({ content: 'sneaky' }), 404, 'not_found');

      expect(await postRow(post.id)).toEqual(before);
      expect(await commentCount(post.id)).toBe(1);
      expect(await rows(sql`select id from comments where community_id = ${a.tribe.id}`)).toEqual([]);
    });

    it('does not list tribe B posts under tribe A when filtering by a tribe B author', async () => {
      const a = await staffedTribe();
      const b = await staffedTribe({}, otherCast);
      await newPost(b.tribe.id, b.member);
      const res = await t.api.get(`/v1/communities/${a.tribe.id}/posts`).query({ author_id: b.member.id }).set(as(a.owner));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    });
  });
});
