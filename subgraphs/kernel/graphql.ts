import { readFileSync } from 'node:fs';
import { GraphQLScalarType, Kind, parse, type DocumentNode, type GraphQLResolveInfo } from 'graphql';

/**
 * A string `new Date(s).toISOString()` gives back unchanged: the canonical form with a day of 28 at most (a 29th to
 * 31st may not exist in its month and is normalised, so it takes the general path). The gateway serialises what the
 * subgraphs already serialised (every timestamp of a page twice): this keeps the second one from parsing and
 * formatting each again (1.6 µs each, 150 on a page of 50 posts).
 */
const CANONICAL_UTC = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** A DateTime value as the API answers it: the ISO 8601 UTC form of a Date, or of a string read as a date. */
export function serializeDateTime(value: unknown): string {
  if (typeof value === 'string' && CANONICAL_UTC.test(value)) return value;
  return (value instanceof Date ? value : new Date(value as string)).toISOString();
}

/** ISO 8601 UTC timestamps. */
export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'ISO 8601 timestamp in UTC, e.g. 2026-01-31T12:00:00.000Z',
  serialize: serializeDateTime,
  parseValue: (value) => {
    const d = new Date(value as string);
    if (typeof value !== 'string' || Number.isNaN(d.getTime())) throw new TypeError('DateTime must be an ISO 8601 string');
    return d;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || Number.isNaN(new Date(ast.value).getTime())) throw new TypeError('DateTime must be an ISO 8601 string');
    return new Date(ast.value);
  },
});

/** Reads a `schema.graphql` that sits beside the calling module. */
export function loadTypeDefs(moduleUrl: string): DocumentNode {
  return parse(readFileSync(new URL('./schema.graphql', moduleUrl), 'utf8'));
}

/** A federation entity reference: null without an id. */
export function ref<T extends string>(typename: T, id: string): { __typename: T; id: string };
export function ref<T extends string>(typename: T, id: string | null | undefined): { __typename: T; id: string } | null;
export function ref<T extends string>(typename: T, id: string | null | undefined): { __typename: T; id: string } | null {
  return id ? { __typename: typename, id } : null;
}

/**
 * The value of a non-null field. A missing one raises the very error GraphQL raises for a null there (same
 * message, same path), so the resolver's type says what the schema promises without changing any answer.
 */
export function nonNull<T>(value: T | null | undefined, info: GraphQLResolveInfo): T {
  if (value === null || value === undefined) {
    throw new Error(`Cannot return null for non-nullable field ${info.parentType.name}.${info.fieldName}.`);
  }
  return value;
}
