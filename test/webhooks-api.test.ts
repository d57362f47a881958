import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { accessToken, createTribe, join, setRole, signupUser, type TestUser } from './factory.js';
import { gql, plantedResolver, sqlRows, startWebhookService, type TestService } from './support.js';

const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_EVENTS = ['member.joined', 'member.left', 'member.removed', 'order.paid', 'order.refunded', 'payment.completed', 'post.created', 'win.approved', 'event.created'];

/**
 * Managing webhook endpoints over the three surfaces. No receiver is contacted here (and nothing is
 * drained: this file shares the test database): hosts resolve through planted DNS answers.
 */
describe('webhook endpoints', () => {
  let t: TestService;
  let owner: TestUser;
  let admin: TestUser;
  let moderator: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let tribe: { id: string; handle: string };
  let otherOwner: TestUser;
  let otherTribe: { id: string; handle: string };
  const HOOK = 'https://hooks.example.com/svc';

  const path = (handle = tribe.handle) => `/communities/${handle}/webhooks`;
  const create = (body: Record<string, unknown>, user: TestUser = owner, handle = tribe.handle) =>
    t.api.post(path(handle)).set('cookie', user.cookie).send(body);
  const endpointRows = (communityId: string) =>
    sqlRows(t, sql`select * from webhook_endpoints where community_id = ${communityId} order by created_at, id`);
  /** A delivery row written directly (this file never drains). */
  const seedDelivery = async (endpointId: string, values: { status?: string; createdAt?: string; event?: string } = {}) => {
    const id = randomUUID();
    const createdAt = values.createdAt ?? new Date().toISOString();
    await sqlRows(
      t,
      sql`insert into webhook_deliveries (id, endpoint_id, community_id, event, payload, status, attempts, next_attempt_at, created_at)
          values (${id}, ${endpointId}, ${tribe.id}, ${values.event ?? 'member.joined'}, ${JSON.stringify({ id })}, ${values.status ?? 'pending'},
                  ${values.status === 'failed' ? 6 : 0}, ${values.status === 'pending' || !values.status ? createdAt : null}, ${createdAt})`,
    );
    return id;
  };

  beforeAll(async () => {
    t = await startWebhookService({
      env: { WEBHOOK_ALLOWED_PRIVATE_HOSTS: '' },
      resolve: plantedResolver({
        'hooks.example.com': ['93.184.216.34'],
        'other.example.com': ['2606:4700::6810:84e5'],
        'private.example.com': ['10.0.0.7'],
        'mixed.example.com': ['93.184.216.34', '192.168.1.20'],
        'loop.example.com': ['127.0.0.1'],
        'meta.example.com': ['169.254.169.254'],
        'ula.example.com': ['fd00::5'],
      }),
    });
    [owner, admin, moderator, member, outsider, otherOwner] = await Promise.all(Array.from({ length: 6 }, () => signupUser(t)));
    tribe = await createTribe(t, owner);
    otherTribe = await createTribe(t, otherOwner);
    for (const u of [admin, moderator, member]) await join(t, u, tribe.handle);
    await setRole(t, owner, tribe.id, admin.id, 'admin');
    await setRole(t, owner, tribe.id, moderator.id, 'moderator');
  });
  afterAll(async () => {
    await t?.stop();
  });

  describe('POST /communities/{handle}/webhooks', () => {
    it('creates an enabled endpoint with a whsec_ secret of 32 random bytes', async () => {
      const res = await create({ url: HOOK, events: ['member.joined', 'post.created'], description: 'CRM sync' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        url: HOOK,
        events: ['member.joined', 'post.created'],
        description: 'CRM sync',
        enabled: true,
        secret: expect.stringMatching(SECRET),
        createdAt: expect.stringMatching(ISO),
        updatedAt: res.body.createdAt,
      });
      expect(Buffer.from(res.body.secret.slice(6), 'base64url')).toHaveLength(32);
      const [row] = await sqlRows(t, sql`select community_id, created_by, secret, enabled from webhook_endpoints where id = ${res.body.id}`);
      expect(row).toEqual({ community_id: tribe.id, created_by: owner.id, secret: res.body.secret, enabled: true });
    });

    it('gives every endpoint its own secret', async () => {
      const a = await create({ url: HOOK, events: ['member.joined'] });
      const b = await create({ url: HOOK, events: ['member.joined'] });
      expect(a.body.secret).not.toBe(b.body.secret);
    });

    it('drops unknown events and duplicates, keeping the order of first mention', async () => {
      const res = await create({ url: HOOK, events: ['post.created', 'memberjoined', 'member.joined', 'post.created', 'payment.failed'] });
      expect(res.status).toBe(201);
      expect(res.body.events).toEqual(['post.created', 'member.joined']);
    });

    it('accepts every subscribable event', async () => {
      expect((await create({ url: HOOK, events: ALL_EVENTS })).body.events).toEqual(ALL_EVENTS);
    });

    it.each([
      ['all events unknown', { events: ['nope', 'member.join'] }],
      ['only ping, which is not subscribable', { events: ['ping'] }],
      ['an empty list', { events: [] }],
      ['no events field', {}],
    ])('answers 400 no_events for %s, writing nothing', async (_name, body) => {
      const before = (await endpointRows(tribe.id)).length;
      const res = await create({ url: HOOK, ...body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'no_events', message: expect.any(String), requestId: expect.any(String) });
      expect(await endpointRows(tribe.id)).toHaveLength(before);
    });

    it('accepts a description of 140 characters and refuses 141', async () => {
      expect((await create({ url: HOOK, events: ['member.joined'], description: 'd'.repeat(140) })).status).toBe(201);
      const res = await create({ url: HOOK, events: ['member.joined'], description: 'd'.repeat(141) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_description', message: expect.any(String), requestId: expect.any(String) });
    });

    it.each([
      ['plain http', 'http://hooks.example.com/svc'],
      ['another scheme', 'ftp://hooks.example.com/svc'],
      ['not a URL', 'hooks.example.com/svc'],
      ['an empty string', ''],
      ['user:pass@ in the URL', 'https://user:pass@hooks.example.com/svc'],
      ['localhost', 'https://localhost/hook'],
      ['a .localhost name', 'https://app.localhost/hook'],
      ['127.x', 'https://127.0.0.2/hook'],
      ['127.0.0.1 in hex', 'https://0x7f000001/hook'],
      ['::1', 'https://[::1]/hook'],
      ['0.0.0.0', 'https://0.0.0.0/hook'],
      ['0.0.0.0/8', 'https://0.1.2.3/hook'],
      ['10.x', 'https://10.20.30.40/hook'],
      ['172.16.x', 'https://172.16.0.1/hook'],
      ['172.31.x', 'https://172.31.255.254/hook'],
      ['192.168.x', 'https://192.168.0.1/hook'],
      ['169.254.x (cloud metadata)', 'https://169.254.169.254/latest'],
      ['100.64.0.0/10', 'https://100.100.100.100/hook'],
      ['198.18.0.0/15', 'https://198.19.0.1/hook'],
      ['multicast', 'https://239.1.2.3/hook'],
      ['fe80::', 'https://[fe80::1]/hook'],
      ['fc00::/7', 'https://[fd12::1]/hook'],
      ['IPv4-mapped IPv6 of a private address', 'https://[::ffff:10.0.0.1]/hook'],
      ['64:ff9b::/96', 'https://[64:ff9b::a00:1]/hook'],
      ['2002::/16', 'https://[2002:a00:1::1]/hook'],
      ['a .local name', 'https://printer.local/hook'],
      ['a .internal name', 'https://billing.internal/hook'],
      ['a host resolving to a private address', 'https://private.example.com/hook'],
      ['a host with one private address among public ones', 'https://mixed.example.com/hook'],
      ['a host resolving to loopback', 'https://loop.example.com/hook'],
      ['a host resolving to link-local', 'https://meta.example.com/hook'],
      ['a host resolving to a ULA address', 'https://ula.example.com/hook'],
      ['a host that does not resolve', 'https://nowhere.invalid/hook'],
    ])('answers 400 invalid_url for %s', async (_name, url) => {
      const before = (await endpointRows(tribe.id)).length;
      const res = await create({ url, events: ['member.joined'] });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_url', message: expect.any(String), requestId: expect.any(String) });
      expect(await endpointRows(tribe.id)).toHaveLength(before);
    });

    it('answers 400 invalid_url when url is missing', async () => {
      expect((await create({ events: ['member.joined'] })).body).toEqual({ error: 'invalid_url', message: expect.any(String), requestId: expect.any(String) });
    });

    it('accepts a host whose every address is public, IPv6 included', async () => {
      expect((await create({ url: 'https://other.example.com:8443/in', events: ['member.joined'] })).status).toBe(201);
      expect((await create({ url: 'https://93.184.216.34/in', events: ['member.joined'] })).status).toBe(201);
    });

    it('is for the owner and admins only: 401 without a session, 403 for moderators, members and outsiders', async () => {
      const body = { url: HOOK, events: ['member.joined'] };
      expect((await t.api.post(path()).send(body)).body).toEqual({ error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) });
      expect((await t.api.post(path()).send(body)).status).toBe(401);
      for (const user of [moderator, member, outsider, otherOwner]) {
        const res = await create(body, user);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String), requestId: expect.any(String) });
      }
      expect((await create(body, admin)).status).toBe(201);
    });

    it('answers 404 not_found for an unknown tribe', async () => {
      const res = await create({ url: HOOK, events: ['member.joined'] }, owner, 'no-such-tribe-here');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
    });
  });

  describe('GET /communities/{handle}/webhooks', () => {
    it("lists the tribe's endpoints oldest first with their secrets, and the subscribable events", async () => {
      const mine = await createTribe(t, owner);
      const a = (await create({ url: HOOK, events: ['member.joined'] }, owner, mine.handle)).body;
      const b = (await create({ url: 'https://other.example.com/b', events: ['post.created'], description: 'b' }, owner, mine.handle)).body;
      await create({ url: HOOK, events: ['member.joined'] }, otherOwner, otherTribe.handle);
      const res = await t.api.get(path(mine.handle)).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ webhooks: [a, b], availableEvents: ALL_EVENTS });
      expect(res.body.webhooks[0].secret).toMatch(SECRET);
    });

    it('refuses members and anonymous callers', async () => {
      expect((await t.api.get(path()).set('cookie', member.cookie)).status).toBe(403);
      expect((await t.api.get(path())).status).toBe(401);
    });
  });

  describe('PATCH /communities/{handle}/webhooks/{id}', () => {
    let endpoint: Record<string, any>;
    beforeAll(async () => {
      endpoint = (await create({ url: HOOK, events: ['member.joined', 'member.left'], description: 'first' })).body;
    });
    const patch = (body: unknown, id = endpoint.id, user = owner) => t.api.patch(`${path()}/${id}`).set('cookie', user.cookie).send(body as object);

    it('changes only the fields sent', async () => {
      const res = await patch({ description: 'second' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...endpoint, description: 'second', updatedAt: expect.stringMatching(ISO) });
      endpoint = res.body;
    });

    it('replaces events as a whole, with the same dropping rules', async () => {
      const res = await patch({ events: ['post.created', 'bogus', 'post.created'] });
      expect(res.body.events).toEqual(['post.created']);
      expect((await patch({ events: ['bogus'] })).body).toEqual({ error: 'no_events', message: expect.any(String), requestId: expect.any(String) });
      expect((await patch({ events: [] })).status).toBe(400);
    });

    it('disables and enables the endpoint', async () => {
      expect((await patch({ enabled: false })).body.enabled).toBe(false);
      expect((await endpointRows(tribe.id)).find((r) => r.id === endpoint.id)!.enabled).toBe(false);
      expect((await patch({ enabled: true })).body.enabled).toBe(true);
    });

    it('checks a new url like a new endpoint', async () => {
      expect((await patch({ url: 'https://10.0.0.1/x' })).body).toEqual({ error: 'invalid_url', message: expect.any(String), requestId: expect.any(String) });
      expect((await patch({ url: 'https://private.example.com/x' })).body).toEqual({ error: 'invalid_url', message: expect.any(String), requestId: expect.any(String) });
      const res = await patch({ url: 'https://other.example.com/new' });
      expect(res.body.url).toBe('https://other.example.com/new');
    });

    it('clears the description with null and refuses one over 140 characters', async () => {
      expect((await patch({ description: null })).body.description).toBeNull();
      expect((await patch({ description: 'x'.repeat(141) })).body).toEqual({ error: 'invalid_description', message: expect.any(String), requestId: expect.any(String) });
    });

    it('answers 400 empty when no recognised field is sent, and the secret cannot be changed', async () => {
      for (const body of [{}, { secret: 'whsec_mine' }, { name: 'x', id: randomUUID() }]) {
        const res = await patch(body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'empty', message: expect.any(String), requestId: expect.any(String) });
      }
      const [row] = await sqlRows(t, sql`select secret from webhook_endpoints where id = ${endpoint.id}`);
      expect(row.secret).toBe(endpoint.secret);
    });

    it("answers 404 for an unknown id, a malformed id and another tribe's endpoint; 403 for a member", async () => {
      expect((await patch({ description: 'x' }, randomUUID())).status).toBe(404);
      expect((await patch({ description: 'x' }, 'not-a-uuid')).body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
      const foreign = (await create({ url: HOOK, events: ['member.joined'] }, otherOwner, otherTribe.handle)).body;
      expect((await patch({ description: 'x' }, foreign.id)).status).toBe(404);
      expect((await patch({ description: 'x' }, endpoint.id, member)).status).toBe(403);
    });
  });

  describe('DELETE /communities/{handle}/webhooks/{id}', () => {
    it('deletes the endpoint and cascades its deliveries', async () => {
      const endpoint = (await create({ url: HOOK, events: ['member.joined'] })).body;
      await seedDelivery(endpoint.id);
      await seedDelivery(endpoint.id, { status: 'failed' });
      const res = await t.api.delete(`${path()}/${endpoint.id}`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      expect(await sqlRows(t, sql`select id from webhook_endpoints where id = ${endpoint.id}`)).toEqual([]);
      expect(await sqlRows(t, sql`select id from webhook_deliveries where endpoint_id = ${endpoint.id}`)).toEqual([]);
      expect((await t.api.delete(`${path()}/${endpoint.id}`).set('cookie', owner.cookie)).status).toBe(404);
    });

    it('refuses a moderator', async () => {
      const endpoint = (await create({ url: HOOK, events: ['member.joined'] })).body;
      expect((await t.api.delete(`${path()}/${endpoint.id}`).set('cookie', moderator.cookie)).status).toBe(403);
    });
  });

  describe('GET /communities/{handle}/webhooks/{id}/deliveries', () => {
    it('shows the delivery log newest first, paged', async () => {
      const endpoint = (await create({ url: HOOK, events: ['member.joined'] })).body;
      const ids = [];
      for (let i = 0; i < 3; i += 1) ids.push(await seedDelivery(endpoint.id, { createdAt: `2030-01-0${i + 1}T00:00:00.000Z` }));
      const res = await t.api.get(`${path()}/${endpoint.id}/deliveries?perPage=2`).set('cookie', owner.cookie);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        deliveries: [
          {
            id: ids[2],
            event: 'member.joined',
            status: 'pending',
            attempts: 0,
            responseStatus: null,
            responseTimeMs: null,
            lastError: null,
            nextAttemptAt: '2030-01-03T00:00:00.000Z',
            deliveredAt: null,
            createdAt: '2030-01-03T00:00:00.000Z',
            body: JSON.stringify({ id: ids[2] }),
          },
          expect.objectContaining({ id: ids[1] }),
        ],
        page: 1,
        perPage: 2,
        hasMore: true,
      });
      const page2 = await t.api.get(`${path()}/${endpoint.id}/deliveries?perPage=2&page=2`).set('cookie', owner.cookie);
      expect(page2.body.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
      expect(page2.body.hasMore).toBe(false);
    });

    it('answers 404 for an unknown endpoint and 403 for a member', async () => {
      expect((await t.api.get(`${path()}/${randomUUID()}/deliveries`).set('cookie', owner.cookie)).status).toBe(404);
      const endpoint = (await create({ url: HOOK, events: ['member.joined'] })).body;
      expect((await t.api.get(`${path()}/${endpoint.id}/deliveries`).set('cookie', member.cookie)).status).toBe(403);
    });
  });

  describe('POST /communities/{handle}/webhooks/{id}/deliveries/{deliveryId}/resend', () => {
    it('requeues a failed delivery and refuses one that is not failed (409 not_failed) or unknown (404)', async () => {
      const endpoint = (await create({ url: HOOK, events: ['member.joined'] })).body;
      const failed = await seedDelivery(endpoint.id, { status: 'failed' });
      const pending = await seedDelivery(endpoint.id);
      const resend = (id: string) => t.api.post(`${path()}/${endpoint.id}/deliveries/${id}/resend`).set('cookie', owner.cookie);
      const res = await resend(failed);
      expect(res.status).toBe(202);
      expect(res.body.delivery).toMatchObject({ id: failed, status: 'pending', attempts: 0, nextAttemptAt: expect.stringMatching(ISO) });
      expect((await resend(pending)).body).toEqual({ error: 'not_failed', message: expect.any(String), requestId: expect.any(String) });
      expect((await resend(pending)).status).toBe(409);
      expect((await resend(randomUUID())).status).toBe(404);
    });
  });

  describe('resource API /v1/communities/:community_id/webhooks', () => {
    let token: string;
    const v1 = (suffix = '') => `/v1/communities/${tribe.id}/webhooks${suffix}`;
    beforeAll(async () => {
      token = await accessToken(t, owner);
    });
    const auth = (req: ReturnType<TestService['api']['get']>) => req.set('authorization', `Bearer ${token}`);

    it('creates with is_active, lists, updates, logs and deletes through the same rules', async () => {
      const created = await auth(t.api.post(v1())).send({ url: HOOK, events: ['member.joined', 'x'], is_active: false, description: 'v1' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          community_id: tribe.id,
          url: HOOK,
          events: ['member.joined'],
          description: 'v1',
          is_active: false,
          secret: expect.stringMatching(SECRET),
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      });
      const id = created.body.data.id;
      const list = await auth(t.api.get(v1()));
      expect(list.status).toBe(200);
      expect(list.body.data).toContainEqual(created.body.data);

      const updated = await auth(t.api.patch(v1(`/${id}`))).send({ is_active: true });
      expect(updated.body.data).toMatchObject({ id, is_active: true, events: ['member.joined'] });
      const empty = await auth(t.api.patch(v1(`/${id}`))).send({ enabled: false });
      expect(empty.status).toBe(400);
      expect(empty.body.error.code).toBe('empty');

      const delivery = await seedDelivery(id, { createdAt: '2030-02-01T00:00:00.000Z' });
      const logs = await auth(t.api.get(v1(`/${id}/logs?per_page=500`)));
      expect(logs.status).toBe(200);
      expect(logs.body).toEqual({
        data: [
          {
            id: delivery,
            event: 'member.joined',
            status_code: null,
            response_time_ms: null,
            created_at: '2030-02-01T00:00:00.000Z',
            status: 'pending',
            attempts: 0,
            last_error: null,
            next_attempt_at: '2030-02-01T00:00:00.000Z',
            delivered_at: null,
          },
        ],
        pagination: { page: 1, per_page: 50, has_more: false },
      });
      const byDefault = await auth(t.api.get(v1(`/${id}/logs`)));
      expect(byDefault.body.pagination).toEqual({ page: 1, per_page: 20, has_more: false });

      const deleted = await auth(t.api.delete(v1(`/${id}`)));
      expect(deleted.status).toBe(204);
      expect(await sqlRows(t, sql`select id from webhook_deliveries where endpoint_id = ${id}`)).toEqual([]);
      expect((await auth(t.api.get(v1(`/${id}`)))).status).toBe(404);
    });

    it('answers validation errors in the resource envelope', async () => {
      const bad = await auth(t.api.post(v1())).send({ url: 'https://192.168.1.1/x', events: ['member.joined'] });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: { code: 'invalid_url', message: expect.stringContaining('private'), details: { reason: expect.any(String) }, request_id: expect.any(String) } });
      const none = await auth(t.api.post(v1())).send({ url: HOOK, events: ['ping'] });
      expect(none.body.error.code).toBe('no_events');
    });

    it('is for the owner and admins only', async () => {
      const memberToken = await accessToken(t, member);
      const res = await t.api.get(v1()).set('authorization', `Bearer ${memberToken}`);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      expect((await t.api.get(v1())).status).toBe(401);
    });
  });

  describe('GraphQL', () => {
    it('shares the service: create by communityId, list by handle, errors with extensions.code', async () => {
      const created = await gql(
        t,
        admin,
        'mutation($c: ID!, $i: CreateWebhookEndpointInput!){ createWebhookEndpoint(communityId: $c, input: $i){ id events enabled secret community { id } } }',
        { c: tribe.id, i: { url: HOOK, events: ['win.approved', 'win.approved'] } },
      );
      expect(created.errors).toBeUndefined();
      expect(created.data.createWebhookEndpoint).toMatchObject({ events: ['win.approved'], enabled: true, community: { id: tribe.id } });
      const listed = await gql(t, owner, 'query($h: String){ webhookEndpoints(handle: $h){ id } webhookEventTypes }', { h: tribe.handle });
      expect(listed.data.webhookEndpoints.map((e: { id: string }) => e.id)).toContain(created.data.createWebhookEndpoint.id);
      expect(listed.data.webhookEventTypes).toEqual(ALL_EVENTS);

      const refused = await gql(t, owner, 'mutation($c: ID!, $i: CreateWebhookEndpointInput!){ createWebhookEndpoint(communityId: $c, input: $i){ id } }', {
        c: tribe.id,
        i: { url: 'https://[::1]/x', events: ['member.joined'] },
      });
      expect(refused.errors![0].extensions).toMatchObject({ reason: 'invalid_url', status: 400 });
      const forbidden = await gql(t, member, 'query($c: ID){ webhookEndpoints(communityId: $c){ id } }', { c: tribe.id });
      expect(forbidden.errors![0].extensions).toMatchObject({ reason: 'forbidden', status: 403 });
    });
  });
});
