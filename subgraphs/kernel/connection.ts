import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestContext } from './context.js';
import { invalid } from './errors.js';
import { isUuid } from './validate.js';
import { acceptedSecrets } from './config.js';

/**
 * Relay-style cursor pagination for the web app's lists: `first` (default 20, 1 to 50) and `after` (an opaque cursor),
 * keyset underneath. A cursor names its list and the sort key of the last row seen; it is signed, so a tampered cursor,
 * or one from another list (another sort, another tribe, another viewer's feed), is refused with `invalid_cursor`.
 */

/** A page request after validation: `limit` rows to show, the keyset position to continue after (or null). */
export interface Slice<K extends CursorKey> {
  limit: number;
  after: K | null;
}

/** The sort key a cursor carries: strings and numbers (timestamps as ISO strings or epoch milliseconds). */
export type CursorKey = ReadonlyArray<string | number | null>;

export interface Edge<T> {
  node: T;
  cursor: string;
}

export interface Connection<T> {
  edges: Edge<T>[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export const FIRST = { default: 20, max: 50 } as const;

const MAC_BYTES = 16;

function mac(secret: string, list: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(list).update('\n').update(payload).digest().subarray(0, MAC_BYTES);
}

/** Encodes the sort key of a row as an opaque cursor of `list` (for example `homeFeed:<userId>`). */
export function encodeCursor(secret: string, list: string, key: CursorKey): string {
  const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
  return `${payload}.${mac(secret, list, payload).toString('base64url')}`;
}

const badCursor = () => invalid('invalid_cursor', 'after: is not a cursor of this list (it was changed, or it belongs to another list).');

/**
 * Decodes a cursor of `list`, or refuses it with `invalid_cursor`: wrong shape, a signature that does not match (changed,
 * or made for another list), or a key that `check` refuses (it must return true for the key's exact shape).
 */
export function decodeCursor<K extends CursorKey>(secret: string | readonly string[], list: string, cursor: string, check: (key: CursorKey) => key is K): K {
  if (cursor.length > 1_000) throw badCursor();
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw badCursor();
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
  // Any of the secrets (the current one, and the previous one during a rotation): every one is compared.
  let matched = false;
  for (const one of typeof secret === 'string' ? [secret] : secret) {
    const expected = mac(one, list, payload);
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw badCursor();
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(key) || !check(key)) throw badCursor();
  return key;
}

/** Validates `first`: absent is 20; it must be an integer from 1 to 50 (`invalid_first` otherwise). */
export function firstOf(first: number | null | undefined): number {
  if (first === null || first === undefined) return FIRST.default;
  if (!Number.isInteger(first) || first < 1 || first > FIRST.max) {
    throw invalid('invalid_first', `first: must be an integer from 1 to ${FIRST.max}.`);
  }
  return first;
}

/** Validates a page request of `list`: `first` and the decoded `after` cursor. */
export function slice<K extends CursorKey>(
  secret: string | readonly string[],
  list: string,
  args: { first?: number | null; after?: string | null },
  check: (key: CursorKey) => key is K,
): Slice<K> {
  const limit = firstOf(args.first);
  return { limit, after: args.after === null || args.after === undefined ? null : decodeCursor(secret, list, args.after, check) };
}

/**
 * Builds the connection from rows fetched with `limit + 1` (the extra row only says there is a next page).
 * `keyOf` gives a row's sort key, the same values the keyset query compares. Rows given the very same key (one
 * array, such as the start of a list that every pinned post of a feed continues from) share one signed cursor.
 */
export function connection<T>(secret: string, list: string, rows: T[], limit: number, keyOf: (row: T) => CursorKey): Connection<T> {
  let lastKey: CursorKey | undefined;
  let lastCursor = '';
  const edges = rows.slice(0, limit).map((node) => {
    const key = keyOf(node);
    if (key !== lastKey) {
      lastKey = key;
      lastCursor = encodeCursor(secret, list, key);
    }
    return { node, cursor: lastCursor };
  });
  return { edges, pageInfo: { hasNextPage: rows.length > limit, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** Key checks for the common shapes. */
export const isString = (v: unknown): v is string => typeof v === 'string' && v.length <= 200;
export const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** `[ISO timestamp, uuid]`: the most common keyset (newest first, ties by id). */
export const isTimeAndId = (key: CursorKey): key is [string, string] =>
  key.length === 2 && isString(key[0]) && !Number.isNaN(Date.parse(key[0])) && isUuid(key[1]);
/** `[number, uuid]`: a score or count, ties by id. */
export const isNumberAndId = (key: CursorKey): key is [number, string] =>
  key.length === 2 && isFiniteNumber(key[0]) && isUuid(key[1]);

/** The key cursors are signed with: the service's token secret (set `JWT_SECRET` so cursors survive a restart). */
const secretOf = (ctx: RequestContext) => ctx.app.config.jwtSecret;
/** The keys a cursor is accepted under: `JWT_SECRET`, and `JWT_SECRET_PREVIOUS` during a rotation. */
const secretsOf = (ctx: RequestContext) => acceptedSecrets(ctx.app.config.jwtSecret, ctx.app.config.jwtSecretPrevious);

/** `slice` with the service's cursor key: what a service method calls with its GraphQL arguments. */
export const pageRequest = <K extends CursorKey>(
  ctx: RequestContext,
  list: string,
  args: { first?: number | null; after?: string | null },
  check: (key: CursorKey) => key is K,
): Slice<K> => slice(secretsOf(ctx), list, args, check);

/** `connection` with the service's cursor key. */
export const toConnection = <T>(ctx: RequestContext, list: string, rows: T[], limit: number, keyOf: (row: T) => CursorKey): Connection<T> =>
  connection(secretOf(ctx), list, rows, limit, keyOf);
