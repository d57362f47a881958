// A tribe by its id or its handle on the resource API (issue 31): every `/v1/communities/{community_id}` path takes
// either, and a tribe that is not found is named in the message by what was looked up.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { actor, createTribe, UNKNOWN_ID, unique, type Actor } from './factory.js';
import { bearer, countOf, startService, type TestService } from './support.js';

describe('resource API: a tribe by id or handle', () => {
  let t: TestService;
  let owner: Actor;
  let tribe: { id: string; handle: string };

  beforeAll(async () => {
    t = await startService();
    owner = await actor(t);
    tribe = await createTribe(t, owner, { isPublic: true });
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  it('GET /v1/communities/{handle} answers what GET /v1/communities/{id} answers, in any letter case', async () => {
    const byId = await t.api.get(`/v1/communities/${tribe.id}`).set(bearer(owner));
    expect(byId.status).toBe(200);
    for (const handle of [tribe.handle, tribe.handle.toUpperCase()]) {
      const byHandle = await t.api.get(`/v1/communities/${handle}`).set(bearer(owner));
      expect([byHandle.status, byHandle.body]).toEqual([200, byId.body]);
    }
  });

  it('the paths below a tribe take its handle too: posts (write and read), members, webhooks', async () => {
    const created = await t.api.post(`/v1/communities/${tribe.handle}/posts`).set(bearer(owner)).send({ content: `by handle ${unique()}` });
    expect(created.status).toBe(201);
    expect(created.body.data.community_id).toBe(tribe.id);
    expect(await countOf(t, sql`select count(*)::int as n from posts where id = ${created.body.data.id} and community_id = ${tribe.id}`)).toBe(1);
    const posts = await t.api.get(`/v1/communities/${tribe.handle}/posts`).set(bearer(owner));
    expect(posts.status).toBe(200);
    expect(posts.body.data.map((p: { id: string }) => p.id)).toContain(created.body.data.id);
    const one = await t.api.get(`/v1/communities/${tribe.handle}/posts/${created.body.data.id}`).set(bearer(owner));
    expect([one.status, one.body.data.id]).toEqual([200, created.body.data.id]);
    const members = await t.api.get(`/v1/communities/${tribe.handle}/members`).set(bearer(owner));
    expect([members.status, members.body.data.map((m: { user_id: string }) => m.user_id)]).toEqual([200, [owner.id]]);
    const hooks = await t.api.get(`/v1/communities/${tribe.handle}/webhooks`).set(bearer(owner));
    expect(hooks.status).toBe(200);
  });

  it('an unknown handle is 404 not_found naming the handle looked up, and writes nothing', async () => {
    const handle = `no-such-${unique()}`;
    const res = await t.api.post(`/v1/communities/${handle}/posts`).set(bearer(owner)).send({ content: 'lost' });
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([404, 'not_found', `Community not found: no tribe with handle "${handle}".`]);
    expect(await countOf(t, sql`select count(*)::int as n from posts where author_id = ${owner.id} and body like '%lost%'`)).toBe(0);
  });

  it('an unknown id is 404 not_found naming the id looked up', async () => {
    const res = await t.api.get(`/v1/communities/${UNKNOWN_ID}`).set(bearer(owner));
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([404, 'not_found', `Community not found: no tribe with id "${UNKNOWN_ID}".`]);
  });

  it('without a token a handle is refused before any lookup (401)', async () => {
    const res = await t.api.get(`/v1/communities/${tribe.handle}/posts`);
    expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it('the OpenAPI document says the path takes an id or a handle, and what a not-found names', async () => {
    const doc = (await t.api.get('/openapi/resource.json')).body;
    const param = doc.paths['/v1/communities/{community_id}/posts'].get.parameters.find((p: { name: string }) => p.name === 'community_id');
    expect(param.description).toMatch(/its id, or its handle/);
    expect(param.schema).not.toHaveProperty('format');
    expect(param.description).toContain('Community not found: no tribe with handle');
  });
});
