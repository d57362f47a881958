-- Tribe moderation (issue 13): reports and the moderation queue, the tribe audit log (engagement domain:
-- subgraphs/engagement/moderation.*), mutes and bans (members domain), content removed by moderators (content domain).

-- Mutes and bans of a user in a tribe (members domain). muted_until in the future: the member may read but not write.
-- banned_at set: the user was removed and may not join again (public join, invite code, sign-up with a code).
create table member_sanctions (
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  muted_until timestamptz,
  banned_at timestamptz,
  primary key (community_id, user_id)
);

-- Posts and comments removed by moderators (content domain): hidden from everyone but moderators and above and the
-- author, who sees that moderators removed it. restoreContent clears the three columns.
alter table posts add column removed_at timestamptz;
alter table posts add column removed_by uuid references users (id) on delete set null;
alter table posts add column removed_reason text;
alter table comments add column removed_at timestamptz;
alter table comments add column removed_by uuid references users (id) on delete set null;
alter table comments add column removed_reason text;

-- Reports (engagement domain). target_type names what target_id is: post, comment, user or message. One open report
-- per reporter per target (the partial unique index); resolving closes every open report of the target at once.
create table moderation_reports (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  reporter_id uuid references users (id) on delete set null,
  target_type text not null check (target_type in ('post', 'comment', 'user', 'message')),
  target_id uuid not null,
  -- The target's author (posts, comments, messages) or the user itself: who an action on the target reaches.
  subject_user_id uuid references users (id) on delete set null,
  reason text not null check (reason in ('spam', 'harassment', 'hate', 'nsfw', 'misinformation', 'other')),
  note text,
  created_at timestamptz not null default now(),
  resolved_at timestamptz,
  resolved_by uuid references users (id) on delete set null,
  resolution text
);
create unique index moderation_reports_open_once on moderation_reports (reporter_id, target_type, target_id) where resolved_at is null;
create index moderation_reports_queue_idx on moderation_reports (community_id, target_id);

-- The queue: one item per target. last_report_at orders the open queue (newest first), resolved_at the resolved one.
-- An item is (re)opened by a new report after it was resolved.
create table moderation_items (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  target_type text not null check (target_type in ('post', 'comment', 'user', 'message')),
  target_id uuid not null,
  subject_user_id uuid references users (id) on delete set null,
  -- A reported message's text at its first report (moderators are not participants and cannot read it otherwise).
  snapshot text,
  status text not null default 'open' check (status in ('open', 'resolved')),
  last_report_at timestamptz,
  resolved_at timestamptz,
  resolved_by uuid references users (id) on delete set null,
  action text,
  action_reason text,
  unique (community_id, target_id)
);
create index moderation_items_open_idx on moderation_items (community_id, status, last_report_at desc, id desc);
create index moderation_items_resolved_idx on moderation_items (community_id, status, resolved_at desc, id desc);

-- Warnings moderators gave (stored for the warned user; they read them with myModerationWarnings).
create table moderation_warnings (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null references communities (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  warned_by uuid references users (id) on delete set null,
  reason text,
  created_at timestamptz not null default now()
);
create index moderation_warnings_user_idx on moderation_warnings (user_id, community_id, created_at desc);

-- The tribe audit log: append-only. The trigger refuses every UPDATE and DELETE; a tribe's deletion keeps its log
-- (no foreign key to communities, so no cascade can delete rows either).
create table moderation_audit_log (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null,
  actor_id uuid,
  action text not null,
  target_type text not null,
  target_id uuid not null,
  reason text,
  duration_hours integer,
  created_at timestamptz not null default now()
);
create index moderation_audit_log_page_idx on moderation_audit_log (community_id, created_at desc, id desc);

create function moderation_audit_log_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'moderation_audit_log is append-only' using errcode = '42501';
end;
$$;
create trigger moderation_audit_log_no_change before update or delete on moderation_audit_log
  for each row execute function moderation_audit_log_append_only();
create trigger moderation_audit_log_no_truncate before truncate on moderation_audit_log
  for each statement execute function moderation_audit_log_append_only();
