import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type SQL } from 'drizzle-orm';
import { accessToken, createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { startService, type TestService } from './support.js';

type Actor = TestUser & { token: string };

/** Token-authenticated resource API, communities (spec 2.6, 4.4, 4.5). */
describe('resource API communities', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const rows = async (query: SQL) => ((await t.deps.database.db.execute(query)) as unknown as { rows: Record<string, any>[] }).rows;
  const countHandle = async (handle: string) =>
    Number((await rows(sql`select count(*)::int as n from communities where lower(handle) = lower(${handle})`))[0].n);
  const actor = async (): Promise<Actor> => {
    const user = await signupUser(t);
    return { ...user, token: await accessToken(t, user) };
  };
  const as = (who: Actor) => ({ authorization: `Bearer ${who.token}` });
  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
  };

  /** A tribe with an owner, an admin, a moderator and a plain member, each holding an access token. */
  async function staffedTribe(overrides: Record<string, unknown> = {}) {
    const [owner, admin, moderator, member, outsider] = await Promise.all([actor(), actor(), actor(), actor(), actor()]);
    const tribe = await createTribe(t, owner, overrides);
    for (const u of [admin, moderator, member]) await join(t, u, tribe.handle);
    await setRole(t, owner, tribe.id, admin.id, 'admin');
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
    return { tribe, owner, admin, moderator, member, outsider };
  }

  describe('POST /v1/communities', () => {
    it('creates a tribe, answers 201 with the record and makes the creator its owner', async () => {
      const owner = await actor();
      const handle = `c-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Book Club', handle });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: 'Book Club',
          handle,
          description: '',
          member_count: 1,
          is_public: true,
          category: null,
          viewer_role: 'owner',
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          updated_at: expect.any(String),
          // The full object (docs/communities.md): the creator is the owner, so the automod part is shown.
          settings: {
            visibility: 'public',
            join_policy: 'open',
            default_post_visibility: 'public',
            moderation: { blocked_words: [], blocked_domains: [], new_member_post_limit: 1000, require_approval: false },
          },
          metadata: {},
        },
      });
      const id = res.body.data.id;
      const members = await rows(sql`select user_id, role from members where community_id = ${id}`);
      expect(members).toEqual([{ user_id: owner.id, role: 'owner' }]);
      expect(await rows(sql`select name, handle, created_by from communities where id = ${id}`)).toEqual([
        { name: 'Book Club', handle, created_by: owner.id },
      ]);

      const listed = await t.api.get(`/v1/communities/${id}/members`).set(as(owner));
      expect(listed.body.data).toEqual([expect.objectContaining({ user_id: owner.id, username: owner.username, role: 'owner' })]);
    });

    it('stores description, is_public and category when sent, and lowercases the handle', async () => {
      const owner = await actor();
      const u = unique();
      const res = await t.api
        .post('/v1/communities')
        .set(as(owner))
        .send({ name: 'Private Club', handle: `PC-${u}`, description: 'Members only.', is_public: false, category: 'books' });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ handle: `pc-${u}`, description: 'Members only.', is_public: false, category: 'books' });
      expect(await rows(sql`select handle, description, is_public, category from communities where id = ${res.body.data.id}`)).toEqual([
        { handle: `pc-${u}`, description: 'Members only.', is_public: false, category: 'books' },
      ]);
    });

    it('accepts a description of exactly 2000 characters', async () => {
      const owner = await actor();
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Long', handle: `c-${unique()}`, description: 'd'.repeat(2000) });
      expect(res.status).toBe(201);
      expect(res.body.data.description).toHaveLength(2000);
    });

    it('answers 409 handle_taken for a taken handle, also when it differs only in letter case', async () => {
      const [first, second] = await Promise.all([actor(), actor()]);
      const handle = `c-${unique()}`;
      expect((await t.api.post('/v1/communities').set(as(first)).send({ name: 'First', handle })).status).toBe(201);

      expectError(await t.api.post('/v1/communities').set(as(second)).send({ name: 'Second', handle }), 409, 'handle_taken');
      expectError(await t.api.post('/v1/communities').set(as(second)).send({ name: 'Second', handle: handle.toUpperCase() }), 409, 'handle_taken');
      expect(await countHandle(handle)).toBe(1);
      expect(await rows(sql`select id from communities where created_by = ${second.id}`)).toHaveLength(0);
    });

    it.each([
      ['too short', 'ab'],
      ['leading hyphen', '-abc-HANDLE'],
      ['trailing hyphen', 'abc-'],
      ['a space', 'has space'],
      ['an underscore', 'has_underscore'],
      ['non-ASCII letters', 'caf\u00e9-club'],
      ['41 characters', 'a'.repeat(41)],
    ])('answers 400 invalid_input for a handle with %s and writes no row', async (_name, bad) => {
      const owner = await actor();
      const handle = bad === 'ab' || bad === 'abc-' || bad === 'a'.repeat(41) ? bad : `${bad}-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Bad handle', handle });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'handle' })]));
      expect(await rows(sql`select id from communities where created_by = ${owner.id}`)).toHaveLength(0);
    });

    it.each([
      ['a name over 100 characters', { name: 'n'.repeat(101) }, 'name'],
      ['an empty name', { name: '   ' }, 'name'],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
      ['a category over 50 characters', { category: 'c'.repeat(51) }, 'category'],
    ])('answers 400 invalid_input for %s and writes no row', async (_name, extra, field) => {
      const owner = await actor();
      const handle = `c-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Valid', handle, ...extra });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await countHandle(handle)).toBe(0);
    });

    it.each([
      ['no name', (h: string) => ({ handle: h })],
      ['no handle', () => ({ name: 'No handle' })],
      ['a numeric name', (h: string) => ({ name: 12, handle: h })],
      ['a string is_public', (h: string) => ({ name: 'X', handle: h, is_public: 'yes' })],
    ])('answers 400 invalid_input for %s and writes no row', async (_name, body) => {
      const owner = await actor();
      const handle = `c-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send(body(handle));
      expectError(res, 400, 'invalid_input');
      expect(await rows(sql`select id from communities where created_by = ${owner.id}`)).toHaveLength(0);
    });

    it.each([
      ['a numeric category', { category: 5 }, 'category', 'String cannot represent a non string value: 5'],
      ['a string is_public', { is_public: 'yes' }, 'is_public', 'Boolean cannot represent a non boolean value: "yes"'],
    ])('names the field and what is wrong for %s (a type the schema refuses)', async (_name, extra, field, message) => {
      const owner = await actor();
      const handle = `c-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Typed', handle, ...extra });
      expectError(res, 400, 'invalid_input');
      expect(res.body.error.message).toBe(`${field}: ${message}`);
      expect(res.body.error.details).toEqual([{ field, message }]);
      expect(await countHandle(handle)).toBe(0);
    });

    it('answers 401 unauthorized without an access token and writes no row', async () => {
      const handle = `c-${unique()}`;
      expectError(await t.api.post('/v1/communities').send({ name: 'Anon', handle }), 401, 'unauthorized');
      expect(await countHandle(handle)).toBe(0);
    });

    it('answers 413 payload_too_large in the resource envelope for a body over 100 KB and writes no row', async () => {
      const owner = await actor();
      const handle = `c-${unique()}`;
      const res = await t.api.post('/v1/communities').set(as(owner)).send({ name: 'Big', handle, description: 'x'.repeat(110 * 1024) });
      expectError(res, 413, 'payload_too_large');
      expect(await countHandle(handle)).toBe(0);
    });

    it('answers 415 unsupported_media_type for a form body', async () => {
      const owner = await actor();
      const res = await t.api.post('/v1/communities').set(as(owner)).type('form').send({ name: 'Form', handle: `c-${unique()}` });
      expectError(res, 415, 'unsupported_media_type');
    });

    it('answers 400 malformed_json for broken JSON', async () => {
      const owner = await actor();
      const res = await t.api.post('/v1/communities').set(as(owner)).set('content-type', 'application/json').send('{"name": ');
      expectError(res, 400, 'malformed_json');
    });
  });

  describe('GET /v1/communities/:id', () => {
    it('returns the tribe with its member count and the caller role', async () => {
      const { tribe, member, outsider } = await staffedTribe({ description: 'About us' });
      const res = await t.api.get(`/v1/communities/${tribe.id}`).set(as(member));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: tribe.id, handle: tribe.handle, name: tribe.name, description: 'About us', member_count: 4, is_public: true, viewer_role: 'member' });
      const asOutsider = await t.api.get(`/v1/communities/${tribe.id}`).set(as(outsider));
      expect(asOutsider.body.data).toMatchObject({ id: tribe.id, member_count: 4, viewer_role: null });
    });

    it('shows a private tribe metadata to outsiders', async () => {
      const owner = await actor();
      const outsider = await actor();
      const tribe = await createTribe(t, owner, { isPublic: false });
      const res = await t.api.get(`/v1/communities/${tribe.id}`).set(as(outsider));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: tribe.id, is_public: false, viewer_role: null });
    });

    it.each([
      ['an unknown UUID', '00000000-0000-4000-8000-000000000000'],
      ['a non-UUID id', 'not-a-uuid'],
      ['a handle instead of an id', 'some-handle'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const user = await actor();
      expectError(await t.api.get(`/v1/communities/${id}`).set(as(user)), 404, 'not_found');
    });

    it('answers 401 unauthorized without an access token', async () => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      expectError(await t.api.get(`/v1/communities/${tribe.id}`), 401, 'unauthorized');
    });
  });

  describe('GET /v1/communities', () => {
    /** Three tribes whose names share a unique word, created oldest to newest. */
    async function threeTribes() {
      const owner = await actor();
      const word = `Zq${unique()}`;
      const made = [];
      for (const n of ['one', 'two', 'three']) made.push(await createTribe(t, owner, { name: `${word} ${n}` }));
      return { owner, word, made };
    }

    it('filters by name (case-insensitive), newest first, with exact pagination', async () => {
      const { owner, word, made } = await threeTribes();
      await createTribe(t, owner, { name: 'Unrelated name' });
      const res = await t.api.get('/v1/communities').query({ search: word.toLowerCase() }).set(as(owner));
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: any) => c.id)).toEqual([made[2].id, made[1].id, made[0].id]);
      expect(res.body.data[0]).toMatchObject({ name: `${word} three`, member_count: 1, viewer_role: 'owner' });
      expect(res.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });
    });

    it('pages with page and per_page and says whether more exist', async () => {
      const { owner, word, made } = await threeTribes();
      const first = await t.api.get('/v1/communities').query({ search: word, per_page: 2, page: 1 }).set(as(owner));
      expect(first.body.data.map((c: any) => c.id)).toEqual([made[2].id, made[1].id]);
      expect(first.body.pagination).toEqual({ page: 1, per_page: 2, has_more: true });
      const second = await t.api.get('/v1/communities').query({ search: word, per_page: 2, page: 2 }).set(as(owner));
      expect(second.body.data.map((c: any) => c.id)).toEqual([made[0].id]);
      expect(second.body.pagination).toEqual({ page: 2, per_page: 2, has_more: false });
      const beyond = await t.api.get('/v1/communities').query({ search: word, per_page: 2, page: 3 }).set(as(owner));
      expect(beyond.status).toBe(200);
      expect(beyond.body).toEqual({ data: [], pagination: { page: 3, per_page: 2, has_more: false } });
    });

    it('says has_more false when the last page is exactly full', async () => {
      const { owner, word } = await threeTribes();
      const res = await t.api.get('/v1/communities').query({ search: word, per_page: 3 }).set(as(owner));
      expect(res.body.data).toHaveLength(3);
      expect(res.body.pagination).toEqual({ page: 1, per_page: 3, has_more: false });
    });

    it('clamps per_page above 50 to 50', async () => {
      const user = await actor();
      for (const perPage of ['51', '5000']) {
        const res = await t.api.get('/v1/communities').query({ per_page: perPage }).set(as(user));
        expect(res.status).toBe(200);
        expect(res.body.pagination.per_page).toBe(50);
        expect(res.body.data.length).toBeLessThanOrEqual(50);
      }
    });

    it('treats % and _ in search as plain characters', async () => {
      const { owner, word } = await threeTribes();
      const res = await t.api.get('/v1/communities').query({ search: `${word}%` }).set(as(owner));
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      const underscore = await t.api.get('/v1/communities').query({ search: `${word}_one` }).set(as(owner));
      expect(underscore.body.data).toEqual([]);
    });

    it.each([
      ['per_page=0', 'per_page=0'],
      ['per_page=-1', 'per_page=-1'],
      ['per_page=abc', 'per_page=abc'],
      ['page=abc', 'page=abc'],
      ['page=0', 'page=0'],
      ['page=1.5', 'page=1.5'],
      ['page given twice', 'page=1&page=2'],
      ['a search over 100 characters', `search=${'s'.repeat(101)}`],
    ])('answers 400 invalid_query for %s', async (_name, query) => {
      const user = await actor();
      expectError(await t.api.get(`/v1/communities?${query}`).set(as(user)), 400, 'invalid_query');
    });

    it('answers 401 unauthorized without an access token', async () => {
      expectError(await t.api.get('/v1/communities'), 401, 'unauthorized');
    });
  });

  describe('PATCH /v1/communities/:id', () => {
    const snapshot = async (id: string) =>
      (await rows(sql`select name, handle, description, is_public, category, updated_at from communities where id = ${id}`))[0];

    it('changes only the sent fields when the owner sends them', async () => {
      const owner = await actor();
      const tribe = await createTribe(t, owner, { description: 'Original', category: 'art' });
      const before = await snapshot(tribe.id);
      const res = await t.api.patch(`/v1/communities/${tribe.id}`).set(as(owner)).send({ name: 'Renamed' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: tribe.id, name: 'Renamed', handle: tribe.handle, description: 'Original', is_public: true, category: 'art' });
      const after = await snapshot(tribe.id);
      expect(after).toMatchObject({ name: 'Renamed', handle: tribe.handle, description: 'Original', is_public: true, category: 'art' });
      expect(new Date(after.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(before.updated_at).getTime());

      const flip = await t.api.patch(`/v1/communities/${tribe.id}`).set(as(owner)).send({ is_public: false, category: null });
      expect(flip.status).toBe(200);
      expect(await snapshot(tribe.id)).toMatchObject({ name: 'Renamed', description: 'Original', is_public: false, category: null });
    });

    it('lets an admin update the tribe', async () => {
      const { tribe, admin } = await staffedTribe();
      const res = await t.api.patch(`/v1/communities/${tribe.id}`).set(as(admin)).send({ description: 'By the admin' });
      expect(res.status).toBe(200);
      expect(res.body.data.description).toBe('By the admin');
      expect((await snapshot(tribe.id)).description).toBe('By the admin');
    });

    it.each(['member', 'moderator', 'outsider'] as const)('answers 403 forbidden to the %s and changes nothing', async (who) => {
      const staff = await staffedTribe();
      const before = await snapshot(staff.tribe.id);
      const res = await t.api.patch(`/v1/communities/${staff.tribe.id}`).set(as(staff[who])).send({ name: 'Hijacked' });
      expectError(res, 403, 'forbidden');
      expect(await snapshot(staff.tribe.id)).toEqual(before);
    });

    it.each([
      ['an empty body', {}],
      ['only unknown fields', { title: 'x', member_count: 99 }],
    ])('answers 400 empty for %s', async (_name, body) => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      const before = await snapshot(tribe.id);
      expectError(await t.api.patch(`/v1/communities/${tribe.id}`).set(as(owner)).send(body), 400, 'empty');
      expect(await snapshot(tribe.id)).toEqual(before);
    });

    it.each([
      ['a name over 100 characters', { name: 'n'.repeat(101) }],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }],
      ['an invalid handle', { handle: 'no spaces allowed' }],
      ['a null is_public', { is_public: null }],
    ])('answers 400 invalid_input for %s and changes nothing', async (_name, body) => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      const before = await snapshot(tribe.id);
      expectError(await t.api.patch(`/v1/communities/${tribe.id}`).set(as(owner)).send(body), 400, 'invalid_input');
      expect(await snapshot(tribe.id)).toEqual(before);
    });

    it('answers 409 handle_taken when renaming to a taken handle in any letter case', async () => {
      const owner = await actor();
      const [a, b] = [await createTribe(t, owner), await createTribe(t, owner)];
      expectError(await t.api.patch(`/v1/communities/${b.id}`).set(as(owner)).send({ handle: a.handle.toUpperCase() }), 409, 'handle_taken');
      expect((await snapshot(b.id)).handle).toBe(b.handle);
    });

    it.each([
      ['an unknown UUID', '00000000-0000-4000-8000-000000000000'],
      ['a non-UUID id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const user = await actor();
      expectError(await t.api.patch(`/v1/communities/${id}`).set(as(user)).send({ name: 'X' }), 404, 'not_found');
    });

    it('answers 401 unauthorized without an access token', async () => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      expectError(await t.api.patch(`/v1/communities/${tribe.id}`).send({ name: 'X' }), 401, 'unauthorized');
    });
  });

  describe('DELETE /v1/communities/:id', () => {
    const countIn = async (table: 'members' | 'posts' | 'comments' | 'communities', communityId: string) => {
      const column = table === 'communities' ? sql.raw('id') : sql.raw('community_id');
      return Number((await rows(sql`select count(*)::int as n from ${sql.raw(table)} where ${column} = ${communityId}`))[0].n);
    };

    /** A tribe with members, a post and a threaded comment, all written through the resource API. */
    async function populated() {
      const staff = await staffedTribe();
      const post = await t.api.post(`/v1/communities/${staff.tribe.id}/posts`).set(as(staff.member)).send({ content: '<p>hello</p>' });
      expect(post.status).toBe(201);
      const comment = await t.api.post(`/v1/communities/${staff.tribe.id}/posts/${post.body.data.id}/comments`).set(as(staff.admin)).send({ content: 'first' });
      expect(comment.status).toBe(201);
      const reply = await t.api
        .post(`/v1/communities/${staff.tribe.id}/posts/${post.body.data.id}/comments`)
        .set(as(staff.member))
        .send({ content: 'reply', parent_id: comment.body.data.id });
      expect(reply.status).toBe(201);
      return staff;
    }

    it('deletes the tribe for its owner with 204 and removes its members, posts and comments', async () => {
      const { tribe, owner } = await populated();
      const bystander = await populated();
      expect([await countIn('members', tribe.id), await countIn('posts', tribe.id), await countIn('comments', tribe.id)]).toEqual([4, 1, 2]);

      const res = await t.api.delete(`/v1/communities/${tribe.id}`).set(as(owner));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      for (const table of ['communities', 'members', 'posts', 'comments'] as const) expect(await countIn(table, tribe.id)).toBe(0);
      expectError(await t.api.get(`/v1/communities/${tribe.id}`).set(as(owner)), 404, 'not_found');
      expect(await rows(sql`select id from users where id = ${owner.id}`)).toHaveLength(1);

      const other = bystander.tribe.id;
      expect([await countIn('communities', other), await countIn('members', other), await countIn('posts', other), await countIn('comments', other)]).toEqual([1, 4, 1, 2]);
    });

    it.each(['admin', 'moderator', 'member', 'outsider'] as const)('answers 403 forbidden to the %s and deletes nothing', async (who) => {
      const staff = await populated();
      expectError(await t.api.delete(`/v1/communities/${staff.tribe.id}`).set(as(staff[who])), 403, 'forbidden');
      expect([await countIn('communities', staff.tribe.id), await countIn('members', staff.tribe.id), await countIn('posts', staff.tribe.id)]).toEqual([1, 4, 1]);
    });

    it.each([
      ['an unknown UUID', '00000000-0000-4000-8000-000000000000'],
      ['a non-UUID id', 'nope'],
    ])('answers 404 not_found for %s', async (_name, id) => {
      const user = await actor();
      expectError(await t.api.delete(`/v1/communities/${id}`).set(as(user)), 404, 'not_found');
    });

    it('answers 401 unauthorized without an access token and deletes nothing', async () => {
      const owner = await actor();
      const tribe = await createTribe(t, owner);
      expectError(await t.api.delete(`/v1/communities/${tribe.id}`), 401, 'unauthorized');
      expect(await countIn('communities', tribe.id)).toBe(1);
    });
  });

  describe('unknown routes', () => {
    it('answers 404 not_found in the resource envelope', async () => {
      const user = await actor();
      expectError(await t.api.get('/v1/communities/x/y/z/w/v').set(as(user)), 404, 'not_found');
      expectError(await t.api.get('/v1/auth/nothing-here').set(as(user)), 404, 'not_found');
    });
  });
});
