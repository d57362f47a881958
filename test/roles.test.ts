import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type SQL, sql } from 'drizzle-orm';
import { createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

/**
 * The role matrix of docs/roles.md, executed: every cell holding an error code runs the action as that role and
 * expects that code with nothing written; every ✓ cell expects success. The table is the test data, so the
 * document and the behaviour cannot drift apart.
 */

type Result = Awaited<ReturnType<typeof gql>>;
type Rows = Array<Record<string, any>>;
/** The rows of a SQL query on the service's database. */
const query = async (t: TestService, q: SQL): Promise<Rows> => ((await t.deps.database.db.execute(q)) as { rows: Rows }).rows;
const COLUMNS = ['owner', 'admin', 'moderator', 'member', 'outsider', 'anonymous'] as const;
type Column = (typeof COLUMNS)[number];
type Cell = { column: Column; deny: string } | { column: Column; allow: string };

function readMatrix(): Array<{ action: string; cells: Cell[] }> {
  const doc = readFileSync(new URL('../docs/roles.md', import.meta.url), 'utf8');
  const header = doc.split('\n').find((l) => l.startsWith('| action |'));
  if (!header) throw new Error('docs/roles.md has no "| action |" table');
  const columns = header.split('|').slice(1, -1).map((c) => c.trim());
  if (columns.join() !== ['action', ...COLUMNS].join()) throw new Error(`docs/roles.md columns are ${columns.join(', ')}`);
  return doc
    .split('\n')
    .filter((l) => l.startsWith('| ') && l !== header)
    .map((line) => {
      const [action, ...rest] = line.split('|').slice(1, -1).map((c) => c.trim());
      if (rest.length !== COLUMNS.length) throw new Error(`docs/roles.md row has ${rest.length} role cells: ${line}`);
      const cells: Cell[] = [];
      rest.forEach((text, i) => {
        const code = /`([a-z_]+)`/.exec(text)?.[1];
        if (code) cells.push({ column: COLUMNS[i], deny: code });
        else if (text.startsWith('✓')) cells.push({ column: COLUMNS[i], allow: text });
        else if (text !== '–') throw new Error(`docs/roles.md: cannot read cell "${text}" in ${line}`);
      });
      return { action, cells };
    });
}
const MATRIX = readMatrix();

interface World {
  tribe: { id: string; handle: string; name: string; isPublic: boolean };
  code?: string;
  owner: TestUser;
  admin: TestUser;
  moderator: TestUser;
  member: TestUser;
  /** A second plain member: author of "another member's" posts. */
  member2: TestUser;
  outsider: TestUser;
}

interface Arranged {
  /** Overrides the column's actor (a fresh user, so allowed actions leave the shared world as it was). */
  actor?: TestUser | null;
  [key: string]: unknown;
}

interface Row {
  /** The tribe is private. */
  private?: boolean;
  /** The row destroys its world when allowed: it gets one of its own. */
  own?: boolean;
  arrange?: (w: World, column: Column) => Promise<Arranged>;
  act: (w: World, actor: TestUser | null, arranged: Arranged) => Promise<Result | Result[]>;
  /** Extra checks after a denied attempt (for state the tribe snapshot does not cover). */
  denied?: (w: World, arranged: Arranged) => Promise<void>;
  /** Extra checks after an allowed attempt. */
  allowed?: (w: World, column: Column, results: Result[], arranged: Arranged) => Promise<void> | void;
}

const G = {
  community: 'query($h: String!){ community(handle: $h){ id } }',
  communities: 'query($s: String){ communities(search: $s){ items { id } } }',
  members: 'query($c: ID!){ members(communityId: $c){ items { id } } }',
  member: 'query($c: ID!, $u: ID!){ member(communityId: $c, userId: $u){ id } }',
  posts: 'query($c: ID!){ posts(communityId: $c){ items { id visibility } } }',
  post: 'query($id: ID!){ post(id: $id){ id } }',
  comments: 'query($id: ID!){ comments(postId: $id){ items { id } } }',
  createCommunity: 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }',
  updateCommunity: 'mutation($id: ID!, $n: String!){ updateCommunity(id: $id, input: {name: $n}){ id name } }',
  deleteCommunity: 'mutation($id: ID!){ deleteCommunity(id: $id) }',
  createInvite: 'mutation($c: ID!){ createInvite(communityId: $c) }',
  join: 'mutation($h: String!, $code: String){ joinCommunity(handle: $h, inviteCode: $code){ id role } }',
  leave: 'mutation($h: String!){ leaveCommunity(handle: $h) }',
  setRole: 'mutation($c: ID!, $u: ID!, $r: String!){ updateMemberRole(communityId: $c, userId: $u, role: $r){ role } }',
  removeMember: 'mutation($c: ID!, $u: ID!){ removeMember(communityId: $c, userId: $u) }',
  createPost: 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }',
  updatePost: 'mutation($id: ID!, $i: UpdatePostInput!){ updatePost(id: $id, input: $i){ id body isPinned } }',
  deletePost: 'mutation($id: ID!){ deletePost(id: $id) }',
  createComment: 'mutation($id: ID!){ createComment(postId: $id, input: {content: "a comment"}){ id } }',
  apiKeys: 'query($h: String!){ apiKeys(handle: $h){ keys { id revokedAt } } }',
  createApiKey: 'mutation($h: String!){ createApiKey(handle: $h, input: {name: "role test", scopes: ["members:read"]}){ id } }',
  revokeApiKey: 'mutation($h: String!, $id: ID!){ revokeApiKey(handle: $h, id: $id){ id revokedAt } }',
};
const PLATFORM_QUERIES = [
  '{ platformMe { id } }',
  '{ platformMembers { items { id } } }',
  'query($u: String!){ platformMember(username: $u){ id } }',
  '{ platformPosts { items { id } } }',
  '{ platformEvents { items { id } } }',
  '{ platformOrders { items { id } } }',
];

