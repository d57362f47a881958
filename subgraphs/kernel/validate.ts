import type { z } from 'zod';
import { invalid } from './errors.js';

/** Parses untrusted input with a zod schema; failures become `invalid_input` with per-field details. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, code = 'invalid_input'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
  const first = details[0];
  throw invalid(code, first ? `${first.field || 'body'}: ${first.message}` : 'Invalid input.', details);
}

/** True when `error` is a PostgreSQL unique violation, optionally on the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = findPgError(error);
  return !!e && e.code === '23505' && (!constraint || e.constraint === constraint);
}

/** True when `error` is a PostgreSQL foreign-key violation (the referenced row is gone). */
export function isForeignKeyViolation(error: unknown): boolean {
  return findPgError(error)?.code === '23503';
}

/** True when `error` is PostgreSQL's "canceling statement due to statement timeout" (SQLSTATE 57014). */
export function isStatementTimeout(error: unknown): boolean {
  return findPgError(error)?.code === '57014';
}

function findPgError(error: unknown): { code?: string; constraint?: string } | undefined {
  let current = error as { code?: string; constraint?: string; cause?: unknown } | undefined;
  for (let i = 0; current && i < 5; i += 1) {
    if (typeof current.code === 'string' && current.code.length === 5) return current;
    current = current.cause as typeof current;
  }
  return undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a syntactically valid UUID (ids are checked before they reach SQL). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);
