-- Uploaded media (issue 14, media domain: subgraphs/media/). One row per upload, written only once every stored
-- variant is in the store: a refused, cut-off or failed upload leaves no row and no file.
--
-- kind: what the upload is for (avatar, post_image, lesson_video). owner_id: the uploader. community_id: the tribe
-- whose content it is (null for an avatar, and for a post image uploaded without a tribe); the files of media of a
-- private tribe are served to its members only (signed URLs, see docs/media.md). content_type and size_bytes describe
-- the original upload as sniffed from its bytes; width and height the stored image (images only).
-- status: 'ready' once the variants of this table are stored. The video lesson work (migration 0020) keeps its own
-- transcoding state beside this table.
create table media (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('avatar', 'post_image', 'lesson_video')),
  owner_id uuid references users (id) on delete set null,
  community_id uuid references communities (id) on delete cascade,
  content_type text not null,
  size_bytes bigint not null check (size_bytes > 0),
  width integer,
  height integer,
  status text not null default 'ready' check (status in ('processing', 'ready', 'failed')),
  failure_reason text,
  created_at timestamptz not null default now()
);
create index media_owner_idx on media (owner_id, created_at);
create index media_community_idx on media (community_id) where community_id is not null;

-- The stored files of a media, one per variant name: `original` (videos: the upload as sent), `image` (the re-encoded
-- WebP, at most 2,048 px) and `thumb` (320 px WebP). storage_key is the file's key in the media store, generated from
-- the media id (never from a client's file name). etag: the SHA-256 of the bytes (hex), the HTTP ETag.
create table media_variants (
  media_id uuid not null references media (id) on delete cascade,
  name text not null check (name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  storage_key text not null,
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  etag text not null,
  width integer,
  height integer,
  created_at timestamptz not null default now(),
  primary key (media_id, name)
);
