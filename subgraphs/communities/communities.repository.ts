import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { memberCountExpr } from '../members/index.js';

/** How discover orders public tribes: joins in the trending window, all members, or creation time (ties by id). */
export type DiscoverSort = 'TRENDING' | 'NEWEST' | 'LARGEST';

/**
 * The keyset position of a discover row: `[featured (1 or 0), count, id]` for TRENDING and LARGEST,
 * `[featured, createdAt ISO (µs), id]` for NEWEST. Featured tribes come first in every sort.
 */
export type DiscoverKey = [number, number, string] | [number, string, string];

export interface DiscoverRequest {
  sort: DiscoverSort;
  /** A LIKE pattern (wildcards of the user's text already escaped) matched against name, handle and description. */
  pattern?: string;
  category?: string;
  /** TRENDING counts joins at or after this instant. */
  trendingSince: Date;
  after: DiscoverKey | null;
  limit: number;
}

export interface DiscoverRow {
  id: string;
  key: DiscoverKey;
}

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** `created_at` with its microseconds, as an ISO string a cursor can carry and PostgreSQL can compare exactly. */
const createdKey = sql`to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** 1 for a tribe featured by platform staff, else 0: the first sort key of every discover order. */
const featured = sql`(c.featured_at is not null)::int`;

/**
 * One page of PUBLIC tribes for discover (fetch `limit` rows; pass page size + 1 to learn whether more follow), as ids
 * with their keyset positions. Keyset, never OFFSET: `(key, id) < after` in the descending order.
 */
export async function discover(db: Executor, req: DiscoverRequest): Promise<DiscoverRow[]> {
  // Suspended tribes are left out of discover until reinstated.
  const filters: SQL[] = [sql`c.is_public`, sql`c.suspended_at is null`];
  if (req.category) filters.push(sql`c.category = ${req.category}`);
  if (req.pattern) filters.push(sql`(c.name ilike ${req.pattern} or c.handle ilike ${req.pattern} or c.description ilike ${req.pattern})`);
  const where = sql.join(filters, sql` and `);
  if (req.sort === 'NEWEST') {
    const after = req.after
      ? sql` and (${featured}, c.created_at, c.id) < (${req.after[0]}::int, ${req.after[1]}::timestamptz, ${req.after[2]}::uuid)`
      : sql``;
    const rows = rowsOf<{ id: string; f: number; k: string }>(
      await db.execute(sql`
        select c.id, ${featured} as f, ${createdKey} as k from communities c
        where ${where}${after}
        order by ${featured} desc, c.created_at desc, c.id desc
        limit ${req.limit}`),
    );
    return rows.map((r) => ({ id: r.id, key: [Number(r.f), r.k, r.id] }));
  }
  const score = memberCountExpr(sql`c.id`, req.sort === 'TRENDING' ? req.trendingSince : undefined);
  const after = req.after ? sql`where (d.f, d.score, d.id) < (${req.after[0]}::int, ${req.after[1]}::int, ${req.after[2]}::uuid)` : sql``;
  const rows = rowsOf<{ id: string; f: number; score: number }>(
    await db.execute(sql`
      select d.id, d.f, d.score from (select c.id, ${featured} as f, ${score} as score from communities c where ${where}) d
      ${after}
      order by d.f desc, d.score desc, d.id desc
      limit ${req.limit}`),
  );
  return rows.map((r) => ({ id: r.id, key: [Number(r.f), Number(r.score), r.id] }));
}

/** The number of PUBLIC tribes of each of `categories` (absent when none). */
export async function publicCategoryCounts(db: Executor, categories: readonly string[]): Promise<Map<string, number>> {
  const rows = rowsOf<{ category: string; n: number }>(
    await db.execute(sql`
      select c.category, count(*)::int as n from communities c
      where c.is_public and c.suspended_at is null and c.category = any(${sql.param([...categories])}::text[])
      group by c.category`),
  );
  return new Map(rows.map((r) => [r.category, Number(r.n)]));
}
