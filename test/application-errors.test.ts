// Errors that teach (issue 31): every refusal of sign-up, API keys and webhook endpoints on the Application API keeps
// its flat `error` code and says, in `message`, which field broke which rule; a refusal writes nothing.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, signupUser, unique, type TestUser } from './factory.js';
import { countOf, plantedResolver, startWebhookService, type TestService } from './support.js';

/** The flat envelope with exactly this code and message. */
const flat = (error: string, message: string | ReturnType<typeof expect.stringMatching>) => ({ error, message, requestId: expect.any(String) });

describe('Application API error messages', () => {
  let t: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };

  beforeAll(async () => {
    t = await startWebhookService({
      env: { WEBHOOK_ALLOWED_PRIVATE_HOSTS: '' },
      resolve: plantedResolver({
        'hooks.example.com': ['93.184.216.34'],
        'private.example.com': ['10.0.0.7'],
        'empty.example.com': [],
      }),
    });
    owner = await signupUser(t);
    tribe = await createTribe(t, owner);
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  describe('POST /auth/signup', () => {
    const body = (overrides: Record<string, unknown> = {}) => {
      const u = unique();
      return { email: `err_${u}@example.com`, password: 'correct horse battery', username: `err_${u}`, displayName: `Err ${u}`, ...overrides };
    };
    const without = (field: string) => {
      const b: Record<string, unknown> = body();
      delete b[field];
      return b;
    };
    const USERNAME_RULE = 'username: 3 to 30 characters, each a lower-case letter a-z, a digit 0-9 or _';
    const cases: Array<[string, () => Record<string, unknown>, number, string, string]> = [
      ['no displayName', () => without('displayName'), 400, 'invalid_input', 'displayName: required: 1 to 80 characters'],
      ['a blank displayName', () => body({ displayName: '   ' }), 400, 'invalid_input', 'displayName: required: 1 to 80 characters'],
      ['a displayName of 81 characters', () => body({ displayName: 'd'.repeat(81) }), 400, 'invalid_input', 'displayName: 1 to 80 characters'],
      ['no email', () => without('email'), 400, 'invalid_input', 'email: required: a valid email address of at most 254 characters'],
      ['an email without @', () => body({ email: 'nobody.example.com' }), 400, 'invalid_email', 'email: must be a valid email address of at most 254 characters'],
      ['no password', () => without('password'), 400, 'invalid_input', 'password: required: 10 to 256 characters'],
      ['a password of 9 characters', () => body({ password: 'p'.repeat(9) }), 400, 'weak_password', 'password: 10 to 256 characters'],
      ['a password of 257 characters', () => body({ password: 'p'.repeat(257) }), 400, 'weak_password', 'password: 10 to 256 characters'],
      ['no username', () => without('username'), 400, 'invalid_input', `username: required: ${USERNAME_RULE.slice('username: '.length)}`],
      ['a username with capitals', () => body({ username: `Err_${unique()}` }), 400, 'invalid_username', USERNAME_RULE],
      ['a username of 2 characters', () => body({ username: 'ab' }), 400, 'invalid_username', USERNAME_RULE],
      ['an unknown invite code', () => body({ inviteCode: 'nope' }), 400, 'invalid_invite', 'inviteCode: unknown or revoked.'],
      ['an invite code of 65 characters', () => body({ inviteCode: 'c'.repeat(65) }), 400, 'invalid_input', 'inviteCode: at most 64 characters'],
    ];
    it.each(cases)('refuses %s with its code and "field: rule", and writes no user', async (_name, make, status, code, message) => {
      const sent = make();
      const res = await t.api.post('/auth/signup').send(sent);
      expect([res.status, res.body]).toEqual([status, flat(code, message)]);
      if (typeof sent.username === 'string') expect(await countOf(t, sql`select count(*)::int as n from users where username = ${sent.username}`)).toBe(0);
    });

    it('refuses a taken email and a taken username (409) naming the field', async () => {
      const first = body();
      expect((await t.api.post('/auth/signup').send(first)).status).toBe(201);
      const email = await t.api.post('/auth/signup').send(body({ email: first.email.toUpperCase() }));
      expect([email.status, email.body]).toEqual([409, flat('email_taken', 'email: already registered: sign in instead')]);
      const username = await t.api.post('/auth/signup').send(body({ username: first.username }));
      expect([username.status, username.body]).toEqual([409, flat('username_taken', 'username: taken: choose another')]);
      expect(await countOf(t, sql`select count(*)::int as n from users where username = ${first.username}`)).toBe(1);
    });
  });

  describe('POST /communities/{handle}/api-keys', () => {
    const create = (body: Record<string, unknown>) => t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send(body);
    const SCOPES_RULE = 'scopes: at least one of members:read, posts:read, events:read, orders:read, community:read (unknown scopes are dropped)';
    it.each<[string, Record<string, unknown>, string, string]>([
      ['no name', { scopes: ['posts:read'] }, 'invalid_name', 'name: required: 1 to 60 characters after trimming (longer names are cut)'],
      ['a blank name', { name: '  ', scopes: ['posts:read'] }, 'invalid_name', 'name: required: 1 to 60 characters after trimming (longer names are cut)'],
      ['no scopes', { name: 'ci' }, 'no_scopes', SCOPES_RULE],
      ['only unknown scopes', { name: 'ci', scopes: ['posts:write'] }, 'no_scopes', SCOPES_RULE],
    ])('refuses %s with its code and "field: rule", and stores no key', async (_name, body, code, message) => {
      const res = await create(body);
      expect([res.status, res.body]).toEqual([400, flat(code, message)]);
      expect(await countOf(t, sql`select count(*)::int as n from api_keys where community_id = ${tribe.id}`)).toBe(0);
    });

    it('refuses an unknown tribe, a non-admin and a signed-out caller with a message', async () => {
      const stranger = await signupUser(t);
      const unknown = await t.api.post(`/communities/no-such-${unique()}/api-keys`).set('cookie', owner.cookie).send({ name: 'x', scopes: ['posts:read'] });
      expect([unknown.status, unknown.body]).toEqual([404, flat('not_found', expect.stringMatching(/^Community not found/))]);
      const forbidden = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', stranger.cookie).send({ name: 'x', scopes: ['posts:read'] });
      expect([forbidden.status, forbidden.body]).toEqual([403, flat('forbidden', expect.stringMatching(/./))]);
      const anonymous = await t.api.post(`/communities/${tribe.handle}/api-keys`).send({ name: 'x', scopes: ['posts:read'] });
      expect([anonymous.status, anonymous.body]).toEqual([401, flat('unauthorized', expect.stringMatching(/./))]);
    });
  });

  describe('webhook endpoints', () => {
    const HOOK = 'https://hooks.example.com/svc';
    const create = (body: Record<string, unknown>) => t.api.post(`/communities/${tribe.handle}/webhooks`).set('cookie', owner.cookie).send(body);
    const endpoints = () => countOf(t, sql`select count(*)::int as n from webhook_endpoints where community_id = ${tribe.id}`);

    it.each<[string, Record<string, unknown>, string, string]>([
      ['no url', { events: ['member.joined'] }, 'invalid_url', 'url: required: an https:// URL of a public host'],
      ['a url of 2049 characters', { url: `https://hooks.example.com/${'a'.repeat(2023)}` }, 'invalid_url', 'url: at most 2048 characters'],
      ['a url that is not a URL', { url: 'hooks example' }, 'invalid_url', 'url: must be an absolute https:// URL'],
      ['an http:// url', { url: 'http://hooks.example.com/svc' }, 'invalid_url', 'url: must use https (http:)'],
      ['a url with user:password@', { url: 'https://u:p@hooks.example.com/svc' }, 'invalid_url', 'url: must not contain user:password@'],
      ['localhost', { url: 'https://localhost/x' }, 'invalid_url', 'url: host not allowed (localhost: loopback)'],
      ['an internal name', { url: 'https://db.internal/x' }, 'invalid_url', 'url: host not allowed (db.internal: internal name)'],
      ['a single-label host', { url: 'https://intranet/x' }, 'invalid_url', 'url: host not allowed (intranet: not a public domain name)'],
      ['a private IP literal', { url: 'https://10.0.0.1/x' }, 'invalid_url', 'url: resolves to a private address (10.0.0.1: private)'],
      ['a host that resolves to a private address', { url: 'https://private.example.com/x' }, 'invalid_url', 'url: resolves to a private address (10.0.0.7: private)'],
      ['a host that does not resolve', { url: 'https://empty.example.com/x' }, 'invalid_url', 'url: host does not resolve (empty.example.com)'],
      ['a description of 141 characters', { url: HOOK, description: 'd'.repeat(141) }, 'invalid_description', 'description: at most 140 characters'],
      // As the resource API words a value of the wrong type (the GraphQL type's rule).
      ['enabled that is not a boolean', { url: HOOK, enabled: 'yes' }, 'invalid_input', 'enabled: Boolean cannot represent a non boolean value: "yes"'],
    ])('POST refuses %s with its code and "field: rule", and registers nothing', async (_name, body, code, message) => {
      const res = await create({ events: ['member.joined'], ...body });
      expect([res.status, res.body]).toEqual([400, flat(code, message)]);
      expect(await endpoints()).toBe(0);
    });

    it('POST refuses events with no subscribable event, naming them', async () => {
      const res = await create({ url: HOOK, events: ['bogus', 'ping'] });
      expect([res.status, res.body]).toEqual([400, flat('no_events', expect.stringMatching(/^events: at least one of member\.joined, .*order\.paid.* \(unknown events are dropped\)$/))]);
      expect(await endpoints()).toBe(0);
    });

    it('PATCH refuses a body with nothing to change, and a bad url as POST does, changing nothing', async () => {
      const made = await create({ url: HOOK, events: ['member.joined'] });
      expect(made.status).toBe(201);
      const patch = (body: Record<string, unknown>) =>
        t.api.patch(`/communities/${tribe.handle}/webhooks/${made.body.id}`).set('cookie', owner.cookie).send(body);
      expect((await patch({})).body).toEqual(flat('empty', 'body: send at least one of url, events, description, enabled.'));
      expect((await patch({ url: 'https://private.example.com/y' })).body).toEqual(flat('invalid_url', 'url: resolves to a private address (10.0.0.7: private)'));
      expect((await t.api.get(`/communities/${tribe.handle}/webhooks/${made.body.id}`).set('cookie', owner.cookie)).body.url).toBe(HOOK);
      await t.api.delete(`/communities/${tribe.handle}/webhooks/${made.body.id}`).set('cookie', owner.cookie);
    });
  });
});
