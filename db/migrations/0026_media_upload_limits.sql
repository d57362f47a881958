-- Issue 29: upload limits (subgraphs/media/upload-limits.ts). One row per upload attempt that got past authorization
-- (accepted or refused afterwards for its content), kept for the rate window (MEDIA_UPLOADS_PER_MINUTE, any 60
-- seconds): the next upload of the same user counts its rows under a per-user advisory lock, inserts its own and drops
-- the user's rows older than the window, so every process counts the same attempts. The daily byte quota counts the
-- `media` rows themselves (size_bytes of the uploads written in the last 24 hours, index media_owner_idx).
create table media_upload_attempts (
  user_id uuid not null references users (id) on delete cascade,
  at timestamptz not null
);
create index media_upload_attempts_user_at_idx on media_upload_attempts (user_id, at);
