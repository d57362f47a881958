-- Platform administration (issue 13): platform staff, user and tribe suspension, featured tribes, the platform audit log.

-- Suspension of a user (identity owns users): while suspended_at is set and suspended_until is null or still ahead,
-- the user's sessions, `__session` tokens, access tokens and refresh tokens are refused and sign-in answers
-- `account_suspended`. A suspension with an `until` ends by itself when the clock passes it.
alter table users
  add column suspended_at timestamptz,
  add column suspended_until timestamptz,
  add column suspension_reason text;

-- Suspension and featuring of a tribe (the tribe record lives in `communities`): a suspended tribe is read-only for
-- everyone and its Platform API keys answer 403; featured tribes come first in discover.
alter table communities
  add column suspended_at timestamptz,
  add column suspension_reason text,
  add column featured_at timestamptz;

-- Platform staff (subgraphs/platform/): a role outside tribe roles. Granted from PLATFORM_ADMIN_EMAILS at start-up and
-- by `npm run admin -- grant <email>`; `granted_by` says which (`config`, `script`).
create table platform_staff (
  user_id uuid primary key references users (id) on delete cascade,
  granted_by text not null,
  granted_at timestamptz not null default now()
);

-- What platform staff did, append-only: nothing updates or deletes a row (the trigger refuses it).
create table platform_audit_log (
  id uuid primary key default gen_random_uuid(),
  -- The staff member; null for actions of the operator's script (`npm run admin`).
  actor_id uuid,
  action text not null,
  target_type text not null check (target_type in ('user', 'community')),
  target_id uuid not null,
  reason text,
  -- Action details (e.g. `until` of a suspension, `featured`).
  details jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
create index platform_audit_log_page_idx on platform_audit_log (created_at desc, id desc);

create function platform_audit_log_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'platform_audit_log is append-only';
end
$$;
create trigger platform_audit_log_append_only before update or delete on platform_audit_log
  for each row execute function platform_audit_log_append_only();

-- Set-based platform statistics read these by time.
create index if not exists users_created_at_idx on users (created_at);
create index if not exists members_last_active_idx on members (last_active_at, user_id);
create index if not exists posts_created_at_idx on posts (created_at);
