import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import type { Express } from 'express';
import { accessToken, createKey, createTribe, join, registerEndpoint, signupUser, unique, UNKNOWN_ID, type TestUser } from './factory.js';
import { plantedResolver, sqlRows, startService, startWebhookService, type TestService } from './support.js';

/** A route of the Express app as its router stack holds it, with the mount paths above it. */
interface FoundRoute {
  method: string;
  path: string;
}

/** Every route of `app` (a router's `route` layers, through routers mounted with `use`), by method. */
function routesOf(app: Express): FoundRoute[] {
  const found: FoundRoute[] = [];
  const walk = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths: unknown[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const p of paths) {
          for (const method of Object.keys(layer.route.methods)) found.push({ method: method.toUpperCase(), path: `${prefix}${String(p)}` });
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        // A router mounted with `use`: its paths are below the mount path (`/` adds nothing).
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: unknown[] } }).router.stack, '');
  return found;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE', '_ALL']);

/**
 * State-changing routes that take no session cookie, and so are not the guard's (`COOKIELESS_WRITES` in
 * rest-facade/src/app.ts; keep the two in step):
 * - `/v1/*`: the Platform API and the resource API (bearer API keys and access tokens), in their own envelopes;
 *   `/v1/media` also takes the web app's cookie, and guards it on its own (`media.ts`: a cookie upload naming another
 *   site in `Origin` is unauthenticated, and only multipart is read): checked below with the same form;
 * - `/webhooks/*`: inbound provider webhooks (`/webhooks/payments/stripe`, signed over the raw body);
 * - `/unsubscribe`: mail's one-click unsubscribe (RFC 8058: a form POST by design, the signed token is the authority);
 * - `/graphql`: session cookie, but guarded on its own (JSON only, Apollo's CSRF prevention, the GraphQL envelope):
 *   checked below with the same form.
 */
const EXCLUDED = /^\/(v1|webhooks|unsubscribe|graphql)(\/|$)/;

const FOREIGN = 'https://evil.example';
const FORM = 'application/x-www-form-urlencoded';

