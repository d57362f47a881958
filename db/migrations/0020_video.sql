-- Video lessons (issue 14, docs/media.md "Video lessons"): the transcoding state of an uploaded lesson_video, beside its
-- media row (migration 0019). The row is the work queue: the media.transcode job claims a 'processing' row whose lease
-- is free (locked_until null or past, FOR UPDATE SKIP LOCKED), renews the lease while ffmpeg runs, and ends the row
-- 'ready' (its HLS files stored as media_variants) or 'failed' with failure_reason. A worker killed mid-job leaves a
-- lease that lapses; the next run claims the row again (attempts counts the claims; too many ends it 'failed').
create table media_videos (
  media_id uuid primary key references media (id) on delete cascade,
  status text not null default 'processing' check (status in ('processing', 'ready', 'failed')),
  failure_reason text,
  duration_seconds double precision check (duration_seconds is null or duration_seconds > 0),
  width integer,
  height integer,
  -- [{name, width, height, playlist, bandwidth}], highest first, once ready.
  renditions jsonb not null default '[]'::jsonb,
  attempts integer not null default 0 check (attempts >= 0),
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz,
  check ((status = 'failed') = (failure_reason is not null))
);
create index media_videos_queue_idx on media_videos (created_at) where status = 'processing';

-- A lesson may show an uploaded video (a lesson_video media of the lesson's tribe).
alter table course_lessons add column video_media_id uuid references media (id) on delete set null;
create index course_lessons_video_idx on course_lessons (video_media_id) where video_media_id is not null;
