import { createHash } from 'node:crypto';
import { decodeHTML } from 'entities';
import { getCommunity } from '../communities/index.js';
import {
  type Connection,
  type CursorKey,
  type RequestContext,
  describeTextProblem,
  idLoader,
  invalid,
  isUuid,
  pageRequest,
  textProblem,
  toConnection,
  unauthorized,
} from '../kernel/index.js';
import { RANK, requireView, viewerTribes, type Role } from '../members/index.js';
import { postById } from './content.service.js';
import type { Comment, Post } from './content.tables.js';
import * as repo from './search.repository.js';
import { START_SEL, STOP_SEL, type SearchKey, type SearchRequest } from './search.repository.js';

/**
 * The most characters (code points) of a search query that reach SQL; the rest is cut off, not refused. 500 code
 * points are at most 2,000 UTF-8 bytes, under PostgreSQL's 2,047-byte limit for one word of a tsquery, so no text
 * can make `websearch_to_tsquery` fail.
 */
export const MAX_QUERY_CHARS = 500;

/**
 * A search whose bounded second try also outran its statement timeout: `BAD_USER_INPUT`, reason
 * `search_too_expensive`, a field error (the other fields of the document keep their data; HTTP 200), logged as a
 * warning. Rarer words rank fewer matches; the same search may pass later, when the database is less busy.
 */
const searchTooExpensive = () =>
  invalid('search_too_expensive', 'Search took too long and was stopped: search for rarer words, or retry later.', [
    { field: 'query', message: 'took too long to search' },
  ]);

/** A search result as GraphQL's `SearchHit` resolves it. */
export interface SearchHit {
  post: Post;
  /** Null when the hit is the post itself. */
  comment: Comment | null;
  /** Escaped text whose only markup is `<mark>…</mark>` around the matched words. */
  snippet: string;
  rank: number;
}

