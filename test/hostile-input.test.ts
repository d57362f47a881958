import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { accessToken, createKey, createTribe, signupUser, unique, type TestUser } from './factory.js';
import { gql, sqlRows, startService, withoutBudget, type TestService } from './support.js';

/**
 * The input rule (issue 9, Input): on every surface a NUL or other C0 control character (tab, LF, CR allowed) or a
 * lone UTF-16 surrogate in any text is refused with that surface's validation error before anything is written;
 * lengths count characters (code points); query strings and path parameters follow the same rule (400 or 404,
 * never 500); a body that is not JSON is 415.
 */
describe('hostile input', () => {
  let t: TestService;
  let owner: TestUser & { token: string };
  let tribe: { id: string; handle: string };

  beforeAll(async () => {
    t = await startService({ STRIPE_WEBHOOK_SECRET: 'whsec_hostile_input_test_secret_0123' });
    const user = await signupUser(t);
    owner = { ...user, token: await accessToken(t, user) };
    tribe = await createTribe(t, owner, { isPublic: true });
  });
  afterAll(async () => {
    await t.stop();
  });

  const count = async (query: ReturnType<typeof sql>) => Number((await sqlRows<{ n: number }>(t, query))[0].n);
  const postCount = () => count(sql`select count(*)::int as n from posts where community_id = ${tribe.id}`);
  const bearer = () => ({ authorization: `Bearer ${owner.token}` });

  // Raw JSON text, so a lone surrogate travels as the escape `\ud800` exactly as a hostile client would send it.
  const LONE_HIGH = '"x\\ud800y"';
  const LONE_LOW = '"\\udc00"';
  const REFUSED_CONTROLS = ['\u0000', '\u0001', '\u0008', '\u000b', '\u000c', '\u001b', '\u001f'];
  const HOSTILE: Array<[string, string]> = [
    ...REFUSED_CONTROLS.map((c): [string, string] => [`U+${c.charCodeAt(0).toString(16).padStart(4, '0')}`, JSON.stringify(`a${c}b`)]),
    ['a lone high surrogate', LONE_HIGH],
    ['a lone low surrogate', LONE_LOW],
  ];
  const EMOJI = '😀';

  describe('Application API: POST /auth/signup', () => {
    const signupBody = (displayNameJson: string, email: string) =>
      `{"email":"${email}","password":"correct horse battery","username":"u_${unique()}","displayName":${displayNameJson}}`;
    const usersWith = (email: string) => count(sql`select count(*)::int as n from users where email = ${email}`);

    it.each(HOSTILE)('answers 400 invalid_input for a displayName with %s and creates no user', async (_what, json) => {
      const email = `h_${unique()}@example.com`;
      const res = await t.api.post('/auth/signup').set('content-type', 'application/json').send(signupBody(json, email));
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) } });
      expect(await usersWith(email)).toBe(0);
    });

    it('accepts tab, newline, carriage return, DEL and emoji (a valid surrogate pair) as they are', async () => {
      const email = `ok_${unique()}@example.com`;
      const displayName = `A\tB\nC\rD\u007fE ${EMOJI}`;
      const res = await t.api.post('/auth/signup').send({ email, password: 'correct horse battery', username: `u_${unique()}`, displayName });
      expect(res.status).toBe(201);
      expect(res.body.user.displayName).toBe(displayName);
      expect((await sqlRows(t, sql`select display_name from users where email = ${email}`))[0].display_name).toBe(displayName);
    });

    it('counts the 80-character displayName limit in characters: 80 emoji pass, 81 are 400', async () => {
      const ok = `ok_${unique()}@example.com`;
      const fits = await t.api.post('/auth/signup').send({ email: ok, password: 'correct horse battery', username: `u_${unique()}`, displayName: EMOJI.repeat(80) });
      expect(fits.status).toBe(201);
      const over = `over_${unique()}@example.com`;
      const long = await t.api.post('/auth/signup').send({ email: over, password: 'correct horse battery', username: `u_${unique()}`, displayName: EMOJI.repeat(81) });
      expect({ status: long.status, body: long.body }).toEqual({ status: 400, body: { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) } });
      expect(await usersWith(over)).toBe(0);
    });

    it.each([
      ['text/plain', '{"email":"a@example.com"}'],
      ['application/x-www-form-urlencoded', 'email=a%40example.com&password=x'],
      ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="email"\r\n\r\na@example.com\r\n--XyZ--\r\n'],
    ])('answers 415 unsupported_media_type for a %s body', async (type, raw) => {
      const res = await t.api.post('/auth/signup').set('content-type', type).send(raw);
      expect({ status: res.status, body: res.body }).toEqual({ status: 415, body: { error: 'unsupported_media_type', message: expect.any(String), requestId: expect.any(String) } });
    });

    it('still takes a POST without a body, whatever its content type (logout)', async () => {
      const res = await t.api.post('/auth/logout').set('content-type', 'text/plain');
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true } });
    });

    it('answers 404 for a NUL or broken percent-encoding in a path parameter (GET /posts/{id})', async () => {
      for (const path of ['/posts/%00', '/posts/abc%01def', '/posts/%E0%A4%A', '/posts/%ED%A0%80']) {
        const res = await t.api.get(path).set('cookie', owner.cookie);
        expect([path, res.status, res.body]).toEqual([path, 404, { error: 'not_found', message: expect.any(String), requestId: expect.any(String) }]);
      }
    });

    it('answers 400 invalid_query for a NUL in a query parameter', async () => {
      const res = await t.api.get('/auth/me?x=%00').set('cookie', owner.cookie);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_query', message: expect.any(String), requestId: expect.any(String) } });
    });
  });

  describe('Application API control plane: POST /communities/{handle}/api-keys', () => {
    const keyCount = () => count(sql`select count(*)::int as n from api_keys where community_id = ${tribe.id}`);

    it.each(HOSTILE)('answers 400 invalid_input for a name with %s and stores no key', async (_what, json) => {
      const before = await keyCount();
      const res = await t.api
        .post(`/communities/${tribe.handle}/api-keys`)
        .set('cookie', owner.cookie)
        .set('content-type', 'application/json')
        .send(`{"name":${json},"scopes":["posts:read"]}`);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) } });
      expect(await keyCount()).toBe(before);
    });

    it('refuses a NUL inside the scopes list and in an object key too', async () => {
      const before = await keyCount();
      for (const raw of ['{"name":"k","scopes":["posts:read","\\u0000"]}', '{"name":"k","scopes":["posts:read"],"x\\u0000":1}']) {
        const res = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).set('content-type', 'application/json').send(raw);
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) } });
      }
      expect(await keyCount()).toBe(before);
    });

    it('truncates a 61-emoji name to 60 characters, never half an emoji', async () => {
      const res = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send({ name: EMOJI.repeat(61), scopes: ['posts:read'] });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(EMOJI.repeat(60));
    });

    it('answers 415 for a form body and 404 for a NUL in a path parameter (api-keys, webhooks, mark-paid)', async () => {
      const form = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).type('form').send('name=k&scopes=posts:read');
      expect({ status: form.status, body: form.body }).toEqual({ status: 415, body: { error: 'unsupported_media_type', message: expect.any(String), requestId: expect.any(String) } });
      const path = await t.api.get('/communities/a%00b/api-keys').set('cookie', owner.cookie);
      expect({ status: path.status, body: path.body }).toEqual({ status: 404, body: { error: 'not_found', message: expect.any(String), requestId: expect.any(String) } });
      const webhooks = await t.api.get('/communities/a%00b/webhooks').set('cookie', owner.cookie);
      expect({ status: webhooks.status, body: webhooks.body }).toEqual({ status: 404, body: { error: 'not_found', message: expect.any(String), requestId: expect.any(String) } });
      const markPaid = await t.api.post(`/communities/${tribe.handle}/orders/%00/mark-paid`).set('cookie', owner.cookie);
      expect({ status: markPaid.status, body: markPaid.body }).toEqual({ status: 404, body: { error: 'not_found', message: expect.any(String), requestId: expect.any(String) } });
    });
  });

  describe('resource API: POST /v1/communities/{id}/posts', () => {
    const send = (raw: string) => t.api.post(`/v1/communities/${tribe.id}/posts`).set(bearer()).set('content-type', 'application/json').send(raw);

    it.each(HOSTILE)('answers 400 invalid_input naming content for %s and writes no post', async (_what, json) => {
      const before = await postCount();
      const res = await send(`{"content":${json}}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: { code: 'invalid_input', message: expect.stringMatching(/^content: must not contain/), details: [{ field: 'content', message: expect.any(String) }], request_id: expect.any(String) },
      });
      expect(await postCount()).toBe(before);
    });

    it('names the position of a bad string inside a list (media_urls.1)', async () => {
      const res = await send('{"content":"ok","media_urls":["https://a.example/x.png","https://a.example/\\u0000"]}');
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'media_urls.1', message: expect.stringMatching(/control characters/) }]);
    });

    it('accepts emoji, tab and newline in content', async () => {
      const res = await send(JSON.stringify({ content: `<p>hi ${EMOJI}\tthere\nfriend</p>` }));
      expect(res.status).toBe(201);
      expect(res.body.data.content).toContain(EMOJI);
    });

    it('counts the 100-character tribe name limit in characters: 100 emoji pass, 101 are 400', async () => {
      const fits = await t.api.post('/v1/communities').set(bearer()).send({ name: EMOJI.repeat(100), handle: `e-${unique()}` });
      expect(fits.status).toBe(201);
      expect(fits.body.data.name).toBe(EMOJI.repeat(100));
      const handle = `e-${unique()}`;
      const over = await t.api.post('/v1/communities').set(bearer()).send({ name: EMOJI.repeat(101), handle });
      expect(over.status).toBe(400);
      expect(over.body.error).toMatchObject({ code: 'invalid_input', details: [{ field: 'name', message: 'at most 100 characters' }] });
      expect(await count(sql`select count(*)::int as n from communities where handle = ${handle}`)).toBe(0);
    });

    it('answers 400 invalid_query for a NUL in ?search= and 404 for a NUL or bad encoding in an id', async () => {
      const search = await t.api.get('/v1/communities?search=a%00b').set(bearer());
      expect(search.status).toBe(400);
      expect(search.body.error).toMatchObject({ code: 'invalid_query', details: [{ field: 'search', message: expect.any(String) }] });
      for (const path of [`/v1/communities/%00`, `/v1/communities/${tribe.id}/posts/%00`, `/v1/communities/${tribe.id}/members/%1F`, '/v1/communities/%E0%A4%A']) {
        const res = await t.api.get(path).set(bearer());
        expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'not_found']);
      }
    });

    it.each([
      ['text/plain', 'content=hi'],
      ['application/x-www-form-urlencoded', 'content=hi'],
      ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="content"\r\n\r\nhi\r\n--XyZ--\r\n'],
    ])('answers 415 unsupported_media_type for a %s body and writes no post', async (type, raw) => {
      const before = await postCount();
      const res = await t.api.post(`/v1/communities/${tribe.id}/posts`).set(bearer()).set('content-type', type).send(raw);
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ error: { code: 'unsupported_media_type', message: expect.any(String), request_id: expect.any(String) } });
      expect(await postCount()).toBe(before);
    });
  });

  describe('GraphQL', () => {
    const CREATE = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }';
    const post = (raw: string) => t.api.post('/graphql').set('cookie', owner.cookie).set('content-type', 'application/json').send(raw);
    const refusal = (field: string) => ({
      errors: [
        { message: expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}: must not contain`)), extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_text', field } },
      ],
    });

    it.each(HOSTILE)('refuses createPost with %s in $input.content: 400 BAD_USER_INPUT, no post', async (_what, json) => {
      const before = await postCount();
      const res = await post(`{"query":${JSON.stringify(CREATE)},"variables":{"c":"${tribe.id}","i":{"content":${json}}}}`);
      expect(res.status).toBe(400);
      expect(withoutBudget(res.body)).toEqual(refusal('i.content'));
      expect(await postCount()).toBe(before);
    });

    it('refuses a NUL escape in a string literal of the document, naming the argument path', async () => {
      const before = await postCount();
      const doc = `mutation { createPost(communityId: "${tribe.id}", input: { content: "a\\u0000b" }) { id } }`;
      const res = await post(JSON.stringify({ query: doc }));
      expect(res.status).toBe(400);
      expect(withoutBudget(res.body)).toEqual(refusal('input.content'));
      expect(await postCount()).toBe(before);
    });

    it('refuses a NUL or a lone surrogate in communities(search:), as a variable or a literal', async () => {
      const byVariable = await post(`{"query":"query($s: String){ communities(search: $s){ items { id } } }","variables":{"s":"a\\u0000"}}`);
      expect([byVariable.status, withoutBudget(byVariable.body)]).toEqual([400, refusal('s')]);
      const surrogate = await post(`{"query":"query($s: String){ communities(search: $s){ items { id } } }","variables":{"s":${LONE_LOW}}}`);
      expect([surrogate.status, withoutBudget(surrogate.body)]).toEqual([400, refusal('s')]);
      const literal = await post(JSON.stringify({ query: '{ communities(search: "\\u0000") { items { id } } }' }));
      expect([literal.status, withoutBudget(literal.body)]).toEqual([400, refusal('search')]);
      const deflt = await post(JSON.stringify({ query: 'query($s: String = "x\\u001b"){ communities(search: $s){ items { id } } }' }));
      expect([deflt.status, withoutBudget(deflt.body)]).toEqual([400, refusal('s')]);
    });

    it('answers BAD_USER_INPUT, not a 500, for a DateTime variable that is not a string (checked in the subgraph)', async () => {
      const doc = 'mutation($u: ID!, $r: String!, $until: DateTime){ suspendUser(userId: $u, reason: $r, until: $until){ id } }';
      for (const until of [false, 5, 'not a date']) {
        const out = await gql(t, owner, doc, { u: owner.id, r: 'spam', until });
        expect(out.errors).toEqual([
          { message: expect.stringContaining('DateTime must be an ISO 8601 string'), extensions: { code: 'BAD_USER_INPUT', reason: 'invalid_value', status: 400 } },
        ]);
      }
    });

    it('accepts emoji and newlines, and counts the tribe name limit in characters', async () => {
      const ok = await gql(t, owner, CREATE, { c: tribe.id, i: { content: `<p>${EMOJI}\nline</p>` } });
      expect(ok.errors).toBeUndefined();
      const CREATE_TRIBE = 'mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ name } }';
      const fits = await gql(t, owner, CREATE_TRIBE, { i: { name: EMOJI.repeat(100), handle: `g-${unique()}` } });
      expect(fits.data?.createCommunity.name).toBe(EMOJI.repeat(100));
      const over = await gql(t, owner, CREATE_TRIBE, { i: { name: EMOJI.repeat(101), handle: `g-${unique()}` } });
      expect(over.errors?.[0].extensions).toMatchObject({ reason: 'invalid_input', details: [{ field: 'name', message: 'at most 100 characters' }] });
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=XyZ'])(
      'answers 415 in the GraphQL envelope for a %s POST',
      async (type) => {
        const res = await t.api.post('/graphql').set('content-type', type).set('apollo-require-preflight', 'true').send('{"query":"{ __typename }"}');
        expect(res.status).toBe(415);
        expect(res.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'unsupported_media_type', status: 415 } }] });
      },
    );
  });

  describe('Platform API', () => {
    let key: string;
    beforeAll(async () => {
      key = (await createKey(t, owner, tribe.handle)).key;
    });
    const get = (path: string) => t.api.get(path).set('authorization', `Bearer ${key}`);

    it('answers 404 not_found for a NUL or a control character in a username', async () => {
      for (const path of ['/v1/members/%00', '/v1/members/a%1Bb']) {
        const res = await get(path);
        expect([path, res.status, res.body]).toEqual([path, 404, { error: { type: 'not_found', message: expect.any(String) } }]);
      }
    });

    it('ignores a NUL in a query parameter it cannot use, as it ignores any bad page value (its contract has no 400)', async () => {
      const res = await get('/v1/posts?page=%00&pageSize=%01&x=%00');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page: 1, pageSize: 25 });
    });
  });

  it('leaves the Stripe webhook reading any content type as raw bytes: its signature check answers, not 415', async () => {
    const res = await t.api.post('/webhooks/payments/stripe').set('content-type', 'text/plain').set('stripe-signature', 't=1,v1=00').send('x\u0000y');
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'invalid_signature', message: expect.any(String), requestId: expect.any(String) } });
  });
});
