-- Event registrations (tickets) and the payment-provider events already processed (issue 5).

-- A registration holds a seat of a tribe event. A free event's registration is confirmed at once; a paid
-- event's exists only once its order is paid (confirmed, or refund_required when the last seat was taken
-- while the buyer was paying). The ticket code is 16 random bytes in base64url, unique.
create table event_registrations (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null references tribe_events (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  status text not null default 'confirmed' check (status in ('confirmed', 'refund_required')),
  ticket_code text not null check (ticket_code ~ '^[A-Za-z0-9_-]{22}$'),
  order_id uuid references orders (id) on delete set null,
  checked_in_at timestamptz,
  checked_in_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  unique (event_id, user_id)
);
create unique index event_registrations_ticket_code_key on event_registrations (ticket_code);
create index event_registrations_event_status_idx on event_registrations (event_id, status);
create index event_registrations_user_idx on event_registrations (user_id);

-- Inbound payment-provider events that changed (or were found not to change) an order: a replay of the same
-- provider event id is recognised whatever order it names.
create table payment_provider_events (
  provider text not null check (provider ~ '^[a-z0-9_]{1,32}$'),
  event_id text not null check (char_length(event_id) between 1 and 255),
  event_type text not null check (char_length(event_type) between 1 and 255),
  order_id uuid references orders (id) on delete set null,
  received_at timestamptz not null default now(),
  primary key (provider, event_id)
);
create index payment_provider_events_order_idx on payment_provider_events (order_id);
