// Request ids (issue 30): `x-request-id` on every answer of every surface (the client's own when well-formed, else a
// UUID), in the error bodies of the resource and Application APIs, and on every log line written for the request.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { serveSubgraph } from '../server/subgraph.js';
import { createService } from '../server/service.js';
import { createLogger } from '../subgraphs/kernel/logging.js';
import { signupUser } from './factory.js';
import { testConfig, type TestService } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The lines the service logged (JSON, parsed), as an operator reads them on stdout. */
const lines: Record<string, any>[] = [];
const sink = { write: (line: string) => void lines.push(JSON.parse(line)) };

describe('request ids', () => {
  let t: TestService;

  beforeAll(async () => {
    const config = testConfig({
      LOG_LEVEL: 'debug',
      STRIPE_WEBHOOK_SECRET: 'whsec_request_ids_0123456789abcdef',
      IDP_WEBHOOK_SECRET: `whsec_${Buffer.from('request ids: identity webhooks!!').toString('base64')}`,
    });
    const service = await createService(config, { log: createLogger('debug', sink) });
    t = Object.assign(service, { api: request(service.http) });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('every surface answers with an x-request-id: GraphQL, the Platform API, the resource API, the Application API, health', async () => {
    const user = await signupUser(t);
    const answers = {
      graphql: await t.api.post('/graphql').send({ query: '{ __typename }' }),
      platform: await t.api.get('/v1/members').set('authorization', 'Bearer nope'),
      resource: await t.api.get('/v1/communities/nope/posts'),
      application: await t.api.get('/auth/me').set('cookie', user.cookie),
      applicationError: await t.api.post('/auth/login').send({ email: user.email, password: 'wrong password' }),
      healthz: await t.api.get('/healthz'),
      readyz: await t.api.get('/readyz'),
      unknownRoute: await t.api.get('/no/such/route'),
    };
    const ids = Object.values(answers).map((res) => res.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.values(answers).map((r) => r.status)).toEqual([200, 401, 401, 200, 401, 200, 200, 404]);
  });

  it("echoes a client's well-formed id (1 to 128 of A-Z a-z 0-9 . _ : -) and replaces a malformed one", async () => {
    for (const id of ['a', 'trace-01.span_02:retry-3', 'x'.repeat(128)]) {
      for (const res of [await t.api.get('/healthz').set('x-request-id', id), await t.api.post('/graphql').set('x-request-id', id).send({ query: '{ __typename }' })]) {
        expect(res.headers['x-request-id']).toBe(id);
      }
    }
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', 'new\tline', 'ünicode', '']) {
      const res = await t.api.get('/healthz').set('x-request-id', bad);
      expect([bad, res.headers['x-request-id']]).toEqual([bad, expect.stringMatching(UUID)]);
    }
  });

  it('the resource API error body carries the id as error.request_id, the Application API as requestId; the Platform API error object keeps its contract', async () => {
    const resource = await t.api.get('/v1/communities/nope/posts').set('x-request-id', 'resource-1');
    expect(resource.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), request_id: 'resource-1' } });
    const generated = await t.api.post('/v1/auth/login').send({ email: 'nobody@example.com', password: 'x' });
    expect(generated.body.error.request_id).toBe(generated.headers['x-request-id']);
    expect(generated.body.error.request_id).toMatch(UUID);
    const application = await t.api.post('/auth/login').set('x-request-id', 'application-1').send({ email: 'nobody@example.com', password: 'x' });
    expect([application.status, application.body]).toEqual([401, { error: 'invalid_credentials', message: 'Email or password is wrong.', requestId: 'application-1' }]);
    const unknownRoute = await t.api.get('/no/such/route');
    expect(unknownRoute.body).toEqual({ error: 'not_found', message: 'No such route.', requestId: unknownRoute.headers['x-request-id'] });
    const platform = await t.api.get('/v1/members').set('authorization', 'Bearer nope').set('x-request-id', 'platform-1');
    expect([platform.headers['x-request-id'], platform.body]).toEqual(['platform-1', { error: { type: 'unauthorized', message: expect.any(String) } }]);
  });

  it("every log line of a request carries its id: the access line and the service's own lines", async () => {
    lines.length = 0;
    const res = await t.api
      .post('/webhooks/payments/stripe')
      .set('x-request-id', 'stripe-log-1')
      .set('content-type', 'application/json')
      .set('stripe-signature', 't=1,v1=00')
      .send('{}');
    expect(res.status).toBe(400);
    await t.api.get('/healthz').set('x-request-id', 'other-1');
    const mine = lines.filter((l) => l.requestId === 'stripe-log-1');
    expect(mine.map((l) => l.msg)).toEqual(expect.arrayContaining(['stripe webhook refused: bad signature', 'request completed']));
    // Nothing of this request was logged without its id, or under the other request's.
    const refused = lines.filter((l) => l.msg === 'stripe webhook refused: bad signature');
    expect(refused.map((l) => l.requestId)).toEqual(['stripe-log-1']);
    expect(lines.filter((l) => l.msg === 'request completed').map((l) => l.requestId)).toEqual(['stripe-log-1', 'other-1']);
    const completed = lines.find((l) => l.msg === 'request completed')!;
    expect(completed).toMatchObject({ level: 30, req: { id: 'stripe-log-1', method: 'POST', url: '/webhooks/payments/stripe' }, res: { statusCode: 400 } });
    expect(completed.responseTime).toEqual(expect.any(Number));
  });

  it("the identity webhook's own lines carry the id of the request they were written for, and no other line does", async () => {
    lines.length = 0;
    const refused = t.api
      .post('/webhooks/identity')
      .set('x-request-id', 'idp-log-1')
      .set({ 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' })
      .set('content-type', 'application/json')
      .send('{}');
    // Another request at the same time: its lines must not take this one's id.
    const [res] = await Promise.all([refused, t.api.get('/healthz?token=secret').set('x-request-id', 'idp-other-1')]);
    expect(res.status).toBe(400);
    const own = lines.filter((l) => l.msg === 'identity webhook refused: bad signature');
    expect(own.map((l) => [l.requestId, l.level])).toEqual([['idp-log-1', 40]]);
    const byRequest = (id: string) => lines.filter((l) => l.requestId === id).map((l) => l.msg).sort();
    expect(byRequest('idp-log-1')).toEqual(['identity webhook refused: bad signature', 'request completed']);
    expect(byRequest('idp-other-1')).toEqual(['request completed']);
    // The query is not logged: it may carry what is not for logs.
    expect(lines.find((l) => l.requestId === 'idp-other-1')!.req.url).toBe('/healthz');
  });

  it('a subgraph served alone answers with the id the gateway sent', async () => {
    const subgraph = await serveSubgraph('identity', testConfig({ INTERNAL_SECRET: 'internal-secret-request-ids-0123456789' }), 0);
    try {
      const url = `http://127.0.0.1:${subgraph.port}/graphql`;
      const init = { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'gateway-7' }, body: '{"query":"{ __typename }"}' };
      const res = await fetch(url, init);
      expect([res.status, res.headers.get('x-request-id')]).toEqual([401, 'gateway-7']);
      const generated = await fetch(url, { ...init, headers: { 'content-type': 'application/json' } });
      expect(generated.headers.get('x-request-id')).toMatch(UUID);
    } finally {
      await subgraph.stop();
    }
  });
});