describe('role matrix (docs/roles.md)', () => {
  let t: TestService;
  const run = (actor: TestUser | null, query: string, variables: Record<string, unknown> = {}) => gql(t, actor, query, variables);
  const must = async (out: Promise<Result>) => {
    const r = await out;
    if (r.errors) throw new Error(JSON.stringify(r.errors));
    return r.data;
  };

  // ---- fixtures ----

  async function makeWorld(isPublic: boolean): Promise<World> {
    const [owner, admin, moderator, member, member2, outsider] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => signupUser(t)));
    const tribe = await createTribe(t, owner, { isPublic });
    const code = isPublic ? undefined : ((await must(run(owner, G.createInvite, { c: tribe.id }))).createInvite as string);
    for (const u of [admin, moderator, member, member2]) await join(t, u, tribe.handle, code);
    await setRole(t, owner, tribe.id, admin.id, 'admin');
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
    return { tribe, code, owner, admin, moderator, member, member2, outsider };
  }
  const shared = new Map<boolean, Promise<World>>();
  const worldFor = (row: Row) => {
    const isPublic = !row.private;
    if (row.own) return makeWorld(isPublic);
    if (!shared.has(isPublic)) shared.set(isPublic, makeWorld(isPublic));
    return shared.get(isPublic)!;
  };

  const actorOf = (w: World, column: Column): TestUser | null => (column === 'anonymous' ? null : w[column]);
  /** A new user holding `role` in the world's tribe. */
  async function fresh(w: World, role: 'admin' | 'moderator' | 'member'): Promise<TestUser> {
    const u = await signupUser(t);
    await join(t, u, w.tribe.handle, w.code);
    if (role !== 'member') await setRole(t, w.owner, w.tribe.id, u.id, role);
    return u;
  }
  /** A fresh user for destructive actions of a member role; the fixed users otherwise. */
  async function freshActor(w: World, column: Column): Promise<TestUser | null> {
    if (column === 'admin' || column === 'moderator' || column === 'member') return fresh(w, column);
    if (column === 'outsider') return signupUser(t);
    return actorOf(w, column);
  }
  const postBy = async (author: TestUser, w: World, input: Record<string, unknown> = {}) =>
    (await must(run(author, G.createPost, { c: w.tribe.id, i: { content: 'a post', ...input } }))).createPost.id as string;
  /** A post by the column's user; for the outsider column, by a member who has left since. */
  async function ownPost(w: World, column: Column): Promise<Arranged> {
    if (column === 'outsider') {
      const former = await fresh(w, 'member');
      const postId = await postBy(former, w);
      await must(run(former, G.leave, { h: w.tribe.handle }));
      return { actor: former, postId };
    }
    return { postId: await postBy(actorOf(w, column)!, w) };
  }
  const othersPost = async (w: World, input: Record<string, unknown> = {}): Promise<Arranged> => ({ postId: await postBy(w.member2, w, input) });

  /** Everything of the tribe an action could change. */
  async function snapshot(w: World) {
    const c = w.tribe.id;
    const rows = await query(t, sql`select
      (select row_to_json(x) from (select name, handle, description, is_public, category from communities where id = ${c}) x) as community,
      (select coalesce(json_agg(x order by x.user_id), '[]') from (select user_id, role from members where community_id = ${c}) x) as members,
      (select coalesce(json_agg(x order by x.id), '[]') from (select id, body, status, visibility, pinned_at, media_urls from posts where community_id = ${c}) x) as posts,
      (select count(*)::int from comments where community_id = ${c}) as comments,
      (select count(*)::int from community_invites where community_id = ${c}) as invites,
      (select count(*)::int from outbox_events where community_id = ${c}) as events`);
    return rows[0];
  }

  const ROWS: Record<string, Row> = {
    '`community`, `communities` (tribe metadata)': {
      act: (w, a) => Promise.all([run(a, G.community, { h: w.tribe.handle }), run(a, G.communities, { s: w.tribe.name })]),
    },
    '`members`, `member` of a public tribe': {
      act: (w, a) => Promise.all([run(a, G.members, { c: w.tribe.id }), run(a, G.member, { c: w.tribe.id, u: w.owner.id })]),
    },
    '`members`, `member` of a private tribe': {
      private: true,
      act: (w, a) => Promise.all([run(a, G.members, { c: w.tribe.id }), run(a, G.member, { c: w.tribe.id, u: w.owner.id })]),
    },
    '`posts` of a public tribe': {
      arrange: async (w) => ({
        ids: {
          public: await postBy(w.member2, w),
          members: await postBy(w.member2, w, { visibility: 'members' }),
          paid: await postBy(w.member2, w, { visibility: 'paid' }),
        },
      }),
      act: (w, a) => run(a, G.posts, { c: w.tribe.id }),
      allowed: (_w, column, [result], arranged) => {
        const ids = arranged.ids as Record<string, string>;
        const seen = new Set(result.data.posts.items.map((p: { id: string }) => p.id));
        const expected = { owner: ['public', 'members', 'paid'], admin: ['public', 'members', 'paid'], moderator: ['public', 'members', 'paid'], member: ['public', 'members'], outsider: ['public'], anonymous: ['public'] }[column];
        expect(Object.keys(ids).filter((v) => seen.has(ids[v]))).toEqual(expected);
      },
    },
    '`posts` of a private tribe': { private: true, act: (w, a) => run(a, G.posts, { c: w.tribe.id }) },
    '`post`, `comments` of a public post of a public tribe': {
      arrange: (w) => othersPost(w),
      act: (_w, a, { postId }) => Promise.all([run(a, G.post, { id: postId }), run(a, G.comments, { id: postId })]),
    },
    '`post` of a private tribe': { private: true, arrange: (w) => othersPost(w), act: (_w, a, { postId }) => run(a, G.post, { id: postId }) },
    '`comments` of a post of a private tribe': { private: true, arrange: (w) => othersPost(w), act: (_w, a, { postId }) => run(a, G.comments, { id: postId }) },
    '`post`: a members-only post': { arrange: (w) => othersPost(w, { visibility: 'members' }), act: (_w, a, { postId }) => run(a, G.post, { id: postId }) },
    "`post`: another member's paid post": { arrange: (w) => othersPost(w, { visibility: 'paid' }), act: (_w, a, { postId }) => run(a, G.post, { id: postId }) },
    "`post`: another member's draft": { arrange: (w) => othersPost(w, { status: 'draft' }), act: (_w, a, { postId }) => run(a, G.post, { id: postId }) },
    '`createCommunity`': {
      arrange: async () => ({ handle: `role-${unique()}` }),
      act: (_w, a, { handle }) => run(a, G.createCommunity, { i: { name: 'Role test', handle } }),
      denied: async (_w, { handle }) => {
        expect(await query(t, sql`select 1 from communities where handle = ${handle as string}`)).toEqual([]);
      },
    },
    '`updateCommunity` (name, handle, description, privacy, category)': {
      act: (w, a) => run(a, G.updateCommunity, { id: w.tribe.id, n: `Renamed ${unique()}` }),
    },
    '`deleteCommunity`': {
      own: true,
      act: (w, a) => run(a, G.deleteCommunity, { id: w.tribe.id }),
      allowed: async (w) => {
        expect(await query(t, sql`select 1 from communities where id = ${w.tribe.id}`)).toEqual([]);
      },
    },
    '`createInvite`': { act: (w, a) => run(a, G.createInvite, { c: w.tribe.id }) },
    '`joinCommunity`: a public tribe': {
      arrange: async (w, column) => (column === 'outsider' ? { actor: await signupUser(t) } : {}),
      act: (w, a) => run(a, G.join, { h: w.tribe.handle }),
      allowed: (_w, column, [result]) => expect(result.data.joinCommunity.role).toBe(column === 'outsider' ? 'member' : column),
    },
    '`joinCommunity`: a private tribe without an invite': {
      private: true,
      act: (w, a) => run(a, G.join, { h: w.tribe.handle }),
      allowed: (_w, column, [result]) => expect(result.data.joinCommunity.role).toBe(column),
    },
    '`joinCommunity`: a private tribe with its invite code': {
      private: true,
      arrange: async (w, column) => (column === 'outsider' ? { actor: await signupUser(t) } : {}),
      act: (w, a) => run(a, G.join, { h: w.tribe.handle, code: w.code }),
      allowed: (_w, column, [result]) => expect(result.data.joinCommunity.role).toBe(column === 'outsider' ? 'member' : column),
    },
    '`leaveCommunity`': {
      arrange: async (w, column) => ({ actor: await freshActor(w, column) }),
      act: (w, a) => run(a, G.leave, { h: w.tribe.handle }),
    },
    '`updateMemberRole`: a member to moderator': {
      arrange: async (w) => ({ target: await fresh(w, 'member') }),
      act: (w, a, { target }) => run(a, G.setRole, { c: w.tribe.id, u: (target as TestUser).id, r: 'moderator' }),
    },
    '`updateMemberRole`: a moderator to member': {
      arrange: async (w) => ({ target: await fresh(w, 'moderator') }),
      act: (w, a, { target }) => run(a, G.setRole, { c: w.tribe.id, u: (target as TestUser).id, r: 'member' }),
    },
    '`updateMemberRole`: a member to admin': {
      arrange: async (w) => ({ target: await fresh(w, 'member') }),
      act: (w, a, { target }) => run(a, G.setRole, { c: w.tribe.id, u: (target as TestUser).id, r: 'admin' }),
    },
    '`updateMemberRole`: another admin to member': {
      arrange: async (w) => ({ target: await fresh(w, 'admin') }),
      act: (w, a, { target }) => run(a, G.setRole, { c: w.tribe.id, u: (target as TestUser).id, r: 'member' }),
    },
    '`updateMemberRole`: the owner': {
      act: (w, a) => run(a, G.setRole, { c: w.tribe.id, u: w.owner.id, r: 'member' }),
    },
    "`updateMemberRole`: one's own role": {
      act: (w, a) => run(a, G.setRole, { c: w.tribe.id, u: a!.id, r: a === w.member ? 'moderator' : 'member' }),
    },
    '`removeMember`: a member': {
      arrange: async (w) => ({ target: await fresh(w, 'member') }),
      act: (w, a, { target }) => run(a, G.removeMember, { c: w.tribe.id, u: (target as TestUser).id }),
    },
    '`removeMember`: a moderator': {
      arrange: async (w) => ({ target: await fresh(w, 'moderator') }),
      act: (w, a, { target }) => run(a, G.removeMember, { c: w.tribe.id, u: (target as TestUser).id }),
    },
    '`removeMember`: another admin': {
      arrange: async (w) => ({ target: await fresh(w, 'admin') }),
      act: (w, a, { target }) => run(a, G.removeMember, { c: w.tribe.id, u: (target as TestUser).id }),
    },
    '`removeMember`: the owner': { act: (w, a) => run(a, G.removeMember, { c: w.tribe.id, u: w.owner.id }) },
    '`removeMember`: oneself': { act: (w, a) => run(a, G.removeMember, { c: w.tribe.id, u: a!.id }) },
    '`createPost`': { act: (w, a) => run(a, G.createPost, { c: w.tribe.id, i: { content: 'new post' } }) },
    '`createPost` pinned': { act: (w, a) => run(a, G.createPost, { c: w.tribe.id, i: { content: 'pinned post', isPinned: true } }) },
    '`createComment` on a public post': { arrange: (w) => othersPost(w), act: (_w, a, { postId }) => run(a, G.createComment, { id: postId }) },
    "`updatePost`: content of one's own post": {
      arrange: ownPost,
      act: (_w, a, { postId }) => run(a, G.updatePost, { id: postId, i: { content: 'edited' } }),
      allowed: (_w, _c, [result]) => expect(result.data.updatePost.body).toBe('edited'),
    },
    "`updatePost`: content of another member's post": {
      arrange: (w) => othersPost(w),
      act: (_w, a, { postId }) => run(a, G.updatePost, { id: postId, i: { content: 'edited by someone else' } }),
    },
    "`updatePost`: pin another member's post": {
      arrange: (w) => othersPost(w),
      act: (_w, a, { postId }) => run(a, G.updatePost, { id: postId, i: { isPinned: true } }),
      allowed: (_w, _c, [result]) => expect(result.data.updatePost.isPinned).toBe(true),
    },
    "`deletePost`: one's own post": { arrange: ownPost, act: (_w, a, { postId }) => run(a, G.deletePost, { id: postId }) },
    "`deletePost`: another member's post": { arrange: (w) => othersPost(w), act: (_w, a, { postId }) => run(a, G.deletePost, { id: postId }) },
    '`apiKeys` (control plane)': { act: (w, a) => run(a, G.apiKeys, { h: w.tribe.handle }) },
    '`createApiKey` (control plane)': {
      arrange: async (w) => ({ keys: (await must(run(w.owner, G.apiKeys, { h: w.tribe.handle }))).apiKeys.keys.length }),
      act: (w, a) => run(a, G.createApiKey, { h: w.tribe.handle }),
      denied: async (w, { keys }) => {
        expect((await must(run(w.owner, G.apiKeys, { h: w.tribe.handle }))).apiKeys.keys).toHaveLength(keys as number);
      },
    },
    '`revokeApiKey` (control plane)': {
      arrange: async (w) => ({ keyId: (await must(run(w.owner, G.createApiKey, { h: w.tribe.handle }))).createApiKey.id }),
      act: (w, a, { keyId }) => run(a, G.revokeApiKey, { h: w.tribe.handle, id: keyId }),
      denied: async (w, { keyId }) => {
        const keys = (await must(run(w.owner, G.apiKeys, { h: w.tribe.handle }))).apiKeys.keys as Array<{ id: string; revokedAt: string | null }>;
        expect(keys.find((k) => k.id === keyId)).toEqual({ id: keyId, revokedAt: null });
      },
    },
    'Platform API queries (`platformMe`, `platformMembers`, `platformMember`, `platformPosts`, `platformEvents`, `platformOrders`) with a session': {
      act: (w, a) => Promise.all(PLATFORM_QUERIES.map((q) => run(a, q, q.includes('$u') ? { u: w.owner.username } : {}))),
    },
  };

  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await Promise.allSettled(shared.values());
    await t.stop();
  });

  it('implements every row of the table, and the table lists every implemented row', () => {
    expect(MATRIX.map((r) => r.action).filter((a) => !ROWS[a])).toEqual([]);
    expect(Object.keys(ROWS).filter((a) => !MATRIX.some((r) => r.action === a))).toEqual([]);
  });

  for (const { action, cells } of MATRIX) {
    const row = ROWS[action];
    if (!row) continue;
    describe(action, () => {
      let w: World;
      beforeAll(async () => {
        w = await worldFor(row);
      });

      const attempt = async (column: Column) => {
        const arranged = row.arrange ? await row.arrange(w, column) : {};
        const actor = arranged.actor !== undefined ? arranged.actor : actorOf(w, column);
        const before = await snapshot(w);
        const out = await row.act(w, actor, arranged);
        return { arranged, before, results: Array.isArray(out) ? out : [out] };
      };

      const denies = cells.flatMap((c) => ('deny' in c ? [[c.column, c.deny] as const] : []));
      if (denies.length > 0) {
        it.each(denies)('%s gets %s and changes nothing', async (column, code) => {
          const { arranged, before, results } = await attempt(column);
          for (const r of results) {
            expect(r.errors?.map((e) => e.extensions?.reason)).toEqual([code]);
          }
          expect(await snapshot(w)).toEqual(before);
          if (row.denied) await row.denied(w, arranged);
        });
      }

      const allows = cells.flatMap((c) => ('allow' in c ? [[c.column, c.allow] as const] : []));
      if (allows.length > 0) {
        it.each(allows)('%s is allowed (%s)', async (column) => {
          const { arranged, results } = await attempt(column);
          for (const r of results) expect(r.errors).toBeUndefined();
          if (row.allowed) await row.allowed(w, column, results, arranged);
        });
      }
    });
  }
});