describe('cookie-authenticated writes refuse other sites and forms (issue 29)', () => {
  let t: TestService;
  let owner: TestUser;
  let tribe: { id: string; handle: string };
  let orderId: string;
  let keyId: string;
  let endpointId: string;

  /** A fingerprint of every table: any row added, changed or removed changes it. */
  async function database(): Promise<Record<string, string>> {
    const tables = await sqlRows<{ name: string }>(t, sql`select tablename as name from pg_tables where schemaname = 'public' order by tablename`);
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      const [row] = await sqlRows<{ h: string }>(t, sql.raw(`select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from "${name}" x`));
      out[name] = row.h;
    }
    return out;
  }

  /** A pending order of the tribe: a paid event and a member's registration for it. */
  async function pendingOrder(): Promise<string> {
    const buyer = await signupUser(t);
    await join(t, buyer, tribe.handle);
    const token = await accessToken(t, owner);
    const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const event = await t.api
      .post(`/v1/communities/${tribe.id}/events`)
      .set('authorization', `Bearer ${token}`)
      .send({ title: `Paid ${unique()}`, event_type: 'online', starts_at: at(24), ends_at: at(26), price: 49.9 });
    if (event.status !== 201) throw new Error(`createEvent: ${event.status} ${JSON.stringify(event.body)}`);
    const registered = await t.api.post(`/v1/communities/${tribe.id}/events/${event.body.data.id}/register`).set('authorization', `Bearer ${await accessToken(t, buyer)}`);
    if (registered.status !== 202) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
    return registered.body.data.order.id;
  }
  const orderStatus = async (id: string) => (await sqlRows<{ status: string; paid_at: unknown }>(t, sql`select status, paid_at from orders where id = ${id}`))[0];

  /** The path with its parameters filled from the owner's tribe and its records. */
  function fill(path: string): string {
    return path.replace(/:(\w+)/g, (_m, name: string) => {
      if (name === 'handle') return tribe.handle;
      if (name === 'orderId') return orderId;
      if (name === 'id') return path.includes('/api-keys/') ? keyId : path.includes('/webhooks/') ? endpointId : UNKNOWN_ID;
      if (name === 'postId') return UNKNOWN_ID;
      return UNKNOWN_ID;
    });
  }

  beforeAll(async () => {
    t = await startWebhookService({ resolve: plantedResolver({ 'hooks.example.com': ['93.184.216.34'] }) }); // nothing is delivered: no worker
    owner = await signupUser(t);
    tribe = await createTribe(t, owner);
    orderId = await pendingOrder();
    keyId = (await createKey(t, owner, tribe.handle)).id;
    endpointId = (await registerEndpoint(t, owner, tribe.handle, { url: 'https://hooks.example.com/receive' })).id;
  });
  afterAll(async () => {
    await t.stop();
  });

  const guarded = () => routesOf(t.http).filter((r) => STATE_CHANGING.has(r.method) && !EXCLUDED.test(r.path));

  it('finds the state-changing routes of the app built by createHttpApp, the Application API ones among them', () => {
    const all = routesOf(t.http);
    const seen = guarded().map((r) => `${r.method} ${r.path}`);
    // A walk that found nothing would check nothing: the known cookie writes must be among the routes walked.
    expect(seen).toEqual(
      expect.arrayContaining([
        'POST /auth/signup',
        'POST /auth/login',
        'POST /auth/logout',
        'POST /media/',
        'POST /communities/:handle/orders/:orderId/mark-paid',
        'POST /communities/:handle/api-keys',
        'DELETE /communities/:handle/api-keys/:id',
        'POST /communities/:handle/webhooks/',
        'PATCH /communities/:handle/webhooks/:id',
        'DELETE /communities/:handle/webhooks/:id',
        'POST /communities/:handle/webhooks/:id/test',
        'POST /communities/:handle/webhooks/:id/deliveries/:deliveryId/resend',
        'POST /affiliate/track',
      ]),
    );
    // The exclusions are what the walk sees too (the /v1 APIs are behind one dispatcher, not walked).
    expect(all.filter((r) => STATE_CHANGING.has(r.method) && EXCLUDED.test(r.path)).map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['POST /webhooks/payments/stripe', 'POST /unsubscribe', 'POST /v1/media/']),
    );
  });

  it('refuses, on every one of them, a form from another site with the owner cookie (403 forbidden_origin), and changes nothing', async () => {
    const before = await database();
    const answers: string[] = [];
    for (const route of guarded()) {
      const path = fill(route.path);
      const res = await t.api[route.method.toLowerCase() as 'post'](path).set('cookie', owner.cookie).set('origin', FOREIGN).set('content-type', FORM).send('status=paid&name=x');
      answers.push(`${route.method} ${route.path} -> ${res.status} ${JSON.stringify({ ...res.body, message: typeof res.body.message, requestId: typeof res.body.requestId })}`);
    }
    for (const route of guarded()) expect(answers).toContain(`${route.method} ${route.path} -> 403 {"error":"forbidden_origin","message":"string","requestId":"string"}`);
    // The same form without Origin (a same-site form, or an older browser): 415, as every JSON route answers a form.
    for (const route of guarded()) {
      const res = await t.api[route.method.toLowerCase() as 'post'](fill(route.path)).set('cookie', owner.cookie).set('content-type', FORM).send('status=paid');
      expect(`${route.method} ${route.path} -> ${res.status} ${JSON.stringify({ ...res.body, message: typeof res.body.message, requestId: typeof res.body.requestId })}`).toBe(`${route.method} ${route.path} -> 415 {"error":"unsupported_media_type","message":"string","requestId":"string"}`);
    }
    // And a JSON body from another site (a page that could only send it after a CORS preflight, which is never allowed).
    for (const route of guarded()) {
      const res = await t.api[route.method.toLowerCase() as 'post'](fill(route.path)).set('cookie', owner.cookie).set('origin', FOREIGN).send({ name: 'x' });
      expect(`${route.method} ${route.path} -> ${res.status}`).toBe(`${route.method} ${route.path} -> 403`);
    }
    // GraphQL and /v1/media, cookie-authenticated too, refuse the form by their own guards.
    const graphql = await t.api.post('/graphql').set('cookie', owner.cookie).set('origin', FOREIGN).set('content-type', FORM).send('query=mutation{logout}');
    expect(graphql.status).toBe(415);
    const media = await t.api.post('/v1/media').set('cookie', owner.cookie).set('origin', FOREIGN).set('content-type', FORM).send('kind=avatar');
    expect(media.status).toBe(401);
    expect(await database()).toEqual(before);
    expect(await orderStatus(orderId)).toEqual({ status: 'pending', paid_at: null });
  });

  // supertest serves each request on a port of its own: these name the Host header themselves.
  const HOST = 'tribes.example:8443';

  it('treats a null or malformed Origin, another port and Sec-Fetch-Site: cross-site as another site', async () => {
    const path = `/communities/${tribe.handle}/orders/${orderId}/mark-paid`;
    for (const origin of ['null', 'not a url', 'https://tribes.example:1', 'https://tribes.example', 'https://evil.tribes.example:8443']) {
      const res = await t.api.post(path).set('host', HOST).set('cookie', owner.cookie).set('origin', origin);
      expect([origin, res.status, res.body]).toEqual([origin, 403, { error: 'forbidden_origin', message: expect.any(String), requestId: expect.any(String) }]);
    }
    const crossSite = await t.api.post(path).set('host', HOST).set('cookie', owner.cookie).set('sec-fetch-site', 'cross-site');
    expect([crossSite.status, crossSite.body]).toEqual([403, { error: 'forbidden_origin', message: expect.any(String), requestId: expect.any(String) }]);
    expect(await orderStatus(orderId)).toEqual({ status: 'pending', paid_at: null });
  });

  it('lets the web app write: an Origin of this host (or none) and JSON', async () => {
    const res = await t.api
      .post(`/communities/${tribe.handle}/api-keys`)
      .set('host', HOST)
      .set('origin', `https://${HOST}`)
      .set('cookie', owner.cookie)
      .send({ name: `k ${unique()}`, scopes: ['members:read'] });
    expect(res.status).toBe(201);
    const sameSite = await t.api.post('/auth/logout').set('host', HOST).set('origin', `http://${HOST.toUpperCase()}`).set('sec-fetch-site', 'same-origin');
    expect(sameSite.status).toBe(200);
  });
});

