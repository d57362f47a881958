// One vocabulary (issue 31, docs/names.md): a post's or comment's text is `body` on every surface; `content`, its old
// name in GraphQL input and the resource API, keeps working (deprecated); both at once is refused, naming `body`.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { actor, createTribe, type Actor } from './factory.js';
import { bearer, failure, gql, ok, startService, type TestService } from './support.js';

describe('a post\'s text is body everywhere (content deprecated)', () => {
  let t: TestService;
  let owner: Actor;
  let tribe: { id: string; handle: string };
  const posts = () => `/v1/communities/${tribe.id}/posts`;

  beforeAll(async () => {
    t = await startService();
    owner = await actor(t);
    tribe = await createTribe(t, owner);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('GraphQL: createPost and updatePost take body; content still works; both at once is BAD_USER_INPUT naming body', async () => {
    const created = ok(await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {body: "<p>new name</p>"}){ id body } }', { c: tribe.id })).createPost;
    expect(created.body).toBe('<p>new name</p>');
    const old = ok(await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {content: "<p>old name</p>"}){ id body } }', { c: tribe.id })).createPost;
    expect(old.body).toBe('<p>old name</p>');
    const updated = ok(await gql(t, owner, 'mutation($id: ID!){ updatePost(id: $id, input: {body: "<p>edited</p>"}){ body } }', { id: old.id })).updatePost;
    expect(updated.body).toBe('<p>edited</p>');

    const both = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {body: "a", content: "b"}){ id } }', { c: tribe.id });
    expect(failure(both)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_input' });
    expect(both.errors![0].message).toBe('body: send body or content (its deprecated name), not both');
    const neither = await gql(t, owner, 'mutation($c: ID!){ createPost(communityId: $c, input: {visibility: "public"}){ id } }', { c: tribe.id });
    expect(neither.errors![0].message).toBe('body: is required');

    const comment = ok(await gql(t, owner, 'mutation($p: ID!){ createComment(postId: $p, input: {body: "hi"}){ id body } }', { p: created.id })).createComment;
    expect(comment.body).toBe('hi');
    const oldComment = ok(await gql(t, owner, 'mutation($p: ID!){ createComment(postId: $p, input: {content: "yo"}){ id body } }', { p: created.id })).createComment;
    expect(oldComment.body).toBe('yo');
    expect(ok(await gql(t, owner, 'mutation($id: ID!){ updateComment(id: $id, input: {body: "hey"}){ body } }', { id: comment.id })).updateComment.body).toBe('hey');
  });

  it('GraphQL schema: the content input fields are @deprecated with a reason naming body', () => {
    const sdl = readFileSync(new URL('../subgraphs/content/schema.graphql', import.meta.url), 'utf8');
    for (const input of ['CreatePostInput', 'UpdatePostInput', 'CreateCommentInput', 'UpdateCommentInput']) {
      const block = sdl.slice(sdl.indexOf(`input ${input} {`), sdl.indexOf('}', sdl.indexOf(`input ${input} {`)));
      expect(block).toMatch(/\n\s+body: String\n/);
      expect(block).toMatch(/content: String @deprecated\(reason: "Use body/);
    }
  });

  it('resource API: posts and comments take body and answer body (and the deprecated content, the same text)', async () => {
    const res = await t.api.post(posts()).set(bearer(owner)).send({ body: '<p>via body</p>' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ body: '<p>via body</p>', content: '<p>via body</p>' });
    const old = await t.api.post(posts()).set(bearer(owner)).send({ content: '<p>via content</p>' });
    expect(old.status).toBe(201);
    expect(old.body.data).toMatchObject({ body: '<p>via content</p>', content: '<p>via content</p>' });

    const patched = await t.api.patch(`${posts()}/${old.body.data.id}`).set(bearer(owner)).send({ body: '<p>patched</p>' });
    expect(patched.body.data.body).toBe('<p>patched</p>');
    expect((await t.api.get(`${posts()}/${old.body.data.id}`).set(bearer(owner))).body.data.body).toBe('<p>patched</p>');

    const both = await t.api.post(posts()).set(bearer(owner)).send({ body: 'a', content: 'b' });
    expect({ status: both.status, code: both.body.error.code, message: both.body.error.message, field: both.body.error.details?.[0]?.field }).toEqual({
      status: 400, code: 'invalid_input', message: 'body: send body or content (its deprecated name), not both', field: 'body',
    });
    const empty = await t.api.post(posts()).set(bearer(owner)).send({ content: '<script>x</script>' });
    expect({ status: empty.status, message: empty.body.error.message }).toEqual({ status: 400, message: 'content: is required and must contain text after removing unsafe HTML.' });

    const comment = await t.api.post(`${posts()}/${res.body.data.id}/comments`).set(bearer(owner)).send({ body: 'nice' });
    expect(comment.status).toBe(201);
    expect(comment.body.data).toMatchObject({ body: 'nice', content: 'nice' });
    const listed = await t.api.get(`${posts()}/${res.body.data.id}/comments`).set(bearer(owner));
    expect(listed.body.data[0]).toMatchObject({ body: 'nice', content: 'nice' });
  });

  it('resource API OpenAPI: content is deprecated: true where body is offered', async () => {
    const doc = (await t.api.get('/openapi/resource.json')).body;
    expect(doc.components.schemas.Post.properties.content.deprecated).toBe(true);
    expect(doc.components.schemas.Comment.properties.content.deprecated).toBe(true);
    expect(doc.components.schemas.Post.properties.body.type).toBe('string');
    const createPost = doc.paths['/v1/communities/{community_id}/posts'].post.requestBody.content['application/json'].schema;
    expect(createPost.properties.content.deprecated).toBe(true);
    expect(createPost.anyOf).toEqual([{ required: ['body'] }, { required: ['content'] }]);
  });
});
