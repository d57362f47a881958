import type { Executor } from '../../db/src/index.js';
import { type RequestContext, rateLimited } from '../kernel/index.js';
import * as repo from './posting-limit.repository.js';

/** The window of the posting rate limit: any 60 seconds. */
export const POSTING_WINDOW_SECONDS = 60;

/**
 * The per-user posting rate limit, the one check of every new post and comment: at most
 * `config.posting.perMinute` (`POSTING_RATE_LIMIT_PER_MINUTE`, default 30) created by the author in any 60 seconds,
 * across tribes. Counted in the database under a per-author lock inside the write's transaction, so it holds across
 * processes and concurrent requests; call it before writing anything. Past the limit: `rate_limited`
 * (`posting_rate_limited`, RATE_LIMITED on GraphQL, 429 on REST) with the seconds until one more fits.
 */
export async function requireUnderPostingLimit(ctx: RequestContext, tx: Executor, authorId: string, now: Date): Promise<void> {
  const max = ctx.app.config.posting.perMinute;
  await repo.lockAuthor(tx, authorId);
  const { count, oldest } = await repo.createdSince(tx, authorId, new Date(now.getTime() - POSTING_WINDOW_SECONDS * 1000));
  if (count < max) return;
  const freeAt = (oldest ?? now).getTime() + POSTING_WINDOW_SECONDS * 1000;
  const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
  throw rateLimited(
    'posting_rate_limited',
    `You posted ${max} posts and comments in the last minute: wait ${retryAfterSeconds} s before posting again.`,
    retryAfterSeconds,
  );
}
