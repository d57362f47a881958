import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { signUnsubscribe } from '../subgraphs/digest/index.js';
import { callerAssertionKey, signCallerAssertion } from '../subgraphs/kernel/caller-assertion.js';
import { checkSignature, signMediaPath } from '../subgraphs/media/index.js';
import { serveSubgraph } from '../server/subgraph.js';
import { accessToken, createTribe, signupUser, type TestUser } from './factory.js';
import { gql, startService, testConfig, type TestService } from './support.js';

// Rotating JWT_SECRET, INTERNAL_SECRET and STRIPE_WEBHOOK_SECRET without downtime (docs/operations.md › Rotating
// secrets): three deployments of one database, the one before the rotation (old secrets only), the one during it (new
// secrets, the old ones as *_PREVIOUS) and the one after it (new secrets only).
const OLD = { jwt: 'old-jwt-secret-old-jwt-secret-0123456789', internal: 'old-internal-secret-old-internal-0123456789', stripe: 'whsec_old_0123456789abcdefghijklmnop' };
const NEW = { jwt: 'new-jwt-secret-new-jwt-secret-0123456789', internal: 'new-internal-secret-new-internal-0123456789', stripe: 'whsec_new_0123456789abcdefghijklmnop' };

const STRIPE = '/webhooks/payments/stripe';
/** A Stripe-format signature header over `${t}.${payload}` with one `v1` per secret. */
const stripeSignature = (payload: string, ...secrets: string[]) => {
  const t = Math.floor(Date.now() / 1000);
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.${payload}`).digest('hex')}`)].join(',');
};