describe('POST /communities/{handle}/orders/{orderId}/mark-paid from a cross-site form (issue 29)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers 4xx and leaves the order pending; the owner marks it paid with JSON from the web app', async () => {
    const owner = await signupUser(t);
    const buyer = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await join(t, buyer, tribe.handle);
    const at = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
    const event = await t.api
      .post(`/v1/communities/${tribe.id}/events`)
      .set('authorization', `Bearer ${await accessToken(t, owner)}`)
      .send({ title: 'Paid', event_type: 'online', starts_at: at(24), ends_at: at(26), price: 49.9 });
    const registered = await t.api.post(`/v1/communities/${tribe.id}/events/${event.body.data.id}/register`).set('authorization', `Bearer ${await accessToken(t, buyer)}`);
    const orderId: string = registered.body.data.order.id;
    const status = async () => (await sqlRows<{ status: string }>(t, sql`select status from orders where id = ${orderId}`))[0].status;
    const path = `/communities/${tribe.handle}/orders/${orderId}/mark-paid`;

    const form = await t.api.post(path).set('cookie', owner.cookie).set('origin', FOREIGN).set('content-type', FORM).send('paid=1');
    expect(form.status).toBeGreaterThanOrEqual(400);
    expect(form.status).toBeLessThan(500);
    expect(form.body).toEqual({ error: 'forbidden_origin', message: expect.any(String), requestId: expect.any(String) });
    expect(await status()).toBe('pending');

    const sameSiteForm = await t.api.post(path).set('cookie', owner.cookie).set('content-type', FORM).send('paid=1');
    expect([sameSiteForm.status, sameSiteForm.body]).toEqual([415, { error: 'unsupported_media_type', message: expect.any(String), requestId: expect.any(String) }]);
    expect(await status()).toBe('pending');

    const json = await t.api.post(path).set('cookie', owner.cookie).send({});
    expect(json.status).toBe(200);
    expect(await status()).toBe('paid');
  });

  it('does not exist in production (NODE_ENV=production): 404 not_found, the order stays pending', async () => {
    const prod = await startService({ NODE_ENV: 'production' });
    try {
      const owner = await signupUser(prod);
      const tribe = await createTribe(prod, owner);
      const [order] = await sqlRows<{ id: string }>(
        prod,
        sql`insert into orders (community_id, buyer_id, product_type, product_id, amount_cents, currency, status)
            values (${tribe.id}, ${owner.id}, 'course', null, 4990, 'BRL', 'pending') returning id`,
      );
      const res = await prod.api.post(`/communities/${tribe.handle}/orders/${order.id}/mark-paid`).set('cookie', owner.cookie).send({});
      expect([res.status, res.body]).toEqual([404, { error: 'not_found', message: expect.any(String), requestId: expect.any(String) }]);
      expect((await sqlRows<{ status: string }>(prod, sql`select status from orders where id = ${order.id}`))[0].status).toBe('pending');
    } finally {
      await prod.stop();
    }
  });
});
