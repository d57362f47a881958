// Issue 15's scale goal for the Platform API members list: pages at an offset of MEMBER_PAGE_STEP or more seek from
// a remembered sort key (members.repository.ts `pageOfMembers`). What a caller sees: the very members a plain
// OFFSET gives, page by page across the steps, ties on joined_at included; rows always read now; a remembered key
// stands MEMBER_PAGE_KEY_TTL_MS by the service's clock; a deep page costs the statements of a first page.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { MEMBER_PAGE_KEY_TTL_MS, MEMBER_PAGE_STEP } from '../subgraphs/members/members.repository.js';
import { createKey, createTribe, signupUser, unique, type CreatedKey } from './factory.js';
import { platformGet, sqlRows, startService, type TestService } from './support.js';

const MEMBERS = 2 * MEMBER_PAGE_STEP + 1_000; // and the owner
const PAGE_SIZE = 100;

describe('Platform API members list: deep pages', () => {
  let t: TestService;
  let now = new Date('2026-06-01T12:00:00Z');
  let tribe: { id: string; handle: string };
  let key: CreatedKey;

  const page = async (n: number) => {
    const res = await platformGet(t, `/v1/members?page=${n}&pageSize=${PAGE_SIZE}`, key.key);
    expect(res.status).toBe(200);
    return res.body as { data: Array<{ userId: string }>; page: number; hasMore: boolean };
  };
  const plainOffset = async (n: number) =>
    (
      await sqlRows<{ user_id: string }>(
        t,
        sql`select user_id from members where community_id = ${tribe.id} order by joined_at desc, id desc limit ${PAGE_SIZE} offset ${(n - 1) * PAGE_SIZE}`,
      )
    ).map((r) => r.user_id);

  beforeAll(async () => {
    t = await startService({}, () => now);
    const owner = await signupUser(t);
    tribe = await createTribe(t, owner);
    key = await createKey(t, owner, tribe.handle, ['members:read']);
    const tag = unique();
    // Joined a microsecond apart, every seventh five at the same instant (ties broken by id).
    await t.deps.database.db.execute(sql`
      with u as (
        insert into users (email, username, display_name)
        select 'deep_' || ${tag} || '_' || g || '@example.com', 'deep_' || ${tag} || '_' || g, 'Deep ' || g
        from generate_series(1, ${MEMBERS}) g
        returning id, username)
      insert into members (community_id, user_id, role, joined_at)
      select ${tribe.id}, u.id, 'member',
             timestamptz '2026-01-01' + (case when n % 7 = 0 then n - n % 5 else n end) * interval '1 microsecond'
      from (select id, row_number() over (order by username) as n from u) u`);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers the members a plain OFFSET gives, on both sides of each step and at the end', async () => {
    const step = MEMBER_PAGE_STEP / PAGE_SIZE;
    const last = Math.ceil((MEMBERS + 1) / PAGE_SIZE);
    for (const n of [step, step + 1, step + 2, 2 * step, 2 * step + 1, last - 1, last, last + 1]) {
      const body = await page(n);
      expect(body.page).toBe(n);
      expect(body.data.map((m) => m.userId)).toEqual(await plainOffset(n));
    }
    expect((await page(last + 1)).data).toEqual([]);
  });

  it('costs the statements of a first page once its key is remembered; a change shows at once in the rows, and in the positions after the key expires', async () => {
    const deep = 2 * (MEMBER_PAGE_STEP / PAGE_SIZE) + 3;
    await page(deep); // remembers the keys
    await page(1); // the users of both pages are remembered from then on
    const statements = async (n: number) => {
      const before = t.deps.database.stats.statements;
      await page(n);
      return t.deps.database.stats.statements - before;
    };
    expect(await statements(deep)).toBe(await statements(1));

    // A member of the deep page leaves, and one near the top leaves too.
    const shown = (await page(deep)).data.map((m) => m.userId);
    const [top] = (await page(1)).data.map((m) => m.userId);
    await t.deps.database.db.execute(sql`delete from members where community_id = ${tribe.id} and user_id in (${shown[10]}, ${top})`);
    const meanwhile = (await page(deep)).data.map((m) => m.userId);
    expect(meanwhile).not.toContain(shown[10]);
    expect(meanwhile.length).toBe(PAGE_SIZE);

    now = new Date(now.getTime() + MEMBER_PAGE_KEY_TTL_MS + 1);
    expect((await page(deep)).data.map((m) => m.userId)).toEqual(await plainOffset(deep));
  });

  it("never lists another tribe's members at a deep offset", async () => {
    const other = await signupUser(t);
    const otherTribe = await createTribe(t, other);
    const otherKey = await createKey(t, other, otherTribe.handle, ['members:read']);
    const res = await platformGet(t, `/v1/members?page=${MEMBER_PAGE_STEP / PAGE_SIZE + 1}&pageSize=${PAGE_SIZE}`, otherKey.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.hasMore).toBe(false);
  });
});
