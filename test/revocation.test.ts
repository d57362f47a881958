// Credentials end when their owner or platform staff end them (issue 29): a resource-API access token issued before
// changePassword, resetPassword or the revocation of its refresh-token family is refused from the next request on, and
// POST /auth/logout, changePassword, resetPassword, suspendUser and a revoked family close the WebSockets they end at
// once (4401), before any later private push. Real PostgreSQL, real sockets, the reset link read from a real mail.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { sendQueuedMail } from '../subgraphs/mail/index.js';
import { createTribe, join, signupUser, type TestUser } from './factory.js';
import { SmtpSink, tokenIn } from './smtp.js';
import { gql, ok, startService, waitFor, type TestService } from './support.js';
import { subscribe, wsConnect, type Received, type WsConnection } from './ws.js';

const Q = {
  start: 'mutation($u: [ID!]!){ startConversation(userIds: $u){ id } }',
  send: 'mutation($c: ID!, $b: String!){ sendMessage(conversationId: $c, body: $b){ id } }',
  changePassword: 'mutation($c: String!, $n: String!){ changePassword(currentPassword: $c, newPassword: $n) }',
  requestReset: 'mutation($e: String!){ requestPasswordReset(email: $e) }',
  reset: 'mutation($t: String!, $p: String!){ resetPassword(token: $t, newPassword: $p) }',
  suspend: 'mutation($u: ID!, $r: String!){ suspendUser(userId: $u, reason: $r){ id } }',
};
const NOTIFICATIONS = 'subscription { notificationAdded { id kind conversationId } }';
const NEW_PASSWORD = 'a brand new passphrase 42';

