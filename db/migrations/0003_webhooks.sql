-- Outbound webhooks: endpoints registered by a tribe's owner or admins, and one delivery per
-- (event, endpoint). Agenda's own tables are created by the code migration 0003_webhooks_agenda
-- (db/src/code-migrations.ts), from @agendajs/postgres-backend's SQL helpers.
create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  url text not null,
  events text[] not null,
  description text,
  enabled boolean not null default true,
  secret text not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_community_idx on webhook_endpoints (community_id, created_at);

create table webhook_deliveries (
  id uuid primary key,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  community_id uuid not null,
  -- The outbox row it came from; null for a test ping.
  event_id uuid,
  event text not null,
  -- The exact body sent on every attempt, serialised once at enqueue.
  payload text not null,
  status text not null default 'pending' check (status in ('pending', 'success', 'failed')),
  attempts integer not null default 0,
  response_status integer,
  response_time_ms integer,
  last_error text,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  -- A worker's claim on the current attempt: only the claimer records its outcome.
  claim_id uuid,
  claimed_until timestamptz,
  created_at timestamptz not null,
  unique (event_id, endpoint_id)
);
create index webhook_deliveries_endpoint_created_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
