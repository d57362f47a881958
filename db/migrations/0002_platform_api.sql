-- Platform API: API keys of tribes, and the tribe calendar events and orders it reads.

-- API keys (spec 2.3). Only the SHA-256 of the key and its first 17 characters are stored.
create table api_keys (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 60),
  key_prefix text not null check (char_length(key_prefix) = 17),
  key_hash text not null check (key_hash ~ '^[0-9a-f]{64}$'),
  scopes text[] not null check (cardinality(scopes) > 0),
  created_by uuid references users (id) on delete set null,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index api_keys_key_hash_key on api_keys (key_hash);
create index api_keys_community_idx on api_keys (community_id, created_at desc, id desc);

-- Tribe calendar events (the table name `events` is the transactional outbox).
create table tribe_events (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  title text not null,
  description text not null default '',
  event_type text not null default 'online' check (event_type in ('online', 'in_person')),
  location text,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  max_attendees integer check (max_attendees is null or max_attendees > 0),
  price_cents integer not null default 0 check (price_cents >= 0),
  currency text not null default 'BRL' check (currency ~ '^[A-Z]{3}$'),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (ends_at >= starts_at)
);
create index tribe_events_community_starts_idx on tribe_events (community_id, starts_at desc, id desc);

-- Orders: money in integer cents with an ISO 4217 currency.
create table orders (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  buyer_id uuid references users (id) on delete set null,
  product_type text not null,
  product_id uuid,
  amount_cents integer not null check (amount_cents >= 0),
  currency text not null default 'BRL' check (currency ~ '^[A-Z]{3}$'),
  status text not null default 'pending' check (status in ('pending', 'paid', 'failed', 'refunded')),
  paid_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index orders_community_created_idx on orders (community_id, created_at desc, id desc);
create index orders_buyer_idx on orders (buyer_id);

-- Platform posts: published public posts by publication date.
create index posts_community_public_published_idx on posts (community_id, (coalesce(published_at, created_at)) desc, id desc)
  where status = 'published' and visibility = 'public';
