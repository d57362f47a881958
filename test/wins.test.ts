import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { crew, staffedTribe, UNKNOWN_ID, type Cast, type TestUser } from './factory.js';
import { countOf, eventsOf, gql, memberXp, startService, xpAwards, type TestService } from './support.js';
import { ISO, UUID } from './expected.js';

const WIN = 'id community { id } author { id } title content status approvedBy { id } approvedAt createdAt';

/** Wins over GraphQL: a member posts one, a moderator or above approves it (win.approved, XP once). */
describe('wins', () => {
  let t: TestService;
  let cast: Cast;
  let otherCast: Cast;

  beforeAll(async () => {
    t = await startService();
    [cast, otherCast] = await Promise.all([crew(t), crew(t)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const post = (who: TestUser, communityId: string, input: Record<string, unknown>) =>
    gql(t, who, `mutation($c: ID!, $i: PostWinInput!){ postWin(communityId: $c, input: $i){ ${WIN} } }`, { c: communityId, i: input });
  async function newWin(who: TestUser, communityId: string, title = 'Closed my first sale') {
    const out = await post(who, communityId, { title, content: 'It took a month.' });
    if (out.errors) throw new Error(JSON.stringify(out.errors));
    return out.data.postWin as Record<string, any>;
  }
  const approve = (who: TestUser, id: string, communityId?: string) =>
    gql(t, who, `mutation($id: ID!, $c: ID){ approveWin(id: $id, communityId: $c){ ${WIN} } }`, { id, c: communityId });
  const list = (who: TestUser | null, communityId: string, status?: string) =>
    gql(t, who, 'query($c: ID!, $s: String){ wins(communityId: $c, status: $s){ items { id status } page perPage hasMore } }', { c: communityId, s: status });
  const code = (out: { errors?: Array<{ extensions?: Record<string, any> }> }) => out.errors?.[0].extensions?.reason;
  const winsOf = (communityId: string) => countOf(t, sql`select count(*)::int as n from wins where community_id = ${communityId}`);

  describe('postWin', () => {
    it('records a pending win of a member', async () => {
      const s = await staffedTribe(t, cast);
      const out = await post(s.member, s.tribe.id, { title: '  First 5k  ', content: 'Slow but done' });
      expect(out.errors).toBeUndefined();
      expect(out.data.postWin).toEqual({
        id: expect.stringMatching(UUID),
        community: { id: s.tribe.id },
        author: { id: s.member.id },
        title: 'First 5k',
        content: 'Slow but done',
        status: 'pending',
        approvedBy: null,
        approvedAt: null,
        createdAt: expect.stringMatching(ISO),
      });
    });

    it('refuses outsiders (forbidden) and bad input (invalid_input), writing nothing', async () => {
      const s = await staffedTribe(t, cast);
      expect(code(await post(s.outsider, s.tribe.id, { title: 'x' }))).toBe('forbidden');
      expect(code(await post(s.member, s.tribe.id, { title: ' ' }))).toBe('invalid_input');
      expect(code(await post(s.member, s.tribe.id, { title: 'x'.repeat(141) }))).toBe('invalid_input');
      expect(code(await post(s.member, s.tribe.id, { content: 'no title' }))).toBe('invalid_input');
      expect(code(await post(s.member, UNKNOWN_ID, { title: 'x' }))).toBe('not_found');
      expect(await winsOf(s.tribe.id)).toBe(0);
    });
  });

  describe('approveWin', () => {
    it('approves for a moderator: emits win.approved and awards 50 XP to the author, once', async () => {
      const s = await staffedTribe(t, cast);
      const win = await newWin(s.member, s.tribe.id);
      const out = await approve(s.moderator, win.id, s.tribe.id);
      expect(out.errors).toBeUndefined();
      expect(out.data.approveWin).toMatchObject({ id: win.id, status: 'approved', approvedBy: { id: s.moderator.id }, approvedAt: expect.stringMatching(ISO) });
      expect(await eventsOf(t, s.tribe.id, 'win.approved')).toEqual([{ data: { winId: win.id, userId: s.member.id, handle: s.tribe.handle } }]);
      expect(await memberXp(t, s.tribe.id, s.member.id)).toEqual({ xp: 50, level: 1 });

      const again = await approve(s.owner, win.id);
      expect(again.data.approveWin).toMatchObject({ status: 'approved', approvedBy: { id: s.moderator.id } });
      expect(await eventsOf(t, s.tribe.id, 'win.approved')).toHaveLength(1);
      expect(await xpAwards(t, s.tribe.id, s.member.id, 'win.approved')).toEqual([{ amount: 50, source_key: `win.approved:${win.id}` }]);
    });

    it('approves the win of an author who has left, awarding no XP and recording no award', async () => {
      const s = await staffedTribe(t, cast);
      const win = await newWin(s.member, s.tribe.id);
      const left = await gql(t, s.member, 'mutation($h: String!){ leaveCommunity(handle: $h) }', { h: s.tribe.handle });
      expect(left.data?.leaveCommunity).toBe(true);
      const out = await approve(s.moderator, win.id, s.tribe.id);
      expect(out.errors).toBeUndefined();
      expect(out.data.approveWin).toMatchObject({ id: win.id, status: 'approved' });
      expect(await xpAwards(t, s.tribe.id, s.member.id, 'win.approved')).toEqual([]);
      expect(await memberXp(t, s.tribe.id, s.member.id)).toBeUndefined();
    });

    it('approves once when two moderators approve at the same time', async () => {
      const s = await staffedTribe(t, cast);
      const win = await newWin(s.member2, s.tribe.id);
      const outs = await Promise.all([approve(s.moderator, win.id), approve(s.admin, win.id), approve(s.owner, win.id)]);
      expect(outs.every((o) => o.data?.approveWin.status === 'approved')).toBe(true);
      expect(await eventsOf(t, s.tribe.id, 'win.approved')).toHaveLength(1);
      expect(await memberXp(t, s.tribe.id, s.member2.id)).toEqual({ xp: 50, level: 1 });
    });

    it('refuses members (a pending win of someone else is not_found to them), and moderators on their own win, changing nothing', async () => {
      const s = await staffedTribe(t, cast);
      const win = await newWin(s.member, s.tribe.id);
      expect(code(await approve(s.member2, win.id))).toBe('not_found');
      expect(code(await approve(s.member, win.id))).toBe('forbidden');
      const own = await newWin(s.moderator, s.tribe.id);
      expect(code(await approve(s.moderator, own.id))).toBe('forbidden');
      expect(await countOf(t, sql`select count(*)::int as n from wins where community_id = ${s.tribe.id} and status = 'approved'`)).toBe(0);
      expect(await eventsOf(t, s.tribe.id, 'win.approved')).toEqual([]);
    });

    it('answers not_found for a win of another tribe under my tribe id, and for an unknown win', async () => {
      const mine = await staffedTribe(t, cast);
      const theirs = await staffedTribe(t, otherCast);
      const win = await newWin(theirs.member, theirs.tribe.id);
      expect(code(await approve(mine.owner, win.id, mine.tribe.id))).toBe('not_found');
      expect(code(await approve(theirs.moderator, win.id, mine.tribe.id))).toBe('not_found');
      expect(code(await approve(mine.owner, UNKNOWN_ID))).toBe('not_found');
      // The owner of another tribe cannot see, let alone approve, a pending win here.
      expect(code(await approve(mine.owner, win.id))).toBe('not_found');
      expect(await countOf(t, sql`select count(*)::int as n from wins where id = ${win.id} and status = 'approved'`)).toBe(0);
    });
  });

  describe('wins and win', () => {
    it('shows approved wins to everyone who sees the tribe, pending ones to their author and moderators', async () => {
      const s = await staffedTribe(t, cast);
      const approved = await newWin(s.member, s.tribe.id, 'approved');
      await approve(s.moderator, approved.id);
      const mine = await newWin(s.member, s.tribe.id, 'mine pending');
      const theirs = await newWin(s.member2, s.tribe.id, 'their pending');
      const ids = async (who: TestUser | null, status?: string) => (await list(who, s.tribe.id, status)).data.wins.items.map((w: any) => w.id);
      expect(await ids(s.moderator)).toEqual([theirs.id, mine.id, approved.id]);
      expect(await ids(s.member)).toEqual([mine.id, approved.id]);
      expect(await ids(s.outsider)).toEqual([approved.id]);
      expect(await ids(null)).toEqual([approved.id]);
      expect(await ids(s.moderator, 'pending')).toEqual([theirs.id, mine.id]);
      expect(await ids(s.member, 'approved')).toEqual([approved.id]);
      expect(code(await list(s.member, s.tribe.id, 'rejected'))).toBe('invalid_input');
      const one = (who: TestUser) => gql(t, who, 'query($id: ID!, $c: ID){ win(id: $id, communityId: $c){ id } }', { id: theirs.id, c: s.tribe.id });
      expect(code(await one(s.member))).toBe('not_found');
      expect((await one(s.admin)).data.win).toEqual({ id: theirs.id });
      expect((await one(s.member2)).data.win).toEqual({ id: theirs.id });
    });

    it('hides the wins of a private tribe from outsiders (forbidden)', async () => {
      const s = await staffedTribe(t, cast, { isPublic: false });
      expect(code(await list(s.outsider, s.tribe.id))).toBe('forbidden');
    });
  });
});
