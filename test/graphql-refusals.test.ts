import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { operationHash } from '../gateway/src/persisted.js';
import { Docs } from '../rest-facade/src/resource/documents.js';
import { createService } from '../server/service.js';
import { startService, testConfig, type TestService } from './support.js';

/** The whole service with its log lines (pino JSON, info and up) kept in `lines`. */
async function loggedService(overrides: Record<string, string> = {}): Promise<TestService & { lines: string[] }> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await createService(testConfig({ LOG_LEVEL: 'info', ...overrides }), { log: pino({ level: 'info' }, sink) });
  return Object.assign(service, { api: request(service.http), lines });
}

const post = async (t: TestService, body: Record<string, unknown>) => {
  const res = await t.api.post('/graphql').set('content-type', 'application/json').send(body);
  return { status: res.status, body: res.body as { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> } };
};
/** GET /graphql as a non-browser client (Apollo's CSRF prevention asks for a preflight header on GET). */
const get = async (t: TestService, params: Record<string, string>) => {
  const res = await t.api.get('/graphql').query(params).set('apollo-require-preflight', 'true').set('accept', 'application/json');
  return { status: res.status, body: res.body as { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }, headers: res.headers };
};

const SUBSCRIPTION_REFUSAL = {
  errors: [
    {
      message: 'Subscriptions are served over WebSocket at /graphql (graphql-ws protocol, subprotocol graphql-transport-ws), not over HTTP.',
      extensions: { code: 'BAD_REQUEST', reason: 'subscription_over_http', status: 400 },
    },
  ],
};

describe('a subscription over HTTP (issue 29)', () => {
  let t: Awaited<ReturnType<typeof loggedService>>;
  beforeAll(async () => {
    t = await loggedService();
  });
  afterAll(async () => {
    await t.stop();
  });

  const levels = () => t.lines.map((l) => JSON.parse(l) as { level: number; msg?: string; res?: { statusCode?: number } });

  it('is answered 400 BAD_REQUEST naming the WebSocket endpoint, over POST and GET, and logged as a client error', async () => {
    const before = t.lines.length;
    const documents = ['subscription { notificationAdded { id } }', 'subscription Counts { unreadCountsChanged { notifications messages } }'];
    for (const query of documents) {
      expect(await post(t, { query })).toEqual({ status: 400, body: SUBSCRIPTION_REFUSAL });
      const viaGet = await get(t, { query });
      expect({ status: viaGet.status, body: viaGet.body }).toEqual({ status: 400, body: SUBSCRIPTION_REFUSAL });
      expect(viaGet.headers.allow).toBeUndefined();
    }
    // A document with a query and a subscription: the one named runs or is refused.
    const both = 'query Q { __typename } subscription S { notificationAdded { id } }';
    expect(await post(t, { query: both, operationName: 'S' })).toEqual({ status: 400, body: SUBSCRIPTION_REFUSAL });
    expect(await post(t, { query: both, operationName: 'Q' })).toEqual({ status: 200, body: { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } } });

    const logged = levels().slice(before);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]); // nothing at error level
    const completed = logged.filter((l) => l.res?.statusCode === 400);
    expect(completed.length).toBe(2 * documents.length + 1);
    for (const line of completed) expect(line.level).toBe(30); // the request line at info, as every client error
  });

  it('leaves a GET mutation to Apollo Server: 405 with Allow: POST', async () => {
    const r = await get(t, { query: 'mutation { __typename }' });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
    expect(r.body.errors![0]!.extensions!.code).toBe('BAD_REQUEST');
  });
});

describe('automatic persisted queries keep Apollo codes (issue 29)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });
  const text = '{ __typename }';
  const apq = (sha256Hash: string, version = 1) => ({ persistedQuery: { version, sha256Hash } });

  it('answers a hash that does not match the query 400 BAD_REQUEST, over POST and GET', async () => {
    const mismatch = { errors: [{ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST', status: 400 } }] };
    expect(await post(t, { query: text, extensions: apq(operationHash('{ me { id } }')) })).toEqual({ status: 400, body: mismatch });
    const viaGet = await get(t, { query: text, extensions: JSON.stringify(apq(operationHash('{ me { id } }'))) });
    expect({ status: viaGet.status, body: viaGet.body }).toEqual({ status: 400, body: mismatch });
  });

  it('answers an unsupported version 400 BAD_REQUEST, with or without the query', async () => {
    const unsupported = { errors: [{ message: 'Unsupported persisted query version', extensions: { code: 'BAD_REQUEST', status: 400 } }] };
    expect(await post(t, { query: text, extensions: apq(operationHash(text), 2) })).toEqual({ status: 400, body: unsupported });
    expect(await post(t, { extensions: apq(operationHash(text), 2) })).toEqual({ status: 400, body: unsupported });
  });

  it('answers an unknown hash PERSISTED_QUERY_NOT_FOUND with 200 (Apollo: the client then sends the text), then runs and remembers it', async () => {
    const hash = operationHash(text);
    const miss = await post(t, { extensions: apq(hash) });
    expect(miss).toEqual({ status: 200, body: { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] } });
    expect(await post(t, { query: text, extensions: apq(hash) })).toEqual({ status: 200, body: { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } } });
    expect(await post(t, { extensions: apq(hash) })).toEqual({ status: 200, body: { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } } });
  });
});

describe('persisted-query errors with GRAPHQL_PERSISTED_ONLY=true (issue 29)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService({ GRAPHQL_PERSISTED_ONLY: 'true' });
  });
  afterAll(async () => {
    await t.stop();
  });
  const apq = (sha256Hash: string, version = 1) => ({ persistedQuery: { version, sha256Hash } });

  it('answers a manifest text sent with another hash 400 BAD_REQUEST', async () => {
    const r = await post(t, { query: Docs.listCommunities, variables: { perPage: 1 }, extensions: apq(operationHash('{ me { id } }')) });
    expect(r).toEqual({ status: 400, body: { errors: [{ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST', status: 400 } }] } });
  });

  it('answers a manifest hash with an unsupported version 400 BAD_REQUEST', async () => {
    const r = await post(t, { variables: { perPage: 1 }, extensions: apq(operationHash(Docs.listCommunities), 2) });
    expect(r).toEqual({ status: 400, body: { errors: [{ message: 'Unsupported persisted query version', extensions: { code: 'BAD_REQUEST', status: 400 } }] } });
  });

  it('answers an unknown hash 400 PERSISTED_QUERY_NOT_FOUND, and an unknown operationName 400 unknown_operation', async () => {
    const unknown = await post(t, { extensions: apq(operationHash('{ me { id } }')) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors![0]!.extensions).toEqual({ code: 'PERSISTED_QUERY_NOT_FOUND', status: 400 });
    const elsewhere = await post(t, { extensions: apq(operationHash(Docs.listCommunities)), variables: { perPage: 1 }, operationName: 'Elsewhere' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.errors![0]!.extensions).toEqual({ code: 'BAD_USER_INPUT', reason: 'unknown_operation', status: 400 });
  });
});
