// Names show who someone is: a display name or a tribe's name holds at least one visible character and no bidi
// override or isolate control (issue 29: "\u200B mentioned you in a post"; "\u202Egnp.exe" reads as "exe.png").
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, signupUser, unique, type TestUser } from './factory.js';
import { countOf, failure, gql, ok, sqlRows, startService, type TestService } from './support.js';

const INVISIBLE: Array<[string, string]> = [
  ['a zero-width space', '\u200B'],
  ['zero-width joiners and a space', '\u200D \u200C'],
  ['a Hangul filler', '\u3164'],
  ['a Braille blank', '\u2800'],
  ['a soft hyphen and a word joiner', '\u00AD\u2060'],
  ['a combining mark alone', '\u0301'],
];
const BIDI: Array<[string, string]> = [
  ['a right-to-left override', 'Ada\u202Egnp.exe'],
  ['a left-to-right embedding', '\u202AAda'],
  ['a pop directional formatting', 'Ada\u202C'],
  ['a first-strong isolate', '\u2068Ada\u2069'],
  ['a right-to-left isolate', 'Ada\u2067x'],
];
const FINE = ['Zoë', '李小龍', 'علي', 'Ada 🦊', 'a\u200Db', 'مريم\u200F'];

describe('names', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const displayNameOf = async (id: string) => (await sqlRows(t, sql`select display_name from users where id = ${id}`))[0]!.display_name;
  const updateName = (who: TestUser, displayName: string) =>
    gql(t, who, 'mutation($i: UpdateProfileInput!){ updateProfile(input: $i){ displayName } }', { i: { displayName } });
  const createCommunity = (who: TestUser, name: string) =>
    gql(t, who, 'mutation($input: CreateCommunityInput!){ createCommunity(input: $input){ id name } }', {
      input: { name, handle: `n-${unique()}`.toLowerCase().replace(/_/g, '-'), isPublic: true },
    });

  describe('display names', () => {
    it.each([...INVISIBLE, ...BIDI])('refuses %s on updateProfile as BAD_USER_INPUT naming displayName, and keeps the name', async (_what, name) => {
      const user = await signupUser(t, { displayName: 'Before' });
      const out = await updateName(user, name);
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      const visible = INVISIBLE.some(([, v]) => v === name);
      expect(out.errors![0].extensions!.details).toEqual([
        {
          field: 'displayName',
          message: visible
            ? 'must contain at least one visible character'
            : 'must not contain bidirectional override or isolate controls (U+202A to U+202E, U+2066 to U+2069)',
        },
      ]);
      expect(await displayNameOf(user.id)).toBe('Before');
    });

    it.each([...INVISIBLE, ...BIDI])('refuses %s at sign-up with 400 invalid_input, and creates no user', async (_what, name) => {
      const email = `names_${unique()}@example.com`;
      const res = await t.api.post('/auth/signup').send({ email, password: 'correct horse battery', username: `n_${unique()}`, displayName: name });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) } });
      expect(await countOf(t, sql`select count(*)::int as n from users where email = ${email}`)).toBe(0);
    });

    it.each(FINE)('accepts %j (letters of any script, emoji, a joiner or a mark between letters)', async (name) => {
      const user = await signupUser(t, { displayName: name });
      expect(await displayNameOf(user.id)).toBe(name);
      expect(ok(await updateName(user, `${name} 2`)).updateProfile.displayName).toBe(`${name} 2`);
    });
  });

  describe("tribes' names", () => {
    it.each([...INVISIBLE, ...BIDI])('refuses %s on createCommunity naming name, and creates no tribe', async (_what, name) => {
      const owner = await signupUser(t);
      const out = await createCommunity(owner, name);
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(out.errors![0].extensions!.details).toEqual([expect.objectContaining({ field: 'name' })]);
      expect(await countOf(t, sql`select count(*)::int as n from communities where created_by = ${owner.id}`)).toBe(0);
    });

    it('refuses an invisible name on updateCommunity too, and keeps the name', async () => {
      const owner = await signupUser(t);
      const tribe = await createTribe(t, owner);
      const out = await gql(t, owner, 'mutation($id: ID!, $input: UpdateCommunityInput!){ updateCommunity(id: $id, input: $input){ name } }', {
        id: tribe.id,
        input: { name: '\u200B' },
      });
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect((await sqlRows(t, sql`select name from communities where id = ${tribe.id}`))[0]!.name).toBe(tribe.name);
    });

    it.each(FINE)('accepts %j', async (name) => {
      const owner = await signupUser(t);
      expect(ok(await createCommunity(owner, name)).createCommunity.name).toBe(name);
    });
  });
});
