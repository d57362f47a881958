export {
  getPost,
  listPosts,
  createPost,
  updatePost,
  deletePost,
  sanitizeContent,
  postById,
} from './content.service.js';
export { listComments, createComment, updateComment, deleteComment } from './comments.service.js';
export type { Comment, Post } from './content.service.js';
// Feeds and reactions; the home feed's statement itself for running it outside the service (benchmark, EXPLAIN).
export { homeFeed, communityFeed } from './feed.service.js';
export { homeFeedQuery, homeFeed as homeFeedRows, communityFeed as communityFeedRows } from './feed.repository.js';
export type { CommunityFeedArgs, FeedRow, FeedSort, FeedTribe, HomeFeedArgs } from './feed.repository.js';
export { react, unreact, reactionsOf, REACTION_KINDS } from './reactions.service.js';
export type { ReactionKind, Reactions } from './reactions.service.js';
// Search: the service, and the statement itself for running it outside the service (the benchmark's EXPLAIN).
export { search, normaliseQuery, renderSnippet, MAX_QUERY_CHARS } from './search.service.js';
export type { SearchHit } from './search.service.js';
export { searchSql, searchStatement } from './search.repository.js';
export type { SearchKey, SearchRequest, SearchRow } from './search.repository.js';
// Automod: held posts and comments enter the moderation queue through `AppDeps.heldContentQueue` (wired in
// server/deps.ts); the queue's own actions decide a held item with `decideHeld` (publish or delete).
export { decideHeld } from './automod.service.js';
export type { HeldContentQueue, HeldReason, HeldTarget } from './automod.service.js';
// Platform statistics (platform-admin's platformStats): one set-based statement per figure.
export { postsPerDay } from './stats.repository.js';
// Moderation (engagement's moderation area): removal by moderators and the current content of a reported target.
export { contentForModeration, removeContent, restoreContent } from './removal.service.js';
export type { ContentKind, ModeratedContent } from './removal.service.js';
