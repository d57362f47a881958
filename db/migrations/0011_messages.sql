-- Direct messages and blocks (issue 12, engagement domain: subgraphs/engagement/messages.*).

-- A conversation of 2 to 20 users. A 1:1 conversation carries pair_key (the two user ids, sorted, joined by ':'):
-- its unique index makes startConversation race-safe (two concurrent starts of the same pair get the same row).
-- last_seq numbers the conversation's messages (updated under the row lock of each send); last_message_at is the
-- time of the latest message, else of the creation: it orders the conversations list.
create table conversations (
  id uuid primary key default gen_random_uuid(),
  pair_key text,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  last_seq bigint not null default 0,
  last_message_id uuid,
  last_message_at timestamptz not null default now()
);
create unique index conversations_pair_key on conversations (pair_key) where pair_key is not null;

-- Who is in a conversation: left_at set once they left (they no longer read it). last_read_seq: the seq of the
-- latest message they have read; messages of others after it, not deleted, are unread.
create table conversation_participants (
  conversation_id uuid not null references conversations (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  joined_at timestamptz not null default now(),
  left_at timestamptz,
  last_read_seq bigint not null default 0,
  primary key (conversation_id, user_id)
);
create index conversation_participants_user_idx on conversation_participants (user_id) where left_at is null;

-- Messages: plain text; a deleted message is a tombstone (body null, deleted_at set).
create table direct_messages (
  id uuid primary key default gen_random_uuid(),
  conversation_id uuid not null references conversations (id) on delete cascade,
  seq bigint not null,
  author_id uuid references users (id) on delete set null,
  body text,
  created_at timestamptz not null default now(),
  edited_at timestamptz,
  deleted_at timestamptz,
  check ((body is null) = (deleted_at is not null))
);
create unique index direct_messages_conversation_seq_key on direct_messages (conversation_id, seq);
-- The per-sender rate limit counts a sender's messages of the last hour on this index.
create index direct_messages_author_created_idx on direct_messages (author_id, created_at);

-- Blocks, by user and across tribes: blocked_id cannot start a conversation with, or message, blocker_id.
create table user_blocks (
  blocker_id uuid not null references users (id) on delete cascade,
  blocked_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (blocker_id, blocked_id),
  check (blocker_id <> blocked_id)
);
create index user_blocks_blocked_idx on user_blocks (blocked_id);