describe('secret rotation', () => {
  let before: TestService;
  let during: TestService;
  let after: TestService;

  beforeAll(async () => {
    [before, during, after] = await Promise.all([
      startService({ JWT_SECRET: OLD.jwt, STRIPE_WEBHOOK_SECRET: OLD.stripe }),
      startService({ JWT_SECRET: NEW.jwt, JWT_SECRET_PREVIOUS: OLD.jwt, STRIPE_WEBHOOK_SECRET: NEW.stripe, STRIPE_WEBHOOK_SECRET_PREVIOUS: OLD.stripe }),
      startService({ JWT_SECRET: NEW.jwt, STRIPE_WEBHOOK_SECRET: NEW.stripe }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([before, during, after].map((t) => t?.stop()));
  });

  describe('JWT_SECRET_PREVIOUS', () => {
    let owner: TestUser;
    let tribe: { id: string };
    beforeAll(async () => {
      owner = await signupUser(before);
      tribe = await createTribe(before, owner);
    });
    const read = (t: TestService, token: string) => t.api.get(`/v1/communities/${tribe.id}`).set('authorization', `Bearer ${token}`);

    it('accepts an access token signed with the old secret while it is the previous one, and refuses it once removed', async () => {
      const oldToken = await accessToken(before, owner);
      expect((await read(during, oldToken)).status).toBe(200);
      const refused = await read(after, oldToken);
      expect(refused.status).toBe(401);
    });

    it('signs new access tokens with the new secret: accepted during and after the rotation, not by the old deployment', async () => {
      const newToken = await accessToken(during, owner);
      expect((await read(during, newToken)).status).toBe(200);
      expect((await read(after, newToken)).status).toBe(200);
      expect((await read(before, newToken)).status).toBe(401);
    });

    it('accepts a signed media URL made with the old secret while it is the previous one, and refuses it once removed', () => {
      const mediaId = randomUUID();
      const oldUrl = signMediaPath(before.deps, `/media/${mediaId}/original`);
      const query = Object.fromEntries(new URLSearchParams(oldUrl.split('?')[1]));
      expect(checkSignature(during.deps, mediaId, query).status).toBe('valid');
      expect(checkSignature(after.deps, mediaId, query).status).toBe('invalid');
      const newQuery = Object.fromEntries(new URLSearchParams(signMediaPath(during.deps, `/media/${mediaId}/original`).split('?')[1]));
      expect(checkSignature(after.deps, mediaId, newQuery).status).toBe('valid');
    });

    it('accepts an unsubscribe link made with the old secret while it is the previous one, and refuses it once removed', async () => {
      const oldLink = `/unsubscribe?token=${signUnsubscribe(OLD.jwt, { userId: owner.id, kinds: ['reply'] })}`;
      const accepted = await during.api.post(oldLink).type('form').send('List-Unsubscribe=One-Click');
      expect(accepted.status).toBe(200);
      expect(accepted.text).toContain('You will no longer get emails');
      const refused = await after.api.post(oldLink).type('form').send('List-Unsubscribe=One-Click');
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('This unsubscribe link is not valid');
      const newLink = `/unsubscribe?token=${signUnsubscribe(NEW.jwt, { userId: owner.id, kinds: ['reply'] })}`;
      expect((await after.api.get(newLink)).status).toBe(200);
    });

    it('accepts a page cursor made with the old secret while it is the previous one, and refuses it once removed', async () => {
      await createTribe(before, owner);
      const page = (t: TestService, after?: string) =>
        gql(t, owner, 'query($a: String){ me { memberships(first: 1, after: $a) { edges { node { role } } pageInfo { endCursor } } } }', { a: after ?? null });
      const first = await page(before);
      const cursor = first.data.me.memberships.pageInfo.endCursor as string;
      const next = await page(during, cursor);
      expect(next.errors).toBeUndefined();
      expect(next.data.me.memberships.edges).toEqual([{ node: { role: 'owner' } }]);
      const refused = await page(after, cursor);
      expect(refused.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
    });
  });

  describe('STRIPE_WEBHOOK_SECRET_PREVIOUS', () => {
    /** An event type the service acknowledges and ignores: only the signature decides the answer. */
    const event = () => JSON.stringify({ id: `evt_${randomUUID()}`, object: 'event', type: 'customer.created', created: 1_700_000_000, livemode: false, data: { object: {} } });
    const post = (t: TestService, body: string, header: string) =>
      t.api.post(STRIPE).set('content-type', 'application/json').set('stripe-signature', header).send(body);

    it('accepts an event signed with the old secret while it is the previous one, and refuses it once removed', async () => {
      const body = event();
      const accepted = await post(during, body, stripeSignature(body, OLD.stripe));
      expect(accepted.status).toBe(200);
      expect(accepted.body).toEqual({ received: true });
      const refused = await post(after, body, stripeSignature(body, OLD.stripe));
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('invalid_signature');
    });

    it('accepts an event signed with the new secret, and one Stripe signs with both during its own roll', async () => {
      const body = event();
      expect((await post(during, body, stripeSignature(body, NEW.stripe))).status).toBe(200);
      expect((await post(after, body, stripeSignature(body, NEW.stripe))).status).toBe(200);
      expect((await post(before, body, stripeSignature(body, NEW.stripe, OLD.stripe))).status).toBe(200);
      expect((await post(after, body, stripeSignature(body, NEW.stripe, OLD.stripe))).status).toBe(200);
    });
  });

  describe('INTERNAL_SECRET_PREVIOUS', () => {
    let rotating: { port: number; stop(): Promise<void> };
    let rotated: { port: number; stop(): Promise<void> };
    beforeAll(async () => {
      [rotating, rotated] = await Promise.all([
        serveSubgraph('identity', testConfig({ HOST: '127.0.0.1', INTERNAL_SECRET: NEW.internal, INTERNAL_SECRET_PREVIOUS: OLD.internal }), 0),
        serveSubgraph('identity', testConfig({ HOST: '127.0.0.1', INTERNAL_SECRET: NEW.internal }), 0),
      ]);
    });
    afterAll(async () => {
      await Promise.all([rotating, rotated].map((s) => s?.stop()));
    });

    /** `{ me { id } }` at a subgraph, called as a gateway holding `secret` would call it for `userId`. */
    const callAs = async (subgraph: { port: number }, secret: string, userId: string) =>
      request(`http://127.0.0.1:${subgraph.port}`)
        .post('/graphql')
        .set('x-svc-internal-secret', secret)
        .set('x-svc-caller-assertion', await signCallerAssertion(await callerAssertionKey(secret), 'identity', { caller: { userId }, apiKey: null }))
        .set('content-type', 'application/json')
        .send({ query: '{ me { id } }' });

    it('accepts a gateway still on the old secret (header and caller assertion) while it is the previous one, and refuses it once removed', async () => {
      const user = await signupUser(before);
      const accepted = await callAs(rotating, OLD.internal, user.id);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toEqual({ data: { me: { id: user.id } } });
      const refused = await callAs(rotated, OLD.internal, user.id);
      expect(refused.status).toBe(401);
      expect(refused.body.errors[0].extensions).toEqual({ code: 'UNAUTHENTICATED' });
    });

    it('accepts a gateway on the new secret during and after the rotation', async () => {
      const user = await signupUser(before);
      for (const subgraph of [rotating, rotated]) {
        const out = await callAs(subgraph, NEW.internal, user.id);
        expect(out.status).toBe(200);
        expect(out.body).toEqual({ data: { me: { id: user.id } } });
      }
    });

    it('refuses a caller assertion signed with the old key once the previous secret is removed, even with the new header', async () => {
      const user = await signupUser(before);
      const out = await request(`http://127.0.0.1:${rotated.port}`)
        .post('/graphql')
        .set('x-svc-internal-secret', NEW.internal)
        .set('x-svc-caller-assertion', await signCallerAssertion(await callerAssertionKey(OLD.internal), 'identity', { caller: { userId: user.id }, apiKey: null }))
        .set('content-type', 'application/json')
        .send({ query: '{ me { id } }' });
      expect(out.status).toBe(401);
      expect(out.body.errors[0].message).toContain('caller assertion was refused');
    });
  });
});
