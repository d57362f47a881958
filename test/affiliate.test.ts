import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { countOf, gql, startService, type TestService } from './support.js';

/** Affiliate codes (GraphQL) and the public click tracker POST /affiliate/track (spec 4.3, flat errors). */
describe('affiliate tracking', () => {
  let t: TestService;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let tribe: { id: string; handle: string };
  /** Every tracking request of this file comes from one IP; the rate-limit test counts what came before. */
  let tracked = 0;

  beforeAll(async () => {
    t = await startService();
    [owner, member, outsider] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner);
    await join(t, member, tribe.handle);
  });
  afterAll(async () => {
    await t.stop();
  });

  const myCode = (who: TestUser, communityId: string) =>
    gql(t, who, 'mutation($c: ID!){ myAffiliateCode(communityId: $c){ code community { id } user { id } clickCount createdAt } }', { c: communityId });
  const track = (body: unknown, contentType = 'application/json') => {
    tracked += 1;
    return t.api.post('/affiliate/track').set('content-type', contentType).send(body as object);
  };
  const clicksOf = (code: string) =>
    countOf(t, sql`select count(*)::int as n from affiliate_clicks k join affiliate_codes c on c.id = k.code_id where c.code = ${code}`);

  describe('myAffiliateCode', () => {
    it('creates one code per member per tribe on first use and returns the same one after', async () => {
      const first = await myCode(member, tribe.id);
      expect(first.errors).toBeUndefined();
      expect(first.data.myAffiliateCode).toEqual({
        code: expect.stringMatching(/^[A-Za-z0-9_-]{11}$/),
        community: { id: tribe.id },
        user: { id: member.id },
        clickCount: 0,
        createdAt: expect.any(String),
      });
      const again = await myCode(member, tribe.id);
      expect(again.data.myAffiliateCode.code).toBe(first.data.myAffiliateCode.code);
      const racing = await Promise.all([1, 2, 3].map(() => myCode(owner, tribe.id)));
      expect(new Set(racing.map((r) => r.data.myAffiliateCode.code)).size).toBe(1);
      expect(await countOf(t, sql`select count(*)::int as n from affiliate_codes where community_id = ${tribe.id}`)).toBe(2);
    });

    it('refuses outsiders (forbidden), anonymous callers (unauthorized) and unknown tribes (not_found)', async () => {
      expect((await myCode(outsider, tribe.id)).errors?.[0].extensions?.reason).toBe('forbidden');
      expect((await myCode(null as unknown as TestUser, tribe.id)).errors?.[0].extensions?.reason).toBe('unauthorized');
      expect((await myCode(member, UNKNOWN_ID)).errors?.[0].extensions?.reason).toBe('not_found');
    });
  });

  describe('POST /affiliate/track', () => {
    it('records a click for a known code without authentication and answers {}', async () => {
      const { code } = (await myCode(member, tribe.id)).data.myAffiliateCode;
      const before = await clicksOf(code);
      const res = await track({ code });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
      expect(await clicksOf(code)).toBe(before + 1);
      expect((await myCode(member, tribe.id)).data.myAffiliateCode.clickCount).toBe(before + 1);
    });

    it.each([
      ['an unknown code', { code: 'AAAAAAAAAAA' }],
      ['a code of the wrong length', { code: 'abc' }],
      ['a code with other characters', { code: 'abc def ghi' }],
      ['a number', { code: 12345678901 }],
      ['no code', {}],
      ['a JSON array', ['x']],
    ])('answers 400 {"error": "invalid_code"} for %s, writing nothing', async (_name, body) => {
      const before = await countOf(t, sql`select count(*)::int as n from affiliate_clicks`);
      const res = await track(body);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_code', message: expect.any(String), requestId: expect.any(String) } });
      expect(await countOf(t, sql`select count(*)::int as n from affiliate_clicks`)).toBe(before);
    });

    it('answers malformed JSON in the flat envelope', async () => {
      const res = await track('{"code":', 'application/json');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'malformed_json', message: expect.any(String), requestId: expect.any(String) });
    });

    it(`limits each IP to 30 requests a minute: then 429 {"error": "rate_limited"} with Retry-After, and nothing written`, async () => {
      const { code } = (await myCode(member, tribe.id)).data.myAffiliateCode;
      // Malformed JSON is refused by the body parser before the limiter; it did not count.
      const spent = tracked - 1;
      expect(spent).toBeLessThan(30);
      for (let i = spent; i < 30; i += 1) expect((await track({ code })).status).toBe(200);
      const before = await clicksOf(code);
      const limited = await track({ code });
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String), requestId: expect.any(String) });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect((await track({ code: 'AAAAAAAAAAA' })).status).toBe(429);
      expect(await clicksOf(code)).toBe(before);
    });
  });
});
