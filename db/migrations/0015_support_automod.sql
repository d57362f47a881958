-- Support tickets, the per-user posting rate limit and automod (issue 13).

-- Support tickets (engagement domain: subgraphs/engagement/support.*). A ticket belongs to the user who opened it;
-- platform staff read and answer every ticket. status: open → pending (waiting on the user) → resolved → closed;
-- the user's reply on a pending or resolved ticket opens it again.
create table support_tickets (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  community_id uuid references communities (id) on delete set null,
  category text not null check (category in ('account', 'billing', 'bug', 'abuse', 'other')),
  subject text not null,
  body text not null,
  status text not null default 'open' check (status in ('open', 'pending', 'resolved', 'closed')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index support_tickets_user_idx on support_tickets (user_id, created_at desc, id desc);
create index support_tickets_status_idx on support_tickets (status, created_at desc, id desc);
create index support_tickets_created_idx on support_tickets (created_at desc, id desc);

create table support_ticket_replies (
  id uuid primary key default gen_random_uuid(),
  ticket_id uuid not null references support_tickets (id) on delete cascade,
  author_id uuid references users (id) on delete set null,
  -- Written by platform staff (true) or by the ticket's owner (false).
  from_staff boolean not null,
  body text not null,
  created_at timestamptz not null default now()
);
create index support_ticket_replies_ticket_idx on support_ticket_replies (ticket_id, created_at, id);

-- The posting rate limit counts a user's posts and comments of the last minute, across tribes and processes.
create index posts_author_created_idx on posts (author_id, created_at);
create index comments_author_created_idx on comments (author_id, created_at);

-- Automod (content domain: subgraphs/content/automod.*). Per-tribe settings; a tribe without a row has the defaults.
create table community_moderation_settings (
  community_id uuid primary key references communities (id) on delete cascade,
  -- Lower-cased words and phrases; a post or comment containing one as a whole word is held for review.
  blocked_words text[] not null default '{}',
  -- Lower-cased host names; a link to one of them or a subdomain of one is held for review.
  blocked_domains text[] not null default '{}',
  -- Posts a plain member may publish in their first 24 hours in the tribe (0: none); staff roles are exempt.
  new_member_post_limit integer not null default 3 check (new_member_post_limit >= 0),
  -- Every post of a plain member is held for review.
  require_approval boolean not null default false,
  updated_by uuid references users (id) on delete set null,
  updated_at timestamptz not null default now()
);

-- Held content: visible to its author and the tribe's moderators and above until a moderator approves it.
alter table posts drop constraint posts_status_check;
alter table posts add constraint posts_status_check check (status in ('published', 'draft', 'pending_review'));
alter table posts add column held_reason text;
alter table comments add column status text not null default 'published' check (status in ('published', 'pending_review'));
alter table comments add column held_reason text;
create index posts_held_idx on posts (community_id, created_at desc, id desc) where status = 'pending_review';
create index comments_held_idx on comments (community_id, created_at desc, id desc) where status = 'pending_review';
