import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTribe, signupUser } from './factory.js';
import { gql, startService, type TestService } from './support.js';

describe('service smoke', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers healthz and readyz', async () => {
    expect((await t.api.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await t.api.get('/readyz')).body).toEqual({ status: 'ready' });
  });

  it('signs up, creates a tribe and posts through GraphQL', async () => {
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    const created = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "<p>hi</p><script>x()</script>"}){ id body author { username } community { id memberCount viewerRole handle } } }', { c: tribe.id });
    expect(created.errors).toBeUndefined();
    expect(created.data.createPost.body).toBe('<p>hi</p>');
    expect(created.data.createPost.community).toEqual({ id: tribe.id, memberCount: 1, viewerRole: 'owner', handle: tribe.handle });
  });
});

describe('GraphQL transport errors', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers malformed JSON in the GraphQL envelope', async () => {
    const res = await t.api.post('/graphql').set('content-type', 'application/json').send('{"query": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ message: 'The request body is not valid JSON.', extensions: { code: 'malformed_json', status: 400 } }] });
  });

  it('answers an oversized body with 413 in the GraphQL envelope', async () => {
    const res = await t.api.post('/graphql').set('content-type', 'application/json').send({ query: `{ me { id } }`, pad: 'x'.repeat(200_000) });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions.code).toBe('payload_too_large');
  });

  it('answers unknown Application routes with a flat 404', async () => {
    const res = await t.api.get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String), requestId: expect.any(String) });
  });

  it('puts a request id on every response, keeping a sane one the client sent', async () => {
    const mine = await t.api.get('/healthz').set('x-request-id', 'abc-123');
    expect(mine.headers['x-request-id']).toBe('abc-123');
    const bad = await t.api.get('/healthz').set('x-request-id', 'bad id with spaces');
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
