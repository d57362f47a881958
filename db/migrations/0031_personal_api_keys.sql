-- Issue 31: personal API keys of the resource API (spec 5.3): a user's own keys, carrying that user's permissions on
-- the resource API only (subgraphs/identity/personal-keys.service.ts). The key itself is never stored: only its
-- SHA-256 and its first 17 characters (svc_pk_ and the next 10), by which a presented key is looked up before its
-- hash is compared in constant time. A deleted user's keys go with the user.
create table personal_api_keys (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  name text not null,
  key_prefix text not null,
  key_hash text not null,
  scopes text[] not null,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index personal_api_keys_prefix_idx on personal_api_keys (key_prefix) where revoked_at is null;
create index personal_api_keys_user_idx on personal_api_keys (user_id, created_at desc);