describe('revoked credentials', () => {
  let t: TestService;
  let sink: SmtpSink;
  let url: string;
  let staff: TestUser;
  const open: WsConnection[] = [];

  beforeAll(async () => {
    sink = await new SmtpSink().start();
    t = await startService({ SMTP_URL: sink.url, PUBLIC_URL: 'https://tribes.example' });
    url = `ws://127.0.0.1:${await t.listen(0, '127.0.0.1')}/graphql`;
    staff = await signupUser(t);
    await t.deps.database.db.execute(sql`insert into platform_staff (user_id, granted_by) values (${staff.id}, 'test')`);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(open.map((c) => c.dispose()));
    await t?.stop();
    await sink?.stop();
  });

  const me = (token: string) => t.api.get('/v1/auth/me').set('authorization', `Bearer ${token}`);
  const tokens = async (user: TestUser, password = user.password) => {
    const res = await t.api.post('/v1/auth/login').send({ email: user.email, password });
    expect(res.status).toBe(200);
    return { access: res.body.data.access_token as string, refresh: res.body.data.refresh_token as string };
  };
  /** A second first-party session of `user` (another browser): its cookie. */
  const otherSession = async (user: TestUser) => {
    const res = await t.api.post('/auth/login').send({ email: user.email, password: user.password });
    expect(res.status).toBe(200);
    return String(res.headers['set-cookie'][0]).split(';')[0];
  };
  /** The 401 of the resource API: its envelope, code `unauthorized`. */
  const expectRefused = async (token: string) => {
    const res = await me(token);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), request_id: expect.any(String) } });
  };
  const resetToken = async (email: string) => {
    const before = sink.to(email).length;
    expect(ok(await gql(t, null, Q.requestReset, { e: email }))).toEqual({ requestPasswordReset: true });
    await sendQueuedMail(t.deps);
    const mails = sink.to(email).slice(before);
    expect(mails).toHaveLength(1);
    return tokenIn(mails[0].text, '/reset-password');
  };

  describe('resource-API access tokens', () => {
    it('refuses a token issued before changePassword (every family), while a token issued after works', async () => {
      const user = await signupUser(t);
      const [first, second] = [await tokens(user), await tokens(user)];
      expect((await me(first.access)).status).toBe(200);
      ok(await gql(t, user, Q.changePassword, { c: user.password, n: NEW_PASSWORD }));
      await expectRefused(first.access);
      await expectRefused(second.access);
      const after = await tokens(user, NEW_PASSWORD);
      expect((await me(after.access)).status).toBe(200);
      // The session that changed the password keeps working.
      expect((await t.api.get('/auth/me').set('cookie', user.cookie)).status).toBe(200);
    });

    it('refuses a token issued before resetPassword', async () => {
      const user = await signupUser(t);
      const before = await tokens(user);
      expect((await me(before.access)).status).toBe(200);
      const token = await resetToken(user.email);
      expect(ok(await gql(t, null, Q.reset, { t: token, p: NEW_PASSWORD }))).toEqual({ resetPassword: true });
      await expectRefused(before.access);
      expect((await me((await tokens(user, NEW_PASSWORD)).access)).status).toBe(200);
    });

    it("refuses every access token of a family once a reused refresh token revokes it; another family's token still works", async () => {
      const user = await signupUser(t);
      const stolen = await tokens(user);
      const elsewhere = await tokens(user);
      const rotated = await t.api.post('/v1/auth/refresh').send({ refresh_token: stolen.refresh });
      expect(rotated.status).toBe(200);
      const latest = rotated.body.data.access_token as string;
      expect((await me(latest)).status).toBe(200);
      // The used refresh token presented again: the whole family is revoked.
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: stolen.refresh })).status).toBe(401);
      await expectRefused(latest);
      await expectRefused(stolen.access);
      expect((await me(elsewhere.access)).status).toBe(200);
    });

    it('refuses a token of a suspended user from the next request on', async () => {
      const user = await signupUser(t);
      const pair = await tokens(user);
      expect((await me(pair.access)).status).toBe(200);
      ok(await gql(t, staff, Q.suspend, { u: user.id, r: 'spam' }));
      await expectRefused(pair.access);
    });
  });

  describe('WebSockets', () => {
    /** A victim with a conversation with a sender: every message the sender sends is a private notification of the victim's. */
    async function pair() {
      const [sender, victim] = await Promise.all([signupUser(t), signupUser(t)]);
      const tribe = await createTribe(t, sender);
      await join(t, victim, tribe.handle);
      const conversation = ok(await gql(t, sender, Q.start, { u: [victim.id] })).startConversation as { id: string };
      const send = async (body: string) => ok(await gql(t, sender, Q.send, { c: conversation.id, b: body }));
      return { sender, victim, send };
    }
    /** A socket with `auth` listening to notificationAdded, routed. */
    async function listening(auth: Parameters<typeof wsConnect>[1]): Promise<{ conn: WsConnection; received: Received }> {
      const conn = wsConnect(url, auth);
      open.push(conn);
      const before = t.realtime!.subscriptions;
      const received = subscribe(conn, NOTIFICATIONS);
      await waitFor(() => t.realtime!.subscriptions > before, 10_000, 'the subscription to be routed');
      return { conn, received };
    }
    /** The socket's close code, or 'open' when it is still open after `ms`. */
    const closeCode = async (conn: WsConnection, ms = 5_000) =>
      Promise.race([conn.closed.then((c) => c.code), new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), ms))]);
    /** Sends a first message and waits until each socket of `live` received its notification. */
    async function warmUp(send: (body: string) => Promise<unknown>, live: Received[]) {
      await send('before');
      await waitFor(() => live.every((r) => r.events.length === 1), 10_000, 'the first notification on every socket');
    }

    it('POST /auth/logout closes the sockets of that session (4401) before the next push; another session keeps its socket', async () => {
      const { victim, send } = await pair();
      const kept = await otherSession(victim);
      const ended = await listening({ cookie: victim.cookie });
      const stays = await listening({ cookie: kept });
      await warmUp(send, [ended.received, stays.received]);
      expect((await t.api.post('/auth/logout').set('cookie', victim.cookie)).status).toBe(200);
      await send('after');
      expect(await closeCode(ended.conn)).toBe(4401);
      await waitFor(() => stays.received.events.length === 2, 10_000, 'the push to the other session');
      expect(ended.received.events).toHaveLength(1);
      expect(ended.received.payloads).toHaveLength(1);
    });

    it("changePassword closes the user's other sockets (sessions and access tokens) at once, and keeps the current session's", async () => {
      const { victim, send } = await pair();
      const other = await otherSession(victim);
      const { access } = await tokens(victim);
      const current = await listening({ cookie: victim.cookie });
      const otherSocket = await listening({ cookie: other });
      const tokenSocket = await listening({ token: access });
      await warmUp(send, [current.received, otherSocket.received, tokenSocket.received]);
      ok(await gql(t, victim, Q.changePassword, { c: victim.password, n: NEW_PASSWORD }));
      await send('after');
      expect(await closeCode(otherSocket.conn)).toBe(4401);
      expect(await closeCode(tokenSocket.conn)).toBe(4401);
      await waitFor(() => current.received.events.length === 2, 10_000, 'the push to the current session');
      expect(otherSocket.received.events).toHaveLength(1);
      expect(tokenSocket.received.events).toHaveLength(1);
      expect(await closeCode(current.conn, 200)).toBe('open');
    });

    it('resetPassword closes every socket of the user (4401) before the next push', async () => {
      const { victim, send } = await pair();
      const { access } = await tokens(victim);
      const bySession = await listening({ cookie: victim.cookie });
      const byToken = await listening({ token: access });
      await warmUp(send, [bySession.received, byToken.received]);
      const token = await resetToken(victim.email);
      expect(ok(await gql(t, null, Q.reset, { t: token, p: NEW_PASSWORD }))).toEqual({ resetPassword: true });
      await send('after');
      expect(await closeCode(bySession.conn)).toBe(4401);
      expect(await closeCode(byToken.conn)).toBe(4401);
      expect(bySession.received.events).toHaveLength(1);
      expect(byToken.received.events).toHaveLength(1);
    });

    it('suspendUser closes every socket of the user (4401) before the next push', async () => {
      const { victim, send } = await pair();
      const { access } = await tokens(victim);
      const bySession = await listening({ cookie: victim.cookie });
      const byToken = await listening({ token: access });
      await warmUp(send, [bySession.received, byToken.received]);
      ok(await gql(t, staff, Q.suspend, { u: victim.id, r: 'abuse' }));
      await send('after');
      expect(await closeCode(bySession.conn)).toBe(4401);
      expect(await closeCode(byToken.conn)).toBe(4401);
      expect(bySession.received.events).toHaveLength(1);
      expect(byToken.received.events).toHaveLength(1);
    });

    it("a revoked refresh-token family closes its sockets (4401); another family's socket stays", async () => {
      const { victim, send } = await pair();
      const stolen = await tokens(victim);
      const elsewhere = await tokens(victim);
      const ended = await listening({ token: stolen.access });
      const stays = await listening({ token: elsewhere.access });
      await warmUp(send, [ended.received, stays.received]);
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: stolen.refresh })).status).toBe(200);
      expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: stolen.refresh })).status).toBe(401);
      await send('after');
      expect(await closeCode(ended.conn)).toBe(4401);
      await waitFor(() => stays.received.events.length === 2, 10_000, "the push to the other family's socket");
      expect(ended.received.events).toHaveLength(1);
    });
  });
});
