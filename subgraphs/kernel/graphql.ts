import { readFileSync } from 'node:fs';
import { GraphQLScalarType, Kind, parse, type DocumentNode } from 'graphql';

/** ISO 8601 UTC timestamps. */
export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'ISO 8601 timestamp in UTC, e.g. 2026-01-31T12:00:00.000Z',
  serialize: (value) => (value instanceof Date ? value : new Date(value as string)).toISOString(),
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

/** A federation entity reference. */
export const ref = <T extends string>(typename: T, id: string | null | undefined) =>
  id ? { __typename: typename, id } : null;
