-- In-app notifications (issue 12): the notifications themselves, per-kind preferences per channel, muted tribes,
-- tribe-wide fan-outs in progress, and the outbox's own consumption marker for notifications.

-- The outbox: notifications consume events independently of the webhook fan-out (which sets processed_at).
-- Events recorded before notifications existed are not announced now.
alter table outbox_events add column notified_at timestamptz;
update outbox_events set notified_at = coalesce(processed_at, now());
create index outbox_events_unnotified_idx on outbox_events (created_at, id) where notified_at is null;

-- Event reminders look for events by start time.
create index tribe_events_starts_idx on tribe_events (starts_at);

-- One notification per recipient. The subject columns reference their rows: a deleted post, comment, event, win or
-- course takes its notifications with it. `aggregate_key` groups updates of one notification (reactions on one target
-- within an hour); `dedupe_key` makes a fan-out that runs again insert nothing twice. Ordered by `updated_at`: an
-- aggregated notification that is updated moves to the top.
create table notifications (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  kind text not null check (kind in ('reply', 'mention', 'reaction', 'event_created', 'event_reminder', 'role_changed',
    'win_approved', 'course_completed', 'message')),
  community_id uuid references communities (id) on delete cascade,
  actor_ids uuid[] not null default '{}',
  actor_count integer not null default 0,
  post_id uuid references posts (id) on delete cascade,
  comment_id uuid references comments (id) on delete cascade,
  event_id uuid references tribe_events (id) on delete cascade,
  win_id uuid references wins (id) on delete cascade,
  course_id uuid references courses (id) on delete cascade,
  conversation_id uuid,
  data jsonb not null default '{}',
  aggregate_key text,
  dedupe_key text,
  read_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index notifications_user_updated_idx on notifications (user_id, updated_at desc, id desc);
create index notifications_user_unread_idx on notifications (user_id, updated_at desc, id desc) where read_at is null;
create index notifications_aggregate_idx on notifications (user_id, aggregate_key, created_at desc) where aggregate_key is not null;
create unique index notifications_dedupe_key on notifications (user_id, dedupe_key) where dedupe_key is not null;
create index notifications_post_idx on notifications (post_id) where post_id is not null;
create index notifications_comment_idx on notifications (comment_id) where comment_id is not null;
create index notifications_event_idx on notifications (event_id) where event_id is not null;
create index notifications_win_idx on notifications (win_id) where win_id is not null;
create index notifications_course_idx on notifications (course_id) where course_id is not null;

-- A row only where the user changed a default (the defaults live in code: notifications.tables.ts).
create table notification_preferences (
  user_id uuid not null references users (id) on delete cascade,
  kind text not null,
  channel text not null check (channel in ('in_app', 'email')),
  enabled boolean not null,
  updated_at timestamptz not null default now(),
  primary key (user_id, kind, channel)
);

-- Tribes a user hears nothing from.
create table notification_mutes (
  user_id uuid not null references users (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (user_id, community_id)
);

-- A notification to a whole audience (a tribe's members, an event's registrants), written chunk by chunk: `after_user_id`
-- is the keyset position of the last chunk written, `done_at` is set after the last one.
create table notification_fanouts (
  id uuid primary key default gen_random_uuid(),
  audience text not null check (audience in ('tribe', 'event_registrants')),
  kind text not null,
  community_id uuid not null references communities (id) on delete cascade,
  actor_id uuid,
  event_id uuid references tribe_events (id) on delete cascade,
  dedupe_key text not null unique,
  data jsonb not null default '{}',
  after_user_id uuid,
  created_at timestamptz not null default now(),
  done_at timestamptz
);
create index notification_fanouts_pending_idx on notification_fanouts (created_at) where done_at is null;
