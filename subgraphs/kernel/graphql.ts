import { readFileSync } from 'node:fs';
import { GraphQLScalarType, Kind, parse, valueFromASTUntyped, type DocumentNode, type GraphQLResolveInfo } from 'graphql';
import { isoTime } from './iso-time.js';

/** ISO 8601 UTC timestamps. */
export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'ISO 8601 timestamp in UTC, e.g. 2026-01-31T12:00:00.000Z',
  serialize: (value) => isoTime(value instanceof Date ? value : new Date(value as string)),
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

/** Any JSON value, passed through as it is (a field's own rules validate it: see `Community.metadata`). */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
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
