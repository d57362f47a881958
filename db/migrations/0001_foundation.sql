-- Identity
create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  username text not null,
  display_name text not null,
  avatar_url text,
  password_hash text,
  idp_subject text unique,
  created_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));
create unique index users_username_key on users (username);

create table sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  token_hash text not null unique,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index sessions_user_idx on sessions (user_id);

create table refresh_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  family_id uuid not null,
  token_hash text not null unique,
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index refresh_tokens_family_idx on refresh_tokens (family_id);

-- Communities (tribes)
create table communities (
  id uuid primary key default gen_random_uuid(),
  handle text not null,
  name text not null,
  description text not null default '',
  is_public boolean not null default true,
  category text,
  settings jsonb not null default '{}'::jsonb,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index communities_handle_key on communities (lower(handle));

create table community_invites (
  code text primary key,
  community_id uuid not null references communities (id) on delete cascade,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index community_invites_community_idx on community_invites (community_id);

-- Members
create table members (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'moderator', 'member')),
  xp integer not null default 0,
  level integer not null default 1,
  joined_at timestamptz not null default now(),
  unique (community_id, user_id)
);
create index members_community_joined_idx on members (community_id, joined_at desc, id desc);
create index members_user_idx on members (user_id);

-- Content
create table posts (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  author_id uuid references users (id) on delete set null,
  body text not null,
  media_urls text[] not null default '{}',
  visibility text not null default 'public' check (visibility in ('public', 'members', 'paid')),
  status text not null default 'published' check (status in ('published', 'draft')),
  pinned_at timestamptz,
  published_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index posts_community_created_idx on posts (community_id, created_at desc, id desc);
create index posts_community_author_idx on posts (community_id, author_id);

create table comments (
  id uuid primary key default gen_random_uuid(),
  post_id uuid not null references posts (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  author_id uuid references users (id) on delete set null,
  parent_id uuid references comments (id) on delete cascade,
  body text not null,
  created_at timestamptz not null default now()
);
create index comments_post_created_idx on comments (post_id, created_at, id);

-- Transactional outbox: rows written in the same transaction as the change they announce.
create table events (
  id uuid primary key default gen_random_uuid(),
  community_id uuid references communities (id) on delete cascade,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null default now(),
  processed_at timestamptz
);
create index events_unprocessed_idx on events (created_at) where processed_at is null;
create index events_community_idx on events (community_id, created_at);
