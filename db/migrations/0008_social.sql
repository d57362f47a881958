-- The web app's social core (issue 11): profiles, my tribes by activity, feeds, reactions, mentions, comment
-- tombstones and full-text search.

-- Profiles
alter table users add column bio text not null default '';
alter table users add column location text;
alter table users add column links text[] not null default '{}';

-- My tribes, most recently active first: the member's last post, comment, reaction or join in the tribe.
alter table members add column last_active_at timestamptz;
update members set last_active_at = joined_at;
alter table members alter column last_active_at set not null;
alter table members alter column last_active_at set default now();
create index members_user_active_idx on members (user_id, last_active_at desc, id desc);

-- Feeds. Counters are kept in the transaction that changes them. hot_score orders TOP:
--   log10(1 + reactions + 2 × comments) + epoch(published_at) / 45000
-- (time decay without "now": ten times the engagement is worth 12.5 hours of recency, so the order of two posts never
-- changes by itself and a keyset cursor over it stays valid). active_at orders ACTIVE: the latest comment, else the
-- publication.
alter table posts add column reaction_count integer not null default 0;
alter table posts add column comment_count integer not null default 0;
alter table posts add column hot_score double precision not null default 0;
alter table posts add column active_at timestamptz;
update posts set hot_score = extract(epoch from published_at)::double precision / 45000, active_at = published_at
  where published_at is not null;
create index posts_feed_new_idx on posts (community_id, published_at desc, id desc) where status = 'published';
create index posts_feed_top_idx on posts (community_id, hot_score desc, id desc) where status = 'published';
create index posts_feed_active_idx on posts (community_id, active_at desc, id desc) where status = 'published';

-- Comments: edits, tombstones (a deleted comment with replies keeps its place, body null) and reaction counts.
alter table comments alter column body drop not null;
alter table comments add column updated_at timestamptz;
alter table comments add column deleted_at timestamptz;
alter table comments add column reaction_count integer not null default 0;
create index comments_parent_idx on comments (parent_id) where parent_id is not null;

-- Reactions: one per user per target; the kinds are the GraphQL enum ReactionKind.
create table reactions (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  post_id uuid references posts (id) on delete cascade,
  comment_id uuid references comments (id) on delete cascade,
  kind text not null check (kind in ('LIKE', 'LOVE', 'LAUGH', 'CELEBRATE', 'INSIGHTFUL', 'CURIOUS')),
  created_at timestamptz not null default now(),
  check ((post_id is null) <> (comment_id is null))
);
create unique index reactions_post_user_key on reactions (post_id, user_id) where post_id is not null;
create unique index reactions_comment_user_key on reactions (comment_id, user_id) where comment_id is not null;
create index reactions_post_kind_idx on reactions (post_id, kind) where post_id is not null;
create index reactions_comment_kind_idx on reactions (comment_id, kind) where comment_id is not null;

-- Mentions, resolved once at write time: members of the tribe named as @username.
create table mentions (
  community_id uuid not null references communities (id) on delete cascade,
  post_id uuid references posts (id) on delete cascade,
  comment_id uuid references comments (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  check ((post_id is null) <> (comment_id is null))
);
create unique index mentions_post_user_key on mentions (post_id, user_id) where post_id is not null;
create unique index mentions_comment_user_key on mentions (comment_id, user_id) where comment_id is not null;

-- Full-text search over the text of posts and comments (HTML tags removed), English stemming.
alter table posts add column search tsvector
  generated always as (to_tsvector('english', regexp_replace(body, '<[^>]*>', ' ', 'g'))) stored;
create index posts_search_idx on posts using gin (search);
alter table comments add column search tsvector
  generated always as (to_tsvector('english', regexp_replace(coalesce(body, ''), '<[^>]*>', ' ', 'g'))) stored;
create index comments_search_idx on comments using gin (search);
