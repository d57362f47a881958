-- XP awards: one row per award, keyed by its source so a retried award is never counted twice.
create table xp_awards (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  amount integer not null check (amount > 0),
  source text not null,
  source_key text not null unique,
  created_at timestamptz not null default now()
);
create index xp_awards_member_idx on xp_awards (community_id, user_id, created_at desc);
