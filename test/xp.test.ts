import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { awardXp } from '../subgraphs/members/index.js';
import { createTribe, join, signupUser, unique } from './factory.js';
import { startService, type TestService } from './support.js';

describe('XP and levels', () => {
  describe('awardXp', () => {
    let t: TestService;
    beforeAll(async () => {
      t = await startService();
    });
    afterAll(async () => {
      await t.stop();
    });

    const memberRow = async (communityId: string, userId: string) =>
      ((await t.deps.database.db.execute(sql`select xp, level from members where community_id = ${communityId} and user_id = ${userId}`)) as unknown as { rows: unknown[] }).rows[0];

    it('moves xp and level once per source key, even when retried concurrently', async () => {
      const owner = await signupUser(t);
      const user = await signupUser(t);
      const tribe = await createTribe(t, owner);
      await join(t, user, tribe.handle);
      const key = `test:${unique()}`;
      const award = { communityId: tribe.id, userId: user.id, amount: 150, source: 'test', sourceKey: key };
      const results = await Promise.all(
        Array.from({ length: 5 }, () => t.deps.database.db.transaction((tx) => awardXp(tx, award))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await memberRow(tribe.id, user.id)).toEqual({ xp: 150, level: 2 });
      await t.deps.database.db.transaction((tx) => awardXp(tx, { ...award, sourceKey: `${key}:2`, amount: 300 }));
      expect(await memberRow(tribe.id, user.id)).toEqual({ xp: 450, level: 3 });
    });

    it('writes nothing when the surrounding transaction rolls back', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const key = `test:${unique()}`;
      await expect(
        t.deps.database.db.transaction(async (tx) => {
          await awardXp(tx, { communityId: tribe.id, userId: owner.id, amount: 50, source: 'test', sourceKey: key });
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await memberRow(tribe.id, owner.id)).toEqual({ xp: 0, level: 1 });
      const awards = (await t.deps.database.db.execute(sql`select count(*)::int as n from xp_awards where source_key = ${key}`)) as unknown as { rows: unknown[] };
      expect(awards.rows[0]).toEqual({ n: 0 });
    });
  });
});
