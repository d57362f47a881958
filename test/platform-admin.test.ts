// Platform administration (issue 13): platform staff (PLATFORM_ADMIN_EMAILS at start-up, `npm run admin`), user and
// tribe suspension on every surface, featured tribes in discover, platformStats against a known data set, the
// platform audit log.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { revokeStaff } from '../subgraphs/platform/index.js';
import { actor, createKey, createPost, createTribe, crew, join, seedOrder, signupUser, staffedTribe, unique, type Actor, type TestUser } from './factory.js';
import {
  ManualClock,
  TEST_DATABASE_URL,
  bearer,
  countOf,
  failure,
  gql,
  movableClock,
  ok,
  platformGet,
  sqlRows,
  startService,
  type TestService,
} from './support.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const itOnPostgres = TEST_DATABASE_URL ? it : it.skip;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const STATS = `{ platformStats { generatedAt users tribes signupsLastDay signupsLast30Days activeUsersLastDay activeUsersLast30Days
  postsPerDay { day count } paidOrders { currency paidOrders revenueCents } } }`;
const SUSPEND_USER = 'mutation($u: ID!, $r: String!, $until: DateTime){ suspendUser(userId: $u, reason: $r, until: $until){ id suspension { reason until } } }';
const UNSUSPEND_USER = 'mutation($u: ID!){ unsuspendUser(userId: $u){ id suspension { reason } } }';
const SUSPEND_TRIBE = 'mutation($c: ID!, $r: String!){ suspendCommunity(communityId: $c, reason: $r){ id handle suspended suspensionReason } }';
const UNSUSPEND_TRIBE = 'mutation($c: ID!){ unsuspendCommunity(communityId: $c){ id suspended suspensionReason } }';
const FEATURE = 'mutation($c: ID!, $f: Boolean!){ featureCommunity(communityId: $c, featured: $f){ id featured } }';
const AUDIT = `query($first: Int, $after: String){ platformAuditLog(first: $first, after: $after){
  edges { cursor node { id action targetType targetId reason until actor { id } targetUser { id } targetCommunity { id } createdAt } }
  pageInfo { hasNextPage endCursor } } }`;

/** Runs `npm run admin`'s script as a child process against the test database. */
function adminScript(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/admin.ts', ...args],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'warn', PLATFORM_ADMIN_EMAILS: '' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A fresh access and refresh token pair for the user through the resource API. */
async function tokens(t: TestService, user: TestUser) {
  const res = await t.api.post('/v1/auth/login').send({ email: user.email, password: user.password });
  expect(res.status).toBe(200);
  return { access: res.body.data.access_token as string, refresh: res.body.data.refresh_token as string };
}

/**
 * Verifies `who`'s address as a user does: requestEmailVerification, then verifyEmail with the token of the mail
 * (without SMTP_URL the mail stays in mail_outbox, body included, until the mail job logs it).
 */
async function verifyAddress(t: TestService, who: { cookie: string; email: string }): Promise<void> {
  ok(await gql(t, who, 'mutation { requestEmailVerification }'));
  const [mail] = await sqlRows(t, sql`select text_body from mail_outbox where lower(to_address) = lower(${who.email}) order by created_at desc limit 1`);
  const token = /verify-email\?token=([A-Za-z0-9_-]{43})/.exec(String(mail?.text_body))?.[1];
  expect(token).toBeDefined();
  expect(ok(await gql(t, who, 'mutation($t: String!){ verifyEmail(token: $t){ emailVerified } }', { t: token })).verifyEmail.emailVerified).toBe(true);
}

describe('platform administration', () => {
  let t: TestService;
  const clock = movableClock();
  let staff: TestUser;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  // Listed in PLATFORM_ADMIN_EMAILS, with no account at start-up.
  const laterEmail = `later-${unique()}@example.com`;
  const laterIdpEmail = `later-idp-${unique()}@example.com`;
  const revokedEmail = `revoked-${unique()}@example.com`;

  beforeAll(async () => {
    // The staff account exists before the service starts, as an operator's would.
    const first = await startService();
    try {
      staff = await signupUser(first);
      await verifyAddress(first, staff);
    } finally {
      await first.stop();
    }
    const pair = await generateKeyPair('RS256', { extractable: true });
    privateKey = pair.privateKey;
    t = await startService(
      {
        PLATFORM_ADMIN_EMAILS: ` ${laterEmail} , ${staff.email.toUpperCase()},${laterIdpEmail}, ${revokedEmail} `,
        IDP_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
      },
      clock.now,
    );
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  const idpToken = (email: string, sub: string) =>
    new SignJWT({ email, email_verified: true, name: 'Idp User' })
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject(sub)
      .setIssuedAt(Math.floor(clock.now().getTime() / 1000))
      .setExpirationTime(Math.floor(clock.now().getTime() / 1000) + 600)
      .sign(privateKey);

  describe('platform staff', () => {
    it('grants the accounts of PLATFORM_ADMIN_EMAILS at start-up (any letter case), and records it in the audit log', async () => {
      expect(ok(await gql(t, staff, '{ me { id isPlatformStaff } }')).me).toEqual({ id: staff.id, isPlatformStaff: true });
      expect(await sqlRows(t, sql`select granted_by from platform_staff where user_id = ${staff.id}`)).toEqual([{ granted_by: 'config' }]);
      expect(await sqlRows(t, sql`select action, actor_id, details from platform_audit_log where target_id = ${staff.id}`)).toEqual([
        { action: 'staff.grant', actor_id: null, details: { by: 'config' } },
      ]);
    });

    it('an address of PLATFORM_ADMIN_EMAILS that signs up after start-up is staff once verified (anyone may sign up with any address), recorded as a config grant', async () => {
      const res = await t.api.post('/auth/signup').send({ email: laterEmail.toUpperCase(), password: 'correct horse battery', username: `later_${unique()}`, displayName: 'Later' });
      expect(res.status).toBe(201);
      const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('svc_session='))!.split(';')[0];
      expect(failure(await gql(t, { cookie }, STATS)).code).toBe('FORBIDDEN');
      expect(await sqlRows(t, sql`select user_id from platform_staff where user_id = ${res.body.user.id}`)).toEqual([]);
      await verifyAddress(t, { cookie, email: laterEmail });
      expect(ok(await gql(t, { cookie }, STATS)).platformStats.users).toBeGreaterThan(0);
      expect(await sqlRows(t, sql`select granted_by from platform_staff where user_id = ${res.body.user.id}`)).toEqual([{ granted_by: 'config' }]);
      expect(await sqlRows(t, sql`select action, actor_id, details from platform_audit_log where target_id = ${res.body.user.id}`)).toEqual([
        { action: 'staff.grant', actor_id: null, details: { by: 'config' } },
      ]);
    });

    it('an address of PLATFORM_ADMIN_EMAILS provisioned by the identity provider after start-up is staff on its first request', async () => {
      const cookie = `__session=${await idpToken(laterIdpEmail, `idp|${unique()}`)}`;
      expect(ok(await gql(t, { cookie }, '{ me { isPlatformStaff } }')).me).toEqual({ isPlatformStaff: true });
    });

    it('a listed account whose staff was revoked is not granted again before the next start-up; an unlisted one never', async () => {
      const res = await t.api.post('/auth/signup').send({ email: revokedEmail, password: 'correct horse battery', username: `revoked_${unique()}`, displayName: 'Revoked' });
      const cookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('svc_session='))!.split(';')[0];
      await verifyAddress(t, { cookie, email: revokedEmail });
      expect(ok(await gql(t, { cookie }, STATS)).platformStats.users).toBeGreaterThan(0);
      expect(await revokeStaff(t.deps, revokedEmail)).toMatchObject({ revoked: true });
      expect(failure(await gql(t, { cookie }, STATS)).code).toBe('FORBIDDEN');
      expect(await sqlRows(t, sql`select user_id from platform_staff where user_id = ${res.body.user.id}`)).toEqual([]);
      expect(failure(await gql(t, await signupUser(t), STATS)).code).toBe('FORBIDDEN');
    });

    describe('staff-only operations, by role (owner, admin, moderator, member of a tribe, outsider, anonymous)', () => {
      let cast: Awaited<ReturnType<typeof staffedTribe>>;
      let target: TestUser;
      beforeAll(async () => {
        cast = await staffedTribe(t, await crew(t));
        target = await signupUser(t);
      }, 60_000);
      const operations: Array<[string, () => [string, Record<string, unknown>]]> = [
        ['platformStats', () => [STATS, {}]],
        ['platformAuditLog', () => [AUDIT, { first: 5 }]],
        ['suspendUser', () => [SUSPEND_USER, { u: target.id, r: 'no' }]],
        ['unsuspendUser', () => [UNSUSPEND_USER, { u: target.id }]],
        ['suspendCommunity', () => [SUSPEND_TRIBE, { c: cast.tribe.id, r: 'mine' }]],
        ['unsuspendCommunity', () => [UNSUSPEND_TRIBE, { c: cast.tribe.id }]],
        ['featureCommunity', () => [FEATURE, { c: cast.tribe.id, f: true }]],
        ['User.suspension', () => ['{ me { suspension { reason } } }', {}]],
        ['User.isPlatformStaff', () => ['{ me { isPlatformStaff } }', {}]],
        ['Community.suspensionReason', () => ['query($id: ID!){ community(id: $id){ suspensionReason } }', { id: cast.tribe.id }]],
      ];
      for (const [name, op] of operations) {
        for (const role of ['owner', 'admin', 'moderator', 'member', 'outsider'] as const) {
          it(`${name}: ${role} gets FORBIDDEN and changes nothing`, async () => {
            const [query, variables] = op();
            expect(failure(await gql(t, cast[role], query, variables)).code).toBe('FORBIDDEN');
            expect(await sqlRows(t, sql`select suspended_at, featured_at from communities where id = ${cast.tribe.id}`)).toEqual([{ suspended_at: null, featured_at: null }]);
            expect(await sqlRows(t, sql`select suspended_at from users where id = ${target.id}`)).toEqual([{ suspended_at: null }]);
          });
        }
        if (!name.includes('.')) {
          it(`${name}: anonymous gets UNAUTHENTICATED`, async () => {
            const [query, variables] = op();
            expect(failure(await gql(t, null, query, variables)).code).toBe('UNAUTHENTICATED');
          });
        }
      }
      it('Community.suspensionReason: anonymous gets UNAUTHENTICATED; staff read it (null while not suspended)', async () => {
        const query = 'query($id: ID!){ community(id: $id){ suspended suspensionReason } }';
        expect(failure(await gql(t, null, query, { id: cast.tribe.id })).code).toBe('UNAUTHENTICATED');
        expect(ok(await gql(t, staff, query, { id: cast.tribe.id })).community).toEqual({ suspended: false, suspensionReason: null });
      });
    });

    itOnPostgres('grants and revokes staff with `npm run admin -- grant|revoke <email>` (a child process on the same database)', async () => {
      const user = await signupUser(t);
      expect(failure(await gql(t, user, STATS)).code).toBe('FORBIDDEN');

      const granted = await adminScript('grant', user.email);
      expect(granted).toMatchObject({ code: 0 });
      expect(granted.stdout).toContain(`granted platform staff to ${user.email}`);
      expect(ok(await gql(t, user, STATS)).platformStats.users).toBeGreaterThan(0);
      expect((await adminScript('grant', user.email)).stdout).toContain('is platform staff already');

      const revoked = await adminScript('revoke', user.email);
      expect(revoked).toMatchObject({ code: 0 });
      expect(failure(await gql(t, user, STATS)).code).toBe('FORBIDDEN');
      expect(await sqlRows(t, sql`select action, actor_id, details from platform_audit_log where target_id = ${user.id} order by created_at`)).toEqual([
        { action: 'staff.grant', actor_id: null, details: { by: 'script' } },
        { action: 'staff.revoke', actor_id: null, details: { by: 'script' } },
      ]);

      expect(await adminScript('grant', `nobody-${unique()}@example.com`)).toMatchObject({ code: 1 });
      expect(await adminScript('promote', user.email)).toMatchObject({ code: 2 });
    }, 120_000);
  });

  describe('suspendUser', () => {
    it('stops the session cookie, the __session token, access and refresh tokens on the next request, and refuses sign-in with account_suspended', async () => {
      const victim = await signupUser(t);
      const pair = await tokens(t, victim);
      // An identity-provider user, provisioned by its first token.
      const idpEmail = `idp_${unique()}@example.com`;
      const idpJwt = await idpToken(idpEmail, `idp|${unique()}`);
      const idpMe = await t.api.get('/auth/me').set('cookie', `__session=${idpJwt}`);
      expect(idpMe.status).toBe(200);
      const idpUserId = idpMe.body.user.id as string;

      expect(ok(await gql(t, victim, '{ me { id } }')).me.id).toBe(victim.id);
      expect((await t.api.get('/v1/auth/me').set(bearer({ token: pair.access }))).status).toBe(200);

      const out = ok(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'spam waves', until: null }));
      expect(out.suspendUser).toEqual({ id: victim.id, suspension: { reason: 'spam waves', until: null } });
      ok(await gql(t, staff, SUSPEND_USER, { u: idpUserId, r: 'idp abuse' }));

      // Session cookie: the very next request is anonymous.
      expect(ok(await gql(t, victim, '{ me { id } }')).me).toBeNull(); // anonymous now
      expect((await t.api.get('/auth/me').set('cookie', victim.cookie)).status).toBe(401);
      // __session (identity provider).
      expect((await t.api.get('/auth/me').set('cookie', `__session=${idpJwt}`)).status).toBe(401);
      // Resource API access token.
      const me = await t.api.get('/v1/auth/me').set(bearer({ token: pair.access }));
      expect(me.status).toBe(401);
      // Refresh token: refused with the clear code, and not spent.
      const refreshed = await t.api.post('/v1/auth/refresh').send({ refresh_token: pair.refresh });
      expect(refreshed.status).toBe(401);
      expect(refreshed.body.error.code).toBe('account_suspended');
      // Sign-in on both surfaces.
      const login = await t.api.post('/auth/login').send({ email: victim.email, password: victim.password });
      expect(login.status).toBe(403);
      expect(login.body).toEqual({ error: 'account_suspended', message: expect.any(String), requestId: expect.any(String) });
      const apiLogin = await t.api.post('/v1/auth/login').send({ email: victim.email, password: victim.password });
      expect(apiLogin.status).toBe(403);
      expect(apiLogin.body.error.code).toBe('account_suspended');
      // A wrong password still says only that.
      const wrong = await t.api.post('/auth/login').send({ email: victim.email, password: 'not the password at all' });
      expect(wrong.status).toBe(401);

      // Lifted: every credential works again, the unspent refresh token included.
      expect(ok(await gql(t, staff, UNSUSPEND_USER, { u: victim.id })).unsuspendUser).toEqual({ id: victim.id, suspension: null });
      ok(await gql(t, staff, UNSUSPEND_USER, { u: idpUserId }));
      expect(ok(await gql(t, victim, '{ me { id } }')).me.id).toBe(victim.id);
      expect((await t.api.get('/v1/auth/me').set(bearer({ token: pair.access }))).status).toBe(200);
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: pair.refresh })).status).toBe(200);
      expect((await t.api.get('/auth/me').set('cookie', `__session=${idpJwt}`)).status).toBe(200);
      expect((await t.api.post('/auth/login').send({ email: victim.email, password: victim.password })).status).toBe(200);

      const rows = await sqlRows(t, sql`select action, actor_id, reason from platform_audit_log where target_id = ${victim.id} order by created_at`);
      expect(rows).toEqual([
        { action: 'user.suspend', actor_id: staff.id, reason: 'spam waves' },
        { action: 'user.unsuspend', actor_id: staff.id, reason: null },
      ]);
    });

    it('ends by itself when the clock passes `until`', async () => {
      const victim = await signupUser(t);
      const until = new Date(clock.now().getTime() + HOUR).toISOString();
      expect(ok(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'cool off', until })).suspendUser.suspension).toEqual({ reason: 'cool off', until });
      expect(ok(await gql(t, victim, '{ me { id } }')).me).toBeNull(); // anonymous now
      const login = await t.api.post('/v1/auth/login').send({ email: victim.email, password: victim.password });
      expect(login.body.error.message).toContain(until);
      clock.advance(HOUR + 1_000);
      expect(ok(await gql(t, victim, '{ me { id } }')).me.id).toBe(victim.id);
      expect((await t.api.post('/v1/auth/login').send({ email: victim.email, password: victim.password })).status).toBe(200);
    });

    it('refuses a reason missing or too long, an `until` in the past, and suspending oneself (BAD_USER_INPUT), and an unknown user (NOT_FOUND)', async () => {
      const victim = await signupUser(t);
      expect(failure(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: '  ' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      expect(failure(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'x'.repeat(501) }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
      const past = new Date(clock.now().getTime() - 1_000).toISOString();
      expect(failure(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'late', until: past }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_until' });
      expect(failure(await gql(t, staff, SUSPEND_USER, { u: staff.id, r: 'me' }))).toEqual({ code: 'BAD_USER_INPUT', reason: 'cannot_suspend_self' });
      expect(failure(await gql(t, staff, SUSPEND_USER, { u: '00000000-0000-4000-8000-000000000000', r: 'ghost' })).code).toBe('NOT_FOUND');
      expect(ok(await gql(t, victim, '{ me { id } }')).me.id).toBe(victim.id);
    });
  });

  describe('suspendCommunity', () => {
    let owner: Actor;
    let member: Actor;
    let tribe: { id: string; handle: string };
    let post: { id: string };
    let key: string;
    beforeAll(async () => {
      [owner, member] = await Promise.all([actor(t), actor(t)]);
      tribe = await createTribe(t, owner);
      await join(t, member, tribe.handle);
      post = await createPost(t, member, tribe.id);
      key = (await createKey(t, owner, tribe.handle)).key;
    });

    it('makes the tribe read-only on GraphQL, the resource API and the Application REST routes (community_suspended), reads still work', async () => {
      const out = ok(await gql(t, staff, SUSPEND_TRIBE, { c: tribe.id, r: 'payment fraud' }));
      expect(out.suspendCommunity).toEqual({ id: tribe.id, handle: tribe.handle, suspended: true, suspensionReason: 'payment fraud' });

      // GraphQL writes: a member's post and comment, the owner's settings.
      const create = await gql(t, member, 'mutation($c: ID!){ createPost(communityId: $c, input: { content: "<p>hi</p>" }){ id } }', { c: tribe.id });
      expect(failure(create)).toEqual({ code: 'FORBIDDEN', reason: 'community_suspended' });
      const comment = await gql(t, member, 'mutation($p: ID!){ createComment(postId: $p, input: { content: "yo" }){ id } }', { p: post.id });
      expect(failure(comment)).toEqual({ code: 'FORBIDDEN', reason: 'community_suspended' });
      const rename = await gql(t, owner, 'mutation($id: ID!){ updateCommunity(id: $id, input: { name: "Renamed" }){ id } }', { id: tribe.id });
      expect(failure(rename)).toEqual({ code: 'FORBIDDEN', reason: 'community_suspended' });
      // Resource API writes.
      const rest = await t.api.post(`/v1/communities/${tribe.id}/posts`).set(bearer(member)).send({ content: 'hello' });
      expect(rest.status).toBe(403);
      expect(rest.body.error.code).toBe('community_suspended');
      const del = await t.api.delete(`/v1/communities/${tribe.id}/posts/${post.id}`).set(bearer(member));
      expect(del.status).toBe(403);
      expect(del.body.error.code).toBe('community_suspended');
      // Application REST route (control plane).
      const newKey = await t.api.post(`/communities/${tribe.handle}/api-keys`).set('cookie', owner.cookie).send({ name: 'k', scopes: ['posts:read'] });
      expect(newKey.status).toBe(403);
      expect(newKey.body).toEqual({ error: 'community_suspended', message: expect.any(String), requestId: expect.any(String) });

      // Nobody joins a suspended tribe.
      const outsider = await signupUser(t);
      const joining = await gql(t, outsider, 'mutation($h: String!){ joinCommunity(handle: $h){ id } }', { h: tribe.handle });
      expect(failure(joining)).toEqual({ code: 'FORBIDDEN', reason: 'community_suspended' });

      // Reads still work.
      expect((await t.api.get(`/v1/communities/${tribe.id}/posts`).set(bearer(member))).status).toBe(200);
      const read = ok(await gql(t, member, 'query($id: ID!){ community(id: $id){ id suspended featured } }', { id: tribe.id }));
      expect(read.community).toEqual({ id: tribe.id, suspended: true, featured: false });
      expect(await countOf(t, sql`select count(*)::int as n from posts where community_id = ${tribe.id}`)).toBe(1);
    });

    it("answers the tribe's Platform API keys 403 forbidden with the reason", async () => {
      const res = await platformGet(t, '/v1/posts', key);
      expect(res.status).toBe(403);
      expect(res.body.error.type).toBe('forbidden');
      expect(res.body.error.message).toContain('suspended');
      expect(res.body.error.message).toContain('payment fraud');
      const me = await platformGet(t, '/v1/me', key); // in the contract too (rest-facade/openapi.json)
      expect([me.status, me.body.error.type]).toEqual([403, 'forbidden']);
    });

    it('lets a non-staff see `suspended` but not the reason (FORBIDDEN)', async () => {
      const out = await gql(t, member, 'query($id: ID!){ community(id: $id){ suspensionReason } }', { id: tribe.id });
      expect(failure(out).code).toBe('FORBIDDEN');
    });

    it('writes and keys work again once reinstated', async () => {
      expect(ok(await gql(t, staff, UNSUSPEND_TRIBE, { c: tribe.id })).unsuspendCommunity).toEqual({ id: tribe.id, suspended: false, suspensionReason: null });
      expect((await platformGet(t, '/v1/posts', key)).status).toBe(200);
      await createPost(t, member, tribe.id);
      expect((await t.api.post(`/v1/communities/${tribe.id}/posts`).set(bearer(member)).send({ content: 'back' })).status).toBe(201);
      expect(await sqlRows(t, sql`select action, actor_id, reason from platform_audit_log where target_id = ${tribe.id} order by created_at`)).toEqual([
        { action: 'community.suspend', actor_id: staff.id, reason: 'payment fraud' },
        { action: 'community.unsuspend', actor_id: staff.id, reason: null },
      ]);
    });
  });

  describe('featureCommunity', () => {
    it('puts featured tribes first in discover, in every sort and across pages; suspended tribes are left out', async () => {
      const owner = await signupUser(t);
      const word = `feat${randomBytes(4).toString('hex')}`;
      const a = await createTribe(t, owner, { name: `${word} a` });
      const b = await createTribe(t, owner, { name: `${word} b` });
      const c = await createTribe(t, owner, { name: `${word} c` });
      await sqlRows(t, sql`update communities set created_at = now() - (case handle when ${a.handle} then 3 when ${b.handle} then 2 else 1 end) * interval '1 minute'
        where id in (${a.id}, ${b.id}, ${c.id})`);
      const DISCOVER = 'query($q: String, $s: DiscoverSort, $after: String, $first: Int){ discoverCommunities(query: $q, sort: $s, first: $first, after: $after){ edges { node { id } } pageInfo { endCursor hasNextPage } } }';
      const ids = async (sort: string) => ok(await gql(t, null, DISCOVER, { q: word, s: sort })).discoverCommunities.edges.map((e: any) => e.node.id);
      expect(await ids('NEWEST')).toEqual([c.id, b.id, a.id]);

      expect(ok(await gql(t, staff, FEATURE, { c: a.id, f: true })).featureCommunity).toEqual({ id: a.id, featured: true });
      expect(await ids('NEWEST')).toEqual([a.id, c.id, b.id]);
      expect(await ids('LARGEST')).toEqual([a.id, ...[b.id, c.id].sort().reverse()]);
      expect((await ids('TRENDING'))[0]).toBe(a.id);

      // One per page: the cursor carries the featured flag.
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page: any = ok(await gql(t, null, DISCOVER, { q: word, s: 'NEWEST', first: 1, after })).discoverCommunities;
        seen.push(...page.edges.map((e: any) => e.node.id));
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      } while (after);
      expect(seen).toEqual([a.id, c.id, b.id]);

      ok(await gql(t, staff, SUSPEND_TRIBE, { c: c.id, r: 'hidden' }));
      expect(await ids('NEWEST')).toEqual([a.id, b.id]);
      ok(await gql(t, staff, FEATURE, { c: a.id, f: false }));
      expect(await ids('NEWEST')).toEqual([b.id, a.id]);
      expect(await sqlRows(t, sql`select action from platform_audit_log where target_id = ${a.id} order by created_at`)).toEqual([
        { action: 'community.feature' },
        { action: 'community.unfeature' },
      ]);
    });
  });

  describe('platformAuditLog', () => {
    it('lists staff actions newest first with Relay cursors, and refuses updates and deletes of its rows', async () => {
      const victim = await signupUser(t);
      ok(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'first' }));
      ok(await gql(t, staff, UNSUSPEND_USER, { u: victim.id }));
      ok(await gql(t, staff, SUSPEND_USER, { u: victim.id, r: 'second' }));
      const page1 = ok(await gql(t, staff, AUDIT, { first: 2 })).platformAuditLog;
      expect(page1.edges.map((e: any) => [e.node.action, e.node.reason, e.node.targetUser?.id, e.node.actor?.id])).toEqual([
        ['user.suspend', 'second', victim.id, staff.id],
        ['user.unsuspend', null, victim.id, staff.id],
      ]);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = ok(await gql(t, staff, AUDIT, { first: 2, after: page1.pageInfo.endCursor })).platformAuditLog;
      expect(page2.edges[0].node).toMatchObject({ action: 'user.suspend', reason: 'first', targetType: 'user', targetId: victim.id, targetCommunity: null });
      expect(failure(await gql(t, staff, AUDIT, { first: 2, after: 'nope.nope' })).code).toBe('BAD_USER_INPUT');

      const refusal = (q: ReturnType<typeof sql>) => sqlRows(t, q).then(() => 'changed', (e: any) => String(e.cause?.message ?? e.message));
      expect(await refusal(sql`update platform_audit_log set reason = 'edited' where target_id = ${victim.id}`)).toMatch(/append-only/);
      expect(await refusal(sql`delete from platform_audit_log where target_id = ${victim.id}`)).toMatch(/append-only/);
      expect(await countOf(t, sql`select count(*)::int as n from platform_audit_log where target_id = ${victim.id}`)).toBe(3);
    });
  });
});

describe('platformStats', () => {
  // A window of its own (mid-2091) on the shared database: no other test writes rows there.
  const now = new Date('2091-06-15T12:00:00.000Z');
  let t: TestService;
  let staff: TestUser;
  beforeAll(async () => {
    const first = await startService();
    try {
      staff = await signupUser(first);
      await verifyAddress(first, staff);
    } finally {
      await first.stop();
    }
    t = await startService({ PLATFORM_ADMIN_EMAILS: staff.email }, new ManualClock(now).clock);
    // The staff member signs in on this clock (the old session expired long before 2091).
    const login = await t.api.post('/auth/login').send({ email: staff.email, password: staff.password });
    staff.cookie = String(login.headers['set-cookie'][0]).split(';')[0];
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  it('counts users, tribes, sign-ups, active users, posts per day and paid orders per currency exactly', async () => {
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    const [u1, u2, u3] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
    // Sign-ups: u1 within the last day, u2 within 30 days, u3 before.
    for (const [u, when] of [[u1, at(-2 * HOUR)], [u2, at(-10 * DAY)], [u3, at(-40 * DAY)]] as const) {
      await sqlRows(t, sql`update users set created_at = ${when}::timestamptz where id = ${u.id}`);
    }
    const tribeA = await createTribe(t, u1);
    const tribeB = await createTribe(t, u2);
    await join(t, u1, tribeB.handle);
    await join(t, u3, tribeA.handle);
    // Activity: u1 in two tribes within the last day (counted once), u2 within 30 days, u3 before.
    await sqlRows(t, sql`update members set last_active_at = case
        when user_id = ${u1.id} then ${at(-HOUR)}::timestamptz
        when user_id = ${u2.id} then ${at(-5 * DAY)}::timestamptz
        else ${at(-45 * DAY)}::timestamptz end
      where user_id in (${u1.id}, ${u2.id}, ${u3.id})`);
    // Posts: two today, one on June 1st, one before the 30-day window (May 10th).
    const posts = await Promise.all([0, 1, 2, 3].map(() => createPost(t, u1, tribeA.id)));
    const times = ['2091-06-15T01:00:00Z', '2091-06-15T11:59:00Z', '2091-06-01T23:59:59Z', '2091-05-10T10:00:00Z'];
    for (const [i, p] of posts.entries()) await sqlRows(t, sql`update posts set created_at = ${times[i]}::timestamptz where id = ${p.id}`);
    // Orders in a currency of this test's own: two paid, one pending, one refunded.
    const currency = `Q${String.fromCharCode(65 + randomBytes(1)[0] % 26)}${String.fromCharCode(65 + randomBytes(1)[0] % 26)}`;
    await seedOrder(t, tribeA.id, u1.id, { currency, amountCents: 1000 });
    await seedOrder(t, tribeA.id, u2.id, { currency, amountCents: 2500 });
    await seedOrder(t, tribeA.id, u2.id, { currency, amountCents: 999, status: 'pending', paidAt: null });
    await seedOrder(t, tribeB.id, u3.id, { currency, amountCents: 777, status: 'refunded' });

    const usersBefore = await countOf(t, sql`select count(*)::int as n from users`);
    const tribesBefore = await countOf(t, sql`select count(*)::int as n from communities`);
    const stats = ok(await gql(t, staff, STATS)).platformStats;
    const usersAfter = await countOf(t, sql`select count(*)::int as n from users`);
    const tribesAfter = await countOf(t, sql`select count(*)::int as n from communities`);

    expect(stats.generatedAt).toBe(now.toISOString());
    expect(stats.users).toBeGreaterThanOrEqual(usersBefore);
    expect(stats.users).toBeLessThanOrEqual(usersAfter);
    expect(stats.tribes).toBeGreaterThanOrEqual(tribesBefore);
    expect(stats.tribes).toBeLessThanOrEqual(tribesAfter);
    expect(stats).toMatchObject({ signupsLastDay: 1, signupsLast30Days: 2, activeUsersLastDay: 1, activeUsersLast30Days: 2 });
    expect(stats.postsPerDay).toHaveLength(30);
    expect(stats.postsPerDay[0]).toEqual({ day: '2091-05-17', count: 0 });
    expect(stats.postsPerDay[29]).toEqual({ day: '2091-06-15', count: 2 });
    expect(stats.postsPerDay.filter((d: any) => d.count > 0)).toEqual([
      { day: '2091-06-01', count: 1 },
      { day: '2091-06-15', count: 2 },
    ]);
    expect(stats.paidOrders.filter((o: any) => o.currency === currency)).toEqual([{ currency, paidOrders: 2, revenueCents: 3500 }]);
  });
});
