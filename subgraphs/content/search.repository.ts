import { inArray, sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/src/index.js';
import { isStatementTimeout } from '../kernel/index.js';
import { comments, type Comment } from './content.tables.js';

/** What a hit is: a post itself, or a comment (whose post is the hit's post). Posts sort first on equal rank. */
export type HitKind = 'post' | 'comment';

/** The keyset position of a hit: rank (descending), kind, id. */
export type SearchKey = [number, HitKind, string];

/**
 * One search over the tribes `communityIds`, with what the viewer may see in each. The caller (search.service.ts)
 * works out the scope from the viewer's roles; the SQL applies it to every row.
 */
export interface SearchRequest {
  /** The user's text, already normalised and truncated (websearch syntax; any text is valid). */
  query: string;
  /** Tribes searched. */
  communityIds: readonly string[];
  /** Of those, tribes where the viewer also sees members-only posts (members and above). */
  memberOf: readonly string[];
  /** Of those, tribes where the viewer sees every visibility (moderators and above). */
  moderatorOf: readonly string[];
  /** The signed-in viewer, who also sees their own published posts whatever their visibility; null when anonymous. */
  viewerId: string | null;
  /** Continue after this key (exclusive), or from the top. */
  after: SearchKey | null;
  /** Rows to fetch: the page size plus one. */
  limit: number;
  /**
   * Rank only the first this many matching posts and as many comments (as the GIN index hands them out), not every
   * match: the bounded second try of a search that ran out of time. Absent: every match is ranked.
   */
  candidates?: number;
}

/** A row of a search page; `snippet` is `ts_headline` output with U+0002 / U+0003 around the matches. */
export interface SearchRow {
  kind: HitKind;
  id: string;
  postId: string;
  rank: number;
  snippet: string;
}

/** Marks `ts_headline` puts around each match: control characters that stored text never holds (stripped below). */
export const START_SEL = '\u0002';
export const STOP_SEL = '\u0003';
const HEADLINE_OPTIONS = `StartSel="${START_SEL}", StopSel="${STOP_SEL}", MaxWords=40, MinWords=25, ShortWord=0`;

/** Tags of sanitized HTML that sit inside a line of text (see SANITIZE in content.service.ts). */
const INLINE_TAG = '</?(a|abbr|b|bdi|bdo|cite|code|data|del|dfn|em|i|ins|kbd|mark|q|s|samp|small|span|strike|strong|sub|sup|time|u|var)(\\s[^>]*)?>';

const uuids = (ids: readonly string[]) => sql`${sql.param([...ids])}::uuid[]`;

/**
 * The search statement: full text over published posts and live comments of the tribes in scope, with the post
 * visibility rules of content.service.ts (everyone: public; members: + members-only; moderators: all; the author: their
 * own), ranked by `ts_rank` descending, then kind, then id; keyset on (rank, kind, id), never OFFSET. The `@@` matches
 * use the GIN indexes `posts_search_idx` and `comments_search_idx` (migration 0008); the snippet (`ts_headline`, the
 * costly part) is computed for the page's rows only, from the HTML with its tags removed.
 */
export function searchSql(req: SearchRequest): SQL {
  const tsq = sql`websearch_to_tsquery('english', ${req.query})`;
  // Content removed by moderators never appears in search, for anyone (its author and moderators open it directly).
  const visible = sql`p.status = 'published' and p.removed_at is null and (
      p.visibility = 'public'
      or p.community_id = any(${uuids(req.moderatorOf)})
      or (p.visibility = 'members' and p.community_id = any(${uuids(req.memberOf)}))
      ${req.viewerId ? sql`or p.author_id = ${req.viewerId}::uuid` : sql``})`;
  const after = req.after ? sql`where (u.rank, u.kind, u.id) < (${req.after[0]}::float8, ${req.after[1]}::text, ${req.after[2]}::uuid)` : sql``;
  // The text of the hit's HTML: inline tags vanish ("<b>gar</b>den" reads "garden"), any other tag separates words.
  const body = sql`coalesce(case when h.kind = 'post'
      then (select body from posts where id = h.id)
      else (select body from comments where id = h.id) end, '')`;
  const cap = req.candidates ? sql`limit ${req.candidates}` : sql``;
  const text = sql`translate(regexp_replace(regexp_replace(${body}, ${INLINE_TAG}, '', 'gi'), '<[^>]*>', ' ', 'g'), chr(2) || chr(3), '')`;
  return sql`
    select h.kind, h.id, h.post_id as "postId", h.rank, ts_headline('english', ${text}, ${tsq}, ${HEADLINE_OPTIONS}) as snippet
    from (
      select u.kind, u.id, u.post_id, u.rank from (
        (select 'post'::text as kind, p.id, p.id as post_id, ts_rank(p.search, ${tsq})::float8 as rank
        from posts p
        where p.search @@ ${tsq} and p.community_id = any(${uuids(req.communityIds)}) and ${visible}
        ${cap})
        union all
        (select 'comment'::text as kind, c.id, c.post_id, ts_rank(c.search, ${tsq})::float8 as rank
        from comments c join posts p on p.id = c.post_id
        where c.search @@ ${tsq} and c.deleted_at is null and c.status = 'published' and c.removed_at is null and c.community_id = any(${uuids(req.communityIds)}) and ${visible}
        ${cap})
      ) u
      ${after}
      order by u.rank desc, u.kind desc, u.id desc
      limit ${req.limit}
    ) h
    order by h.rank desc, h.kind desc, h.id desc`;
}

/**
 * The search statement as text and positional parameters (`$1`, `$2`, ...), for running it outside the service
 * (the benchmark's EXPLAIN): `const { sql, params } = searchStatement(req); await pool.query(sql, params)`.
 */
export function searchStatement(req: SearchRequest): { sql: string; params: unknown[] } {
  return new PgDialect().sqlToQuery(searchSql(req));
}

/** Runs `req` under a statement timeout of `timeoutMs`, local to its own transaction. */
const runWithin = (db: Executor, req: SearchRequest, timeoutMs: number) =>
  db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`);
    return run(tx, req);
  });

/**
 * One page of hits (see `searchSql`), ranking every match within `budget.timeoutMs` (a statement timeout local to its
 * transaction); past it, the same page over at most `budget.candidates` matches of each kind, which is what a word found
 * in a large share of the posts gets, under a statement timeout of `budget.fallbackTimeoutMs`. Returns the rows and
 * whether they come from that bounded second try, or `{ timedOut: true }` when the second try ran out of time too.
 */
export async function search(
  db: Executor,
  req: SearchRequest,
  budget: { timeoutMs: number; candidates: number; fallbackTimeoutMs: number },
): Promise<{ rows: SearchRow[]; bounded: boolean; timedOut?: false } | { timedOut: true }> {
  if (req.communityIds.length === 0) return { rows: [], bounded: false };
  try {
    return { rows: await runWithin(db, req, budget.timeoutMs), bounded: false };
  } catch (error) {
    if (!isStatementTimeout(error)) throw error;
  }
  try {
    return { rows: await runWithin(db, { ...req, candidates: budget.candidates }, budget.fallbackTimeoutMs), bounded: true };
  } catch (error) {
    if (!isStatementTimeout(error)) throw error;
    return { timedOut: true };
  }
}

async function run(db: Executor, req: SearchRequest): Promise<SearchRow[]> {
  const result = (await db.execute(searchSql(req))) as unknown as { rows: Array<Record<string, unknown>> };
  return result.rows.map((r) => ({
    kind: r.kind === 'comment' ? 'comment' : 'post',
    id: String(r.id),
    postId: String(r.postId),
    rank: Number(r.rank),
    snippet: String(r.snippet ?? ''),
  }));
}

/** Comments by id (the comment hits of a page), tombstones included. */
export async function findCommentsByIds(db: Executor, ids: readonly string[]): Promise<Comment[]> {
  if (ids.length === 0) return [];
  return db.select().from(comments).where(inArray(comments.id, [...ids]));
}
