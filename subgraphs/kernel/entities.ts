import { isObjectType, type GraphQLFieldResolver, type GraphQLObjectType, type GraphQLSchema } from 'graphql';

type Representation = { __typename: string } & Record<string, unknown>;
type ResolveReference = ((reference: Representation, context: unknown, info: unknown) => unknown) & {
  /** `byIdReference`'s (kernel/loaders.ts): every reference at once, or undefined to resolve them one by one. */
  many?: (references: Representation[], context: unknown) => Promise<unknown[]> | undefined;
};
interface CacheControl {
  cacheHint?: { restrict?: (hint: unknown) => void };
  cacheHintFromType?: (type: unknown) => unknown;
}

/**
 * Replaces `Query._entities` of a schema built by `buildSubgraphSchema` with a resolver that answers exactly what
 * @apollo/subgraph 2.14's `entitiesResolver` answers, at less cost per entity: a reference to an object type is
 * resolved by its `__resolveReference` (or is the reference itself) and marked with its `__typename` as Apollo's
 * marks it, but synchronously when the resolver returned a value (Apollo's wraps every entity in an `async`
 * function), and without redefining `__typename` on an object that already holds it as its own property with that
 * value, which Apollo's does on every call (`Object.defineProperty`, V8's slow path: a tenth of the fetch of 50
 * users that a leaderboard page makes, the users being the same remembered objects each time). When every
 * reference is of one type whose `__resolveReference` has `many` (`byIdReference`), they are resolved in one call
 * instead of a DataLoader `load` each; a failure of that call is every entity's error, as a failed DataLoader batch
 * is. A reference to an interface type, or to a type the schema lacks, is left to Apollo's resolver, item by item,
 * with its errors.
 */
export function cheaperEntities(schema: GraphQLSchema): GraphQLSchema {
  const field = schema.getQueryType()?.getFields()._entities;
  const apollos = field?.resolve;
  if (!field || !apollos) return schema;
  const resolve: GraphQLFieldResolver<unknown, unknown, { representations: Representation[] }> = (source, args, context, info) => {
    const { representations } = args;
    const type = representations.length > 0 ? info.schema.getType(representations[0]!.__typename) : undefined;
    if (isObjectType(type) && representations.every((r) => r.__typename === type.name)) {
      const resolveReference = referenceResolverOf(type);
      const all = resolveReference?.many?.(representations, context);
      if (all) {
        restrictCacheHint(info, type);
        // One settled list for all of them; a failure is every entity's error, as from a DataLoader batch.
        return all.then(
          (values) => values.map((value) => typed(value, type.name)),
          (error: unknown) => representations.map(() => Promise.reject(error)),
        );
      }
    }
    return representations.map((reference) => {
      const type = info.schema.getType(reference.__typename);
      if (!isObjectType(type)) return (apollos(source, { representations: [reference] }, context, info) as unknown[])[0];
      restrictCacheHint(info, type);
      const resolveReference = referenceResolverOf(type);
      const result = resolveReference ? resolveReference(reference, context, info) : reference;
      return typed(result, type.name);
    });
  };
  field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>;
  return schema;
}

const referenceResolverOf = (type: GraphQLObjectType) =>
  (type.extensions as { apollo?: { subgraph?: { resolveReference?: ResolveReference } } }).apollo?.subgraph?.resolveReference;

/** The type's cache hint applied to the response's, as Apollo's resolver does under Apollo Server's cache control. */
function restrictCacheHint(info: unknown, type: GraphQLObjectType): void {
  const cacheControl = (info as { cacheControl?: CacheControl }).cacheControl;
  if (cacheControl?.cacheHint?.restrict && cacheControl.cacheHintFromType) {
    const hint = cacheControl.cacheHintFromType(type);
    if (hint) cacheControl.cacheHint.restrict(hint);
  }
}

/** Apollo's `maybeAddTypeNameToPossibleReturn`, synchronous for a value (a failure still rejects, as from `async`). */
function typed(result: unknown, typename: string): unknown {
  if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') return Promise.resolve(result).then((value) => withTypename(value, typename));
  try {
    return withTypename(result, typename);
  } catch (error) {
    return Promise.reject(error);
  }
}

function withTypename(value: unknown, typename: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  if ('__typename' in object && object.__typename !== typename) return { ...object, __typename: typename };
  // Apollo's defines it every time; an own property of this value is what that definition would leave.
  if (!Object.hasOwn(object, '__typename')) Object.defineProperty(object, '__typename', { value: typename });
  return object;
}
