import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, isObjectType, parse, type GraphQLSchema, type GraphQLUnionType } from 'graphql';
import { LocalSubgraphSource, COMPILE_AFTER } from '../gateway/src/local-source.js';
import { buildSubgraph, SUBGRAPH_NAMES, SUBGRAPHS, type SubgraphName } from '../subgraphs/index.js';
import { cheaperEntities } from '../subgraphs/kernel/entities.js';
import { byIdReference, idLoader, type RequestContext } from '../subgraphs/kernel/index.js';
import { findUsersByIds } from '../subgraphs/identity/index.js';
import { createPost, createTribe, signupUser, UNKNOWN_ID, type TestUser } from './factory.js';
import { startService, type TestService } from './support.js';

/**
 * `Query._entities` of every subgraph (`cheaperEntities`, subgraphs/kernel/entities.ts) answers what
 * @apollo/subgraph's own resolver answers on the same rows: data and errors, for every entity type.
 */
describe('_entities: the same answers as @apollo/subgraph', () => {
  let t: TestService;
  let owner: TestUser;
  let other: TestUser;
  const ids: Record<string, string[]> = {};

  beforeAll(async () => {
    t = await startService();
    [owner, other] = await Promise.all([signupUser(t), signupUser(t)]);
    const tribe = await createTribe(t, owner, { isPublic: true });
    const post = await createPost(t, owner, tribe.id, { content: 'entities' });
    ids.User = [owner.id, other.id];
    ids.Community = [tribe.id];
    ids.Post = [post.id];
  });
  afterAll(async () => {
    await t.stop();
  });

  const entityTypes = (schema: GraphQLSchema) => ((schema.getType('_Entity') as GraphQLUnionType | undefined)?.getTypes() ?? []).filter(isObjectType);
  /** Every entity type's key (`id`) and `__typename`, and the caller's own e-mail on a User (null for anyone else). */
  const documentFor = (schema: GraphQLSchema) =>
    parse(`query($representations: [_Any!]!) { _entities(representations: $representations) { __typename ${entityTypes(schema)
      .map((type) => `... on ${type.name} { id ${type.name === 'User' && type.getFields().email ? 'email username' : ''} }`)
      .join(' ')} } }`);
  const representationsFor = (schema: GraphQLSchema) =>
    entityTypes(schema).flatMap((type) => [
      ...(ids[type.name] ?? []).map((id) => ({ __typename: type.name, id })),
      { __typename: type.name, id: UNKNOWN_ID },
      { __typename: type.name, id: 'not-a-uuid' },
    ]);
  const context = (caller: TestUser | null) => ({ app: t.deps, caller: caller && { userId: caller.id }, requestId: 'entities-test' });
  const run = (schema: GraphQLSchema, representations: unknown[], caller: TestUser | null) =>
    execute({ schema, document: documentFor(schema), variableValues: { representations }, contextValue: context(caller) });

  const withEntities = SUBGRAPH_NAMES.filter((name) => entityTypes(buildSubgraph(name)).length > 0);

  it.each(withEntities)('%s: every entity type, known, unknown and malformed ids, read twice (then remembered)', async (name: SubgraphName) => {
    const ours = buildSubgraph(name);
    const apollos = buildSubgraphSchema([{ typeDefs: SUBGRAPHS[name].typeDefs, resolvers: SUBGRAPHS[name].resolvers }]);
    const representations = representationsFor(ours);
    expect(representations.length).toBeGreaterThan(0);
    for (const caller of [owner, null, owner]) {
      const expected = await run(apollos, representations, caller);
      expect(JSON.stringify(await run(ours, representations, caller))).toBe(JSON.stringify(expected));
    }
  });

  it('identity: users known and unknown, the caller\'s own e-mail only, and a type the schema lacks is the same error', async () => {
    const ours = buildSubgraph('identity');
    const apollos = buildSubgraphSchema([{ typeDefs: SUBGRAPHS.identity.typeDefs, resolvers: SUBGRAPHS.identity.resolvers }]);
    const users = [owner.id, UNKNOWN_ID, other.id, owner.id].map((id) => ({ __typename: 'User', id }));
    const answer = await run(ours, users, owner);
    expect(answer.errors).toBeUndefined();
    expect(answer.data?._entities).toEqual([
      { __typename: 'User', id: owner.id, email: expect.stringContaining('@'), username: owner.username },
      null,
      { __typename: 'User', id: other.id, email: null, username: other.username },
      { __typename: 'User', id: owner.id, email: expect.stringContaining('@'), username: owner.username },
    ]);
    expect(JSON.stringify(answer)).toBe(JSON.stringify(await run(apollos, users, owner)));

    const missingType = [{ __typename: 'User', id: owner.id }, { __typename: 'Nothing', id: owner.id }];
    const refused = await run(ours, missingType, owner);
    expect(refused.errors?.[0]?.message).toBe('The _entities resolver tried to load an entity for type "Nothing", but no object or interface type of that name was found in the schema');
    expect(JSON.stringify(refused)).toBe(JSON.stringify(await run(apollos, missingType, owner)));
  });

  it('compiled (graphql-jit, as the fast paths run a fetch document that comes back) it answers as graphql-js does', async () => {
    const source = new LocalSubgraphSource(buildSubgraph('identity'), 'identity');
    const query = 'query($representations:[_Any!]!){_entities(representations:$representations){...on User{username displayName}}}';
    const representations = [other.id, UNKNOWN_ID, owner.id].map((id) => ({ __typename: 'User', id }));
    const expected = {
      _entities: [{ username: other.username, displayName: expect.any(String) }, null, { username: owner.username, displayName: expect.any(String) }],
    };
    for (let i = 0; i <= COMPILE_AFTER + 1; i += 1) {
      expect(await source.fetchFast(query, undefined, { representations }, context(null))).toEqual(expected);
    }
  });

  it('a remembered user is one frozen row shared by readers, its __typename defined as Apollo defines it and never serialised', async () => {
    const [first] = await findUsersByIds(t.deps, [other.id]);
    const [second] = await findUsersByIds(t.deps, [other.id]);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(first, '__typename')).toEqual({ value: 'User', enumerable: false, writable: false, configurable: false });
    expect(JSON.parse(JSON.stringify(first))).not.toHaveProperty('__typename');
    expect({ ...first }).not.toHaveProperty('__typename');
  });
});

