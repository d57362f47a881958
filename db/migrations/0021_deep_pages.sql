-- Issue 15 (scale): a deep page of a tribe's posts list (resource API, `page`/`per_page`, by offset) walks the
-- skipped rows of a covering index instead of the table. The list selects the ids of its page from this index alone
-- (an index-only scan: every column the list filters on is in it), then reads only those rows (a deferred join).
-- The members list needs no new index: members_community_joined_idx already holds (community_id, joined_at, id).
create index posts_community_published_created_idx on posts (community_id, created_at desc, id desc)
  include (visibility, removed_at, author_id, pinned_at)
  where status = 'published';