/** The query as searched: white space collapsed and trimmed, then cut to `MAX_QUERY_CHARS` code points. */
export function normaliseQuery(query: string): string {
  const collapsed = query.replace(/\s+/gu, ' ').trim();
  if (collapsed.length <= MAX_QUERY_CHARS) return collapsed;
  // Cut by code points (an emoji stays whole; no lone surrogate reaches SQL).
  return Array.from(collapsed).slice(0, MAX_QUERY_CHARS).join('').trim();
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
// Control characters a decoded entity could yield (`&#2;`): never part of a snippet, and never taken for a mark.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/**
 * Turns `ts_headline` output into the snippet the web app renders as HTML: the stored text is sanitized HTML with its
 * tags removed, so its entities are decoded first (`&amp;` is one `&`), then everything is HTML-escaped, and only then
 * do the `START_SEL`/`STOP_SEL` marks become `<mark>`/`</mark>`, always balanced: no other markup survives.
 */
export function renderSnippet(headline: string): string {
  let out = '';
  let open = false;
  for (const part of headline.split(/([\u0002\u0003])/u)) {
    if (part === START_SEL) {
      if (!open) out += '<mark>';
      open = true;
    } else if (part === STOP_SEL) {
      if (open) out += '</mark>';
      open = false;
    } else {
      out += escapeHtml(decodeHTML(part).replace(CONTROLS, ''));
    }
  }
  if (open) out += '</mark>';
  return out.replace(/\s+/gu, ' ').trim();
}

/** `[rank, kind, uuid]`: the keyset of a search list. */
const isSearchKey = (key: CursorKey): key is SearchKey =>
  key.length === 3 &&
  typeof key[0] === 'number' &&
  Number.isFinite(key[0]) &&
  (key[1] === 'post' || key[1] === 'comment') &&
  isUuid(key[2]);

const commentLoader = (ctx: RequestContext) =>
  idLoader<Comment>(ctx, 'content.search.commentById', (ids) => repo.findCommentsByIds(ctx.app.database.db, ids));

/** The tribes searched and what the viewer sees in each (see `SearchRequest`). */
type Scope = Pick<SearchRequest, 'communityIds' | 'memberOf' | 'moderatorOf'>;

function scopeOf(tribes: Array<{ communityId: string; role: Role | null }>): Scope {
  return {
    communityIds: tribes.map((t) => t.communityId),
    memberOf: tribes.filter((t) => t.role).map((t) => t.communityId),
    moderatorOf: tribes.filter((t) => t.role && RANK[t.role] >= RANK.moderator).map((t) => t.communityId),
  };
}

/**
 * Full-text search over the posts and comments the viewer may see. With `communityId`: that tribe (a public tribe's
 * public posts for anyone, anonymous included; a private tribe's for its members only: `requireView`). Without: every
 * tribe the viewer belongs to (signed in only). Post visibility as everywhere in content (members: public and
 * members-only; moderators and above: all; the author: their own), published posts only, live comments of visible
 * posts only. Any text is a valid query; one with no searchable word gives an empty list.
 */
export async function search(
  ctx: RequestContext,
  args: { query: string; communityId?: string | null; first?: number | null; after?: string | null },
): Promise<Connection<SearchHit>> {
  let scope: Scope;
  let scopeName = 'all';
  if (args.communityId !== null && args.communityId !== undefined) {
    const community = await getCommunity(ctx, args.communityId);
    const role = await requireView(ctx, community);
    scope = scopeOf([{ communityId: community.id, role }]);
    scopeName = community.id;
  } else {
    if (!ctx.caller) throw unauthorized('Sign in to search your tribes, or name a public tribe with communityId.');
    scope = scopeOf(await viewerTribes(ctx));
  }
  if (typeof args.query !== 'string') throw invalid('invalid_input', 'query: must be a string.', [{ field: 'query', message: 'must be a string' }]);
  const problem = textProblem(args.query);
  if (problem) throw invalid('invalid_text', `query: ${describeTextProblem(problem)}`, [{ field: 'query', message: describeTextProblem(problem) }]);
  const query = normaliseQuery(args.query);
  const digest = createHash('sha256').update(query).digest('base64url');
  const list = `search:${ctx.caller?.userId ?? 'anon'}:${scopeName}:${digest}`;
  const page = pageRequest(ctx, list, args, isSearchKey);
  const { timeoutMs, fallbackCandidates, fallbackTimeoutMs } = ctx.app.config.search;
  const found = query
    ? await repo.search(
        ctx.app.database.db,
        { query, ...scope, viewerId: ctx.caller?.userId ?? null, after: page.after, limit: page.limit + 1 },
        { timeoutMs, candidates: fallbackCandidates, fallbackTimeoutMs },
      )
    : { rows: [], bounded: false };
  if (found.timedOut) {
    ctx.app.log.warn({ requestId: ctx.requestId, timeoutMs, fallbackTimeoutMs, candidates: fallbackCandidates }, 'search ran out of time twice');
    throw searchTooExpensive();
  }
  const { rows, bounded } = found;
  if (bounded) ctx.app.log.warn({ requestId: ctx.requestId, timeoutMs, candidates: fallbackCandidates }, 'search ranked a bounded share of its matches');
  const connection = toConnection(ctx, list, rows, page.limit, (r): SearchKey => [r.rank, r.kind, r.id]);
  const edges = await Promise.all(
    connection.edges.map(async ({ node: row, cursor }) => {
      const [post, comment] = await Promise.all([postById(ctx, row.postId), row.kind === 'comment' ? commentLoader(ctx).load(row.id) : null]);
      // Deleted between the search and this read: no longer a hit.
      if (!post || (row.kind === 'comment' && !comment)) return null;
      return { node: { post, comment, snippet: renderSnippet(row.snippet), rank: row.rank }, cursor };
    }),
  );
  return { edges: edges.filter((e) => e !== null), pageInfo: connection.pageInfo };
}
