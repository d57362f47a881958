-- Issue 11/15: the first page of communityFeed lists a tribe's pinned posts before the feed. Without an index on
-- pinned_at, that statement stepped over every published post of the tribe (70,000 entries, 34 ms, in the largest
-- tribe of bench/seed-social.ts) to find the few pinned ones. This partial index holds only pinned published posts.
create index posts_feed_pinned_idx on posts (community_id, pinned_at desc, id desc)
  where status = 'published' and pinned_at is not null;
