// No secret in the logs (issue 30): a full flow at LOG_LEVEL=debug, its log lines read as an operator reads stdout,
// searched for every password, token, key, cookie and signing secret the flow used.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createService } from '../server/service.js';
import { createLogger } from '../subgraphs/kernel/logging.js';
import { sendQueuedMail } from '../subgraphs/mail/index.js';
import { createKey, createTribe, signupUser, unique } from './factory.js';
import { SmtpSink, tokenIn } from './smtp.js';
import { LOOPBACK_ALLOWED, Receiver, bearer, gql, ok, platformGet, testConfig, type TestService } from './support.js';

const STRIPE_SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;
const JWT_SECRET = `jwt-${randomUUID()}-${randomUUID()}`;

/** Every line the service wrote, as written (JSON text). */
const written: string[] = [];
const stdout = { write: (line: string) => void written.push(line) };

describe('log secrets', () => {
  let t: TestService;
  let smtp: SmtpSink;
  let receiver: Receiver;

  beforeAll(async () => {
    smtp = await new SmtpSink().start();
    receiver = await new Receiver().start();
    const config = testConfig({
      LOG_LEVEL: 'debug',
      JWT_SECRET,
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      PUBLIC_URL: 'https://tribes.example',
      MAIL_FROM: 'Tribes <no-reply@tribes.example>',
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED,
    });
    const service = await createService(config, { log: createLogger('debug', stdout) });
    t = Object.assign(service, { api: request(service.http) });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.stop();
    await smtp?.stop();
  });

  it('a full flow at debug level logs none of its passwords, tokens, keys, cookies or secrets', async () => {
    written.length = 0;
    const secrets: Record<string, string> = { JWT_SECRET, STRIPE_WEBHOOK_SECRET: STRIPE_SECRET };

    // Sign up and sign in (Application API): the password and the session cookies.
    const owner = await signupUser(t);
    secrets.password = owner.password;
    secrets.signupSession = owner.cookie.split('=')[1];
    const login = await t.api.post('/auth/login').send({ email: owner.email, password: owner.password });
    expect(login.status).toBe(200);
    secrets.loginSession = String(login.headers['set-cookie'][0]).split(';')[0].split('=')[1];
    expect((await t.api.get('/auth/me').set('cookie', `svc_session=${secrets.loginSession}`)).status).toBe(200);
    await t.api.post('/auth/login').send({ email: owner.email, password: `${owner.password} wrong` });
    secrets.wrongPassword = `${owner.password} wrong`;

    // Resource API: access and refresh tokens, a refresh, a call with the new access token.
    const tokens = (await t.api.post('/v1/auth/login').send({ email: owner.email, password: owner.password })).body.data;
    secrets.accessToken = tokens.access_token;
    secrets.refreshToken = tokens.refresh_token;
    const refreshed = await t.api.post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token });
    expect(refreshed.status).toBe(200);
    secrets.refreshedAccessToken = refreshed.body.data.access_token;
    secrets.refreshedRefreshToken = refreshed.body.data.refresh_token;
    expect((await t.api.get('/v1/auth/me').set(bearer({ token: secrets.refreshedAccessToken }))).status).toBe(200);
    expect((await t.api.post('/v1/auth/refresh').send({ refresh_token: tokens.refresh_token })).status).toBe(401); // reused

    // GraphQL with the bearer token.
    expect(ok(await gql(t, owner, '{ me { id } }')).me.id).toBe(owner.id);
    expect((await t.api.post('/graphql').set(bearer({ token: secrets.refreshedAccessToken })).send({ query: '{ me { id } }' })).status).toBe(200);

    // An API key, created and used on the Platform API (and a wrong one).
    const tribe = await createTribe(t, owner);
    const key = await createKey(t, owner, tribe.handle);
    secrets.apiKey = key.key;
    expect((await platformGet(t, '/v1/members', key.key)).status).toBe(200);
    expect((await platformGet(t, '/v1/members', `${key.key}x`)).status).toBe(401);

    // A personal API key of the resource API, created through GraphQL and used (and a wrong one).
    const personal = ok(await gql(t, owner, 'mutation { createPersonalApiKey(input: {name: "logged?"}) { key } }')).createPersonalApiKey;
    secrets.personalApiKey = personal.key;
    expect((await t.api.get('/v1/auth/me').set('authorization', `Bearer ${personal.key}`)).status).toBe(200);
    expect((await t.api.get('/v1/auth/me').set('authorization', `Bearer ${personal.key.slice(0, -1)}${personal.key.endsWith('A') ? 'B' : 'A'}`)).status).toBe(401);

    // A webhook endpoint with its signing secret, and a signed test ping to it.
    const created = await t.api.post(`/communities/${tribe.handle}/webhooks`).set('cookie', owner.cookie).send({ url: receiver.url(), events: ['member.joined'] });
    expect(created.status).toBe(201);
    secrets.webhookSecret = created.body.secret;
    receiver.secret = created.body.secret;
    const ping = await t.api.post(`/communities/${tribe.handle}/webhooks/${created.body.id}/test`).set('cookie', owner.cookie).send({});
    expect(ping.body.ok).toBe(true);
    expect(receiver.events).toHaveLength(1);

    // A password reset by its mailed link, then sign-in with the new password.
    expect(ok(await gql(t, null, 'mutation($e: String!){ requestPasswordReset(email: $e) }', { e: owner.email }))).toEqual({ requestPasswordReset: true });
    await sendQueuedMail(t.deps);
    const mail = smtp.received.filter((m) => m.to.some((to) => to.toLowerCase() === owner.email.toLowerCase())).at(-1)!;
    secrets.resetToken = tokenIn(mail.text, '/reset-password');
    await t.api.get(`/reset-password?token=${encodeURIComponent(secrets.resetToken)}`);
    secrets.newPassword = `new password ${unique()}`;
    const reset = await gql(t, null, 'mutation($t: String!, $p: String!){ resetPassword(token: $t, newPassword: $p) }', { t: secrets.resetToken, p: secrets.newPassword });
    expect(ok(reset)).toEqual({ resetPassword: true });
    expect((await t.api.post('/auth/login').send({ email: owner.email, password: secrets.newPassword })).status).toBe(200);

    // A Stripe-signed payment event, and one signed with another secret.
    const payload = JSON.stringify({ id: `evt_${unique()}${unique()}`, object: 'event', type: 'checkout.session.completed', created: 1_700_000_000, livemode: false, data: { object: { id: `cs_${unique()}`, object: 'checkout.session', payment_status: 'paid', metadata: { order_id: randomUUID() } } } });
    const at = Math.floor(Date.now() / 1000);
    secrets.stripeSignature = createHmac('sha256', STRIPE_SECRET).update(`${at}.${payload}`).digest('hex');
    const stripe = (signature: string) => t.api.post('/webhooks/payments/stripe').set('content-type', 'application/json').set('stripe-signature', `t=${at},v1=${signature}`).send(payload);
    expect((await stripe(secrets.stripeSignature)).status).toBeLessThan(500);
    expect((await stripe('0'.repeat(64))).status).toBe(400);

    // The flow was logged (at debug level, with the request lines), and no line holds any of its secrets.
    expect(written.length).toBeGreaterThan(20);
    expect(written.filter((l) => l.includes('"request completed"')).length).toBeGreaterThan(20);
    const leaks = Object.entries(secrets).flatMap(([name, value]) => {
      expect(value.length).toBeGreaterThanOrEqual(8);
      return written.filter((line) => line.includes(value)).map((line) => `${name}: ${line}`);
    });
    expect(leaks).toEqual([]);
  });

  it('the logger censors credentials a line would carry: headers, passwords, tokens, keys, secrets', () => {
    written.length = 0;
    const value = `s3cr3t-${randomUUID()}`;
    t.deps.log.warn(
      {
        req: { method: 'POST', headers: { authorization: `Bearer ${value}`, cookie: `svc_session=${value}`, 'stripe-signature': value } },
        res: { headers: { 'set-cookie': `svc_session=${value}` } },
        password: value,
        input: { newPassword: value, refresh_token: value, token: value },
        endpoint: { secret: value },
        apiKey: value,
      },
      'a careless line',
    );
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain(value);
    expect(JSON.parse(written[0])).toMatchObject({ msg: 'a careless line', password: '[redacted]', req: { method: 'POST', headers: { authorization: '[redacted]' } } });
  });

  it('censors a key by its form even glued to other text (a URL-encoded header, a query string)', () => {
    written.length = 0;
    const key = `svc_pk_${randomUUID().replace(/-/g, '')}`;
    t.deps.log.warn({ url: `/v1/x?key=${key}`, header: `Bearer%20${key}`, word: `x${key}` }, `saw ${key}`);
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain(key.slice(7));
    expect(JSON.parse(written[0])).toMatchObject({ url: '/v1/x?key=svc_pk_[redacted]', header: 'Bearer%20svc_pk_[redacted]', word: 'xsvc_pk_[redacted]', msg: 'saw svc_pk_[redacted]' });
  });
});