describe('_entities resolved all at once (byIdReference.many) answers as one DataLoader load per entity', () => {
  const typeDefs = parse(`
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
    type Thing @key(fields: "id") { id: ID! name: String }
    type Query { thing(id: ID!): Thing }
  `);
  const A = '00000000-0000-4000-8000-00000000000a';
  const B = '00000000-0000-4000-8000-00000000000b';
  const MISSING = '00000000-0000-4000-8000-00000000000c';
  /** A fetch of rows by id that counts its calls and fails while `failing` is set. */
  const store = () => {
    const calls: string[][] = [];
    let failing = false;
    const fetch = async (ids: string[]) => {
      calls.push([...ids].sort());
      if (failing) throw new Error('the store is down');
      return ids.filter((id) => id !== MISSING).map((id) => ({ id, name: `thing ${id.slice(-1)}` }));
    };
    return { calls, fetch, fail: () => void (failing = true) };
  };
  /** Apollo's `_entities` over a DataLoader `load` per entity, and ours over `byIdReference`: the same fetch. */
  const schemas = (fetch: (ids: string[]) => Promise<Array<{ id: string; name: string }>>) => {
    const loaderOf = (ctx: RequestContext) => idLoader(ctx, 'test.thing', fetch);
    const perEntity = buildSubgraphSchema([{ typeDefs, resolvers: {
      Query: { thing: (_: unknown, a: { id: string }, ctx: RequestContext) => loaderOf(ctx).load(a.id) },
      Thing: { __resolveReference: (r: { id: string }, ctx: RequestContext) => loaderOf(ctx).load(r.id) },
    } as any }]);
    const reference = byIdReference('test.thing', (_ctx, ids) => fetch(ids));
    const allAtOnce = cheaperEntities(buildSubgraphSchema([{ typeDefs, resolvers: {
      Query: { thing: (_: unknown, a: { id: string }, ctx: RequestContext) => loaderOf(ctx).load(a.id) },
      Thing: { __resolveReference: reference },
    } as any }]));
    return { perEntity, allAtOnce };
  };
  const ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Thing { id name } } }';
  const both = async (document: string, representations: unknown[], setUp: (s: ReturnType<typeof store>) => void = () => undefined) => {
    const out = [];
    for (const which of ['perEntity', 'allAtOnce'] as const) {
      const s = store();
      setUp(s);
      const result = await execute({ schema: schemas(s.fetch)[which], document: parse(document), variableValues: { r: representations }, contextValue: { requestId: which } });
      out.push({ result: JSON.stringify(result), calls: s.calls });
    }
    return out;
  };

  it('known, missing, repeated and malformed ids: the same data from the same one fetch', async () => {
    const [apollos, ours] = await both(ENTITIES, [A, MISSING, B, A, 'not-a-uuid'].map((id) => ({ __typename: 'Thing', id })));
    expect(JSON.parse(ours!.result).data._entities).toEqual([
      { id: A, name: 'thing a' }, null, { id: B, name: 'thing b' }, { id: A, name: 'thing a' }, null,
    ]);
    expect(ours).toEqual(apollos);
    expect(ours!.calls).toEqual([[A, B, MISSING].sort()]);
  });

  it('a failed fetch is the same error on every entity, at each entity\'s path', async () => {
    const [apollos, ours] = await both(ENTITIES, [A, B].map((id) => ({ __typename: 'Thing', id })), (s) => s.fail());
    const result = JSON.parse(ours!.result);
    expect(result.data._entities).toEqual([null, null]);
    expect(result.errors.map((e: { message: string; path: unknown[] }) => [e.message, e.path])).toEqual([
      ['the store is down', ['_entities', 0]],
      ['the store is down', ['_entities', 1]],
    ]);
    expect(ours).toEqual(apollos);
  });

  it('an id that is not a string, and a request that used the loader before, take the per-entity path: the same answers', async () => {
    const [apollos, ours] = await both(ENTITIES, [{ __typename: 'Thing', id: A }, { __typename: 'Thing', id: 7 }]);
    expect(JSON.parse(ours!.result).data._entities).toEqual([{ id: A, name: 'thing a' }, null]);
    expect(ours).toEqual(apollos);

    const after = `query($r: [_Any!]!) { thing(id: "${A}") { id } _entities(representations: $r) { ... on Thing { id name } } }`;
    const [apollosAfter, oursAfter] = await both(after, [B, A].map((id) => ({ __typename: 'Thing', id })));
    expect(JSON.parse(oursAfter!.result).data).toEqual({ thing: { id: A }, _entities: [{ id: B, name: 'thing b' }, { id: A, name: 'thing a' }] });
    expect(oursAfter).toEqual(apollosAfter);
    expect(oursAfter!.calls).toEqual([[A, B]]);
  });
});
