// Issue 15's scale goal for the resource API posts list: pages at an offset of POST_PAGE_STEP or more seek from a
// remembered sort key (content.repository.ts `listPosts`), counted per tribe and per filter (what the viewer may
// see). What a caller sees: the very posts a plain OFFSET gives for that viewer, page by page across the steps, ties
// on created_at included; rows always read now; a remembered key stands POST_PAGE_KEY_TTL_MS by the service's clock;
// a deep page costs the statements of a first page.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { POST_PAGE_KEY_TTL_MS, POST_PAGE_STEP } from '../subgraphs/content/content.repository.js';
import { accessToken, createTribe, join, setRole, signupUser, unique, type TestUser } from './factory.js';
import { bearer, sqlRows, startService, type TestService } from './support.js';

const POSTS = 2 * POST_PAGE_STEP + 1_000;
const PER_PAGE = 50;
const STEP_PAGE = POST_PAGE_STEP / PER_PAGE;

describe('resource API posts list: deep pages', () => {
  let t: TestService;
  let now = new Date('2026-06-01T12:00:00Z');
  let tribe: { id: string; handle: string };
  let owner: TestUser & { token: string };
  let member: TestUser & { token: string };
  let outsider: TestUser & { token: string };

  const page = async (who: { token: string }, n: number, communityId = tribe.id) => {
    const res = await t.api.get(`/v1/communities/${communityId}/posts`).query({ page: n, per_page: PER_PAGE }).set(bearer(who));
    expect(res.status).toBe(200);
    return res.body as { data: Array<{ id: string }>; pagination: { page: number; has_more: boolean } };
  };
  /** The page as a plain OFFSET over the rows `who` may see (the owner: everything; a member: public and members-only, removed only their own; an outsider: public, not removed). */
  const plainOffset = async (who: 'owner' | 'member' | 'outsider', n: number) => {
    const filter =
      who === 'owner'
        ? sql`true`
        : who === 'member'
          ? sql`visibility in ('public', 'members') and (removed_at is null or author_id = ${member.id})`
          : sql`visibility = 'public' and (removed_at is null or author_id = ${outsider.id})`;
    const rows = await sqlRows<{ id: string }>(
      t,
      sql`select id from posts where community_id = ${tribe.id} and status = 'published' and ${filter}
          order by created_at desc, id desc limit ${PER_PAGE} offset ${(n - 1) * PER_PAGE}`,
    );
    return rows.map((r) => r.id);
  };
  const ids = async (who: { token: string }, n: number) => (await page(who, n)).data.map((p) => p.id);

  beforeAll(async () => {
    t = await startService({}, () => now);
    const withToken = async (u: TestUser) => ({ ...u, token: await accessToken(t, u) });
    owner = await withToken(await signupUser(t));
    member = await withToken(await signupUser(t));
    outsider = await withToken(await signupUser(t));
    tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
    // Created a microsecond apart, every seventh five at the same instant (ties broken by id); a quarter members-only,
    // one in twenty paid, one in thirty removed by a moderator, a few drafts; some by the member.
    const tag = unique();
    await t.deps.database.db.execute(sql`
      insert into posts (community_id, author_id, body, status, visibility, removed_at, removed_reason, published_at, created_at)
      select ${tribe.id}, case when g % 11 = 0 then ${member.id}::uuid else ${owner.id}::uuid end, '<p>' || ${tag} || ' ' || g || '</p>',
             case when g % 97 = 0 then 'draft' else 'published' end,
             case when g % 20 = 0 then 'paid' when g % 4 = 0 then 'members' else 'public' end,
             case when g % 30 = 0 then timestamptz '2026-05-01' end, case when g % 30 = 0 then 'spam' end,
             timestamptz '2026-01-01', timestamptz '2026-01-01' + (case when g % 7 = 0 then g - g % 5 else g end) * interval '1 microsecond'
      from generate_series(1, ${POSTS}) g`);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers the posts a plain OFFSET gives each viewer, on both sides of each step and at the end, whoever asked first', async () => {
    // Interleaved viewers: a key counted for one filter must never serve another's.
    for (const n of [STEP_PAGE, STEP_PAGE + 1, STEP_PAGE + 2, 2 * STEP_PAGE, 2 * STEP_PAGE + 1, 2 * STEP_PAGE + 7]) {
      for (const [who, actor] of [['member', member], ['owner', owner], ['outsider', outsider]] as const) {
        expect([who, n, await ids(actor, n)]).toEqual([who, n, await plainOffset(who, n)]);
      }
    }
    const total = Number((await sqlRows<{ n: number }>(t, sql`select count(*)::int as n from posts where community_id = ${tribe.id} and status = 'published'`))[0].n);
    const last = Math.ceil(total / PER_PAGE);
    for (const n of [last - 1, last]) expect(await ids(owner, n)).toEqual(await plainOffset('owner', n));
    const end = await page(owner, last);
    expect(end.pagination.has_more).toBe(false);
    expect((await page(owner, last + 1)).data).toEqual([]);
    expect((await page(outsider, last)).data).toEqual([]); // the outsider's list is shorter: past its end
  });

  it('costs the statements of a first page once its key is remembered; a change shows at once in the rows, and in the positions after the key expires', async () => {
    const deep = 2 * STEP_PAGE + 3;
    await page(member, deep); // remembers the keys
    await page(member, 1); // and the authors
    const statements = async (n: number) => {
      const before = t.deps.database.stats.statements;
      await page(member, n);
      return t.deps.database.stats.statements - before;
    };
    expect(await statements(deep)).toBe(await statements(1));

    // A post of the deep page is deleted, and one near the top too.
    const shown = await ids(member, deep);
    const [top] = await ids(member, 1);
    await t.deps.database.db.execute(sql`delete from posts where id in (${shown[10]}, ${top})`);
    const meanwhile = await ids(member, deep);
    expect(meanwhile).not.toContain(shown[10]);
    expect(meanwhile.length).toBe(PER_PAGE);

    now = new Date(now.getTime() + POST_PAGE_KEY_TTL_MS + 1);
    expect(await ids(member, deep)).toEqual(await plainOffset('member', deep));
  });

  it("never lists another tribe's posts at a deep offset", async () => {
    const other = await signupUser(t);
    const otherTribe = await createTribe(t, other);
    const body = await page({ token: await accessToken(t, other) }, STEP_PAGE + 1, otherTribe.id);
    expect(body.data).toEqual([]);
    expect(body.pagination.has_more).toBe(false);
  });

  it('answers the deepest page it accepts with an empty list, and a page beyond it with 400 invalid_query', async () => {
    const deepest = await page(owner, 1_000_000);
    expect(deepest.data).toEqual([]);
    expect(deepest.pagination.has_more).toBe(false);
    for (const bad of ['1000001', '0', '1e9', 'x']) {
      const res = await t.api.get(`/v1/communities/${tribe.id}/posts`).query({ page: bad, per_page: PER_PAGE }).set(bearer(owner));
      expect([bad, res.status, res.body.error?.code]).toEqual([bad, 400, 'invalid_query']);
    }
    expect(await ids(owner, STEP_PAGE + 1)).toEqual(await plainOffset('owner', STEP_PAGE + 1)); // still answers as before
  });

  it('a moderator sees what the owner sees at a deep offset', async () => {
    const moderator = await signupUser(t);
    await join(t, moderator, tribe.handle);
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
    const token = await accessToken(t, moderator);
    expect(await ids({ token }, STEP_PAGE + 1)).toEqual(await plainOffset('owner', STEP_PAGE + 1));
  });
});
