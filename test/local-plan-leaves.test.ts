// The local plan's fetches leave built-in scalars and enums unserialized once compiled (`LocalSubgraphSource.fetchFast`,
// graphql-jit's `disableLeafSerialization`): every leaf the local plan answers must still be what graphql-js's
// serializers would answer, and a value they would change or refuse goes to the gateway (the plan answers undefined).
// Two small subgraphs of their own, planned by hand as the gateway plans them: a page of things, then `_entities`.
import { describe, expect, it } from '@jest/globals';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { QueryPlan } from '@apollo/query-planner';
import { buildSchema, execute, Kind, OperationTypeNode, parse, type OperationDefinitionNode } from 'graphql';
import { COMPILE_AFTER, LocalSubgraphSource } from '../gateway/src/local-source.js';
import { compileLocalPlan } from '../gateway/src/local-plan.js';

const THINGS = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { thing: Thing }
  type Thing @key(fields: "id") { id: ID! name: String count: Int ratio: Float flag: Boolean kind: Kind }
  enum Kind { A B }
`);
const EXTRAS = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Thing @key(fields: "id") { id: ID! extra: String }
`);
/** The API schema of the two, as the gateway's supergraph presents it. */
const API = buildSchema(`
  type Query { thing: Thing }
  type Thing { id: ID! name: String count: Int ratio: Float flag: Boolean kind: Kind extra: String }
  enum Kind { A B }
`);

const THING = 'query Q { thing { id name count ratio flag kind } }';
const WITH_EXTRA = 'query Q { thing { id name extra } }';

/** What graphql-js answers for `query` on the API schema with the same values: the answer a local plan must match. */
async function expected(query: string, thing: Record<string, unknown>) {
  const result = await execute({ schema: API, document: parse(query), rootValue: { thing: { ...thing, extra: `extra of ${thing.id}` } } });
  return result.errors ? undefined : result.data;
}

function setup(kindValues?: Record<string, unknown>) {
  let thing: Record<string, unknown> = {};
  const things = buildSubgraphSchema([
    {
      typeDefs: THINGS,
      resolvers: { Query: { thing: () => thing }, ...(kindValues ? { Kind: kindValues } : {}) } as never,
    },
  ]);
  const extras = buildSubgraphSchema([
    {
      typeDefs: EXTRAS,
      resolvers: { Thing: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, extra: `extra of ${ref.id}` }) } } as never,
    },
  ]);
  const sources = new Map([
    ['things', new LocalSubgraphSource(things, 'things')],
    ['extras', new LocalSubgraphSource(extras, 'extras')],
  ]);
  const fetch = (operation: string) => ({ kind: 'Fetch' as const, serviceName: 'things', operation, operationName: undefined, operationKind: OperationTypeNode.QUERY, variableUsages: [] });
  const plans: Record<string, QueryPlan> = {
    [THING]: { kind: 'QueryPlan', node: fetch('{thing{id name count ratio flag kind}}') },
    [WITH_EXTRA]: {
      kind: 'QueryPlan',
      node: {
        kind: 'Sequence',
        nodes: [
          fetch('{thing{__typename id name}}'),
          {
            kind: 'Flatten',
            path: ['thing'],
            node: {
              kind: 'Fetch',
              serviceName: 'extras',
              operationName: undefined,
              operation: 'query($representations:[_Any!]!){_entities(representations:$representations){...on Thing{extra}}}',
              operationKind: OperationTypeNode.QUERY,
              variableUsages: [],
              requires: [
                {
                  kind: Kind.INLINE_FRAGMENT,
                  typeCondition: 'Thing',
                  selections: [
                    { kind: Kind.FIELD, name: '__typename' },
                    { kind: Kind.FIELD, name: 'id' },
                  ],
                },
              ],
            },
          },
        ],
      },
    },
  };
  /** The local plan of `query`, run with the thing the subgraph answers. */
  const run = (query: string, value: Record<string, unknown>) => {
    thing = value;
    const document = parse(query);
    const operation = document.definitions[0] as OperationDefinitionNode;
    const plan = compileLocalPlan(plans[query], document, operation, API, sources);
    if (!plan) throw new Error('not a local plan');
    return plan({}, {});
  };
  return { run, sources };
}

const GOOD = { id: 'thing-1', name: 'one', count: -2_147_483_648, ratio: 1.5, flag: false, kind: 'B' };

describe('local plan: unserialized leaves', () => {
  it('answers what graphql-js answers for values its serializers keep, before and after the fetch is compiled', async () => {
    const { run } = setup();
    for (let i = 0; i < COMPILE_AFTER + 2; i += 1) {
      expect(await run(THING, GOOD)).toEqual(await expected(THING, GOOD));
      expect(await run(WITH_EXTRA, GOOD)).toEqual(await expected(WITH_EXTRA, GOOD));
    }
    expect(await run(THING, { id: 'thing-2', name: null, count: null, ratio: null, flag: null, kind: null })).toEqual({
      thing: { id: 'thing-2', name: null, count: null, ratio: null, flag: null, kind: null },
    });
  });

  it.each([
    ['a number for an ID', { id: 5 }],
    ['a number for a String', { name: 7 }],
    ['a boolean for an Int', { count: true }],
    ['an Int beyond 32 bits', { count: 2 ** 31 }],
    ['a fraction for an Int', { count: 1.5 }],
    ['a number for a Boolean', { flag: 1 }],
    ['a string for a Float', { ratio: '1.5' }],
    ['a name the enum lacks', { kind: 'C' }],
  ])('hands %s to the gateway once the fetch is compiled (a serializer would change or refuse it)', async (_label, change) => {
    const { run, sources } = setup();
    for (let i = 0; i < COMPILE_AFTER + 1; i += 1) await run(THING, GOOD); // compiled from here on
    const raw = await sources.get('things')!.fetchFast('{thing{id name count ratio flag kind}}', undefined, {}, {});
    expect(raw).toEqual({ thing: GOOD });
    expect(await run(THING, { ...GOOD, ...change })).toBeUndefined();
  });

  it("hands an entity whose key is not a string to the gateway (the serializer would have made an ID's number a string)", async () => {
    const { run } = setup();
    for (let i = 0; i < COMPILE_AFTER + 1; i += 1) expect(await run(WITH_EXTRA, GOOD)).toEqual(await expected(WITH_EXTRA, GOOD));
    expect(await run(WITH_EXTRA, { ...GOOD, id: 42 })).toBeUndefined();
  });

  it('keeps the serializers for a subgraph whose enum values are not their names', async () => {
    const { run, sources } = setup({ A: 'a', B: 'b' });
    for (let i = 0; i < COMPILE_AFTER + 2; i += 1) {
      expect(await run(THING, { ...GOOD, kind: 'b' })).toEqual(await expected(THING, GOOD));
      expect(await sources.get('things')!.fetchFast('{thing{id name count ratio flag kind}}', undefined, {}, {})).toEqual({ thing: GOOD });
    }
  });
});
