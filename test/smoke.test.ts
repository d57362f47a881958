import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTribe, gql, signupUser, startService, type TestService } from './helpers.js';

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
