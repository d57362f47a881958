import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { transcodePending, transcodeRuntime, type TranscodeResult } from '../subgraphs/media/index.js';
import { accessToken, type Cast, crew, staffedTribe, unique } from './factory.js';
import { failure, gql, ok, sqlRows, startService, waitFor, type TestService } from './support.js';

/**
 * Video lessons (docs/media.md, "Video lessons"): uploads of lesson_video over HTTP, the media.transcode job run in
 * the test (`transcodePending`, what the Agenda job runs), Lesson.video over GraphQL, and the HLS files over
 * GET /media/{id}/{variant}. The videos are made here with ffmpeg's test source.
 */

let t: TestService;
let dir: string;
let work: string;
let pub: Cast & { tribe: { id: string; handle: string } };
let priv: Cast & { tribe: { id: string; handle: string } };
const files: Record<'hd' | 'small' | 'broken', string> = { hd: '', small: '', broken: '' };

/** ffmpeg's test source (and a tone) into `file`, H.264/AAC in MP4. */
function makeVideo(file: string, size: string, seconds: number, audio: boolean): void {
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=duration=${seconds}:size=${size}:rate=25`];
  if (audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (audio) args.push('-c:a', 'aac', '-shortest');
  args.push('-movflags', '+faststart', file);
  execFileSync('ffmpeg', args);
}

const runtime = () => transcodeRuntime(t.deps);
/** One run of the media.transcode job, as the worker runs it. */
const runJob = (options: Parameters<typeof transcodePending>[2] = {}): Promise<TranscodeResult> => transcodePending(t.deps, runtime(), options);

const upload = (who: { cookie: string }, communityId: string, file: string, kind = 'lesson_video') =>
  t.api.post('/media').set('cookie', who.cookie).field('kind', kind).field('communityId', communityId).attach('file', file, { filename: 'lesson.mp4', contentType: 'video/mp4' });

const fetchBytes = (url: string, headers: Record<string, string> = {}) => {
  let req = t.api.get(url).buffer(true).parse((res, done) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => done(null, Buffer.concat(parts)));
  });
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req;
};

/** The URI lines of a playlist. */
const urisOf = (playlist: string) => playlist.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
/** A playlist URI resolved as a player does: beside the playlist's own URL (its query dropped). */
const resolve = (uri: string, base: string) => {
  const u = new URL(uri, `http://x${base}`);
  return u.pathname + u.search;
};

const LESSON_VIDEO = 'video { mediaId status hlsUrl posterUrl durationSeconds failureReason }';

async function courseOf(s: typeof pub): Promise<{ courseId: string; moduleId: string }> {
  const course = ok(await gql(t, s.moderator, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', { c: s.tribe.id, i: { title: `Video ${unique()}`, accessType: 'free' } }));
  const courseId = course.createCourse.id as string;
  const mod = ok(await gql(t, s.moderator, 'mutation($c: ID!, $i: CreateCourseModuleInput!){ addCourseModule(courseId: $c, input: $i){ id } }', { c: courseId, i: { title: 'Week 1' } }));
  return { courseId, moduleId: mod.addCourseModule.id as string };
}

const addLesson = (s: typeof pub, where: { courseId: string; moduleId: string }, input: Record<string, unknown>, who = s.moderator) =>
  gql(t, who, `mutation($c: ID!, $m: ID!, $i: CreateLessonInput!){ addLesson(courseId: $c, moduleId: $m, input: $i){ id title ${LESSON_VIDEO} } }`, { c: where.courseId, m: where.moduleId, i: { title: 'Lesson', ...input } });

async function lessonVideo(who: { cookie: string } | null, courseId: string, lessonId: string) {
  const out = ok(await gql(t, who, `query($c: ID!){ course(id: $c){ modules { lessons { id ${LESSON_VIDEO} } } } }`, { c: courseId }));
  const lessons = (out.course.modules as Array<{ lessons: Array<{ id: string; video: Record<string, any> | null }> }>).flatMap((m) => m.lessons);
  return lessons.find((l) => l.id === lessonId)!.video;
}

/** Uploads `file` and puts it on a new lesson of a new course of `s`: ids for the test. */
async function videoLesson(s: typeof pub, file: string) {
  const res = await upload(s.moderator, s.tribe.id, file);
  expect(res.status).toBe(201);
  const where = await courseOf(s);
  const lesson = ok(await addLesson(s, where, { videoMediaId: res.body.id }));
  return { mediaId: res.body.id as string, ...where, lessonId: lesson.addLesson.id as string, created: lesson.addLesson };
}

/** Runs the job until the lesson's video leaves PROCESSING (a short poll; each run transcodes what is queued). */
async function transcodeUntilDone(who: { cookie: string }, courseId: string, lessonId: string) {
  let video: Record<string, any> | null = null;
  await waitFor(async () => {
    await runJob();
    video = await lessonVideo(who, courseId, lessonId);
    return video?.status !== 'PROCESSING';
  }, 60_000, 'the video to leave PROCESSING');
  return video!;
}

const videoRow = async (mediaId: string) =>
  (await sqlRows<{ status: string; failure_reason: string | null; attempts: number; locked_by: string | null; locked_until: Date | null }>(
    t,
    sql`select status, failure_reason, attempts, locked_by, locked_until from media_videos where media_id = ${mediaId}::uuid`,
  ))[0];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-video-'));
  work = await mkdtemp(path.join(tmpdir(), 'svc-video-src-'));
  files.hd = path.join(work, 'hd.mp4');
  files.small = path.join(work, 'small.mp4');
  files.broken = path.join(work, 'broken.mp4');
  makeVideo(files.hd, '1280x720', 3, true);
  makeVideo(files.small, '320x240', 2, false);
  // The bytes of an MP4 header (so the upload's sniffing takes it for a video), then garbage.
  writeFileSync(files.broken, Buffer.concat([readFileSync(files.hd).subarray(0, 48), Buffer.alloc(60_000, 0x5a)]));
  t = await startService({
    MEDIA_DIR: dir,
    MEDIA_URL_TTL_SECONDS: '600',
    VIDEO_X264_PRESET: 'ultrafast',
    VIDEO_HLS_SEGMENT_SECONDS: '1',
    VIDEO_TRANSCODE_LEASE_MS: '3000',
  });
  pub = await staffedTribe(t, await crew(t), { isPublic: true });
  priv = await staffedTribe(t, await crew(t), { isPublic: false });
  // Other test files' queued videos (a shared test database) are not this file's to transcode.
  await sqlRows(t, sql`delete from media_videos where status = 'processing'`);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('video lessons', () => {
  it('a 3-second 720p upload becomes READY: Lesson.video gives the master playlist, 720p and 360p rendition playlists, segments with ranges, a poster and the duration', async () => {
    const v = await videoLesson(pub, files.hd);
    expect(v.created.video).toEqual({ mediaId: v.mediaId, status: 'PROCESSING', hlsUrl: null, posterUrl: null, durationSeconds: null, failureReason: null });

    const video = await transcodeUntilDone(pub.member, v.courseId, v.lessonId);
    expect(video).toMatchObject({ mediaId: v.mediaId, status: 'READY', hlsUrl: `/media/${v.mediaId}/hls.m3u8`, posterUrl: `/media/${v.mediaId}/poster.jpg`, failureReason: null });
    expect(video.durationSeconds).toBeGreaterThan(2.9);
    expect(video.durationSeconds).toBeLessThan(3.2);

    const master = await fetchBytes(video.hlsUrl);
    expect(master.status).toBe(200);
    expect(master.headers['content-type']).toMatch(/^application\/vnd\.apple\.mpegurl/);
    expect(master.headers.etag).toBeDefined();
    const masterText = (master.body as Buffer).toString('utf8');
    expect(masterText.startsWith('#EXTM3U')).toBe(true);
    expect(urisOf(masterText)).toEqual(['hls-720p.m3u8', 'hls-360p.m3u8']);
    expect(masterText).toContain('RESOLUTION=1280x720');
    expect(masterText).toContain('RESOLUTION=640x360');

    const renditionUrl = resolve('hls-360p.m3u8', video.hlsUrl);
    const rendition = await fetchBytes(renditionUrl);
    expect(rendition.status).toBe(200);
    const segments = urisOf((rendition.body as Buffer).toString('utf8'));
    expect(segments.length).toBeGreaterThanOrEqual(3);
    const segmentUrl = resolve(segments[0], renditionUrl);
    const segment = await fetchBytes(segmentUrl);
    expect(segment.status).toBe(200);
    expect(segment.headers['content-type']).toBe('video/mp2t');
    expect((segment.body as Buffer)[0]).toBe(0x47); // an MPEG-TS sync byte
    const part = await fetchBytes(segmentUrl, { range: 'bytes=188-375' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 188-375/${(segment.body as Buffer).length}`);
    expect((part.body as Buffer)[0]).toBe(0x47);
    const poster = await fetchBytes(video.posterUrl);
    expect(poster.status).toBe(200);
    expect(poster.headers['content-type']).toBe('image/jpeg');
    expect([...(poster.body as Buffer).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);

    // The files are the media's variants; ffmpeg's scratch folder under MEDIA_DIR is gone.
    const names = (await sqlRows<{ name: string }>(t, sql`select name from media_variants where media_id = ${v.mediaId}::uuid order by name`)).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['original', 'hls.m3u8', 'hls-720p.m3u8', 'hls-360p.m3u8', 'poster.jpg', 'hls-720p-000.ts', 'hls-360p-000.ts']));
    expect(existsSync(path.join(dir, '.work', v.mediaId))).toBe(false);
    expect(await videoRow(v.mediaId)).toMatchObject({ status: 'ready', attempts: 1, locked_by: null, locked_until: null });
  }, 90_000);

  it('a 320x240 source yields one rendition only, at its own height', async () => {
    const v = await videoLesson(pub, files.small);
    const video = await transcodeUntilDone(pub.moderator, v.courseId, v.lessonId);
    expect(video.status).toBe('READY');
    const master = (await fetchBytes(video.hlsUrl)).body as Buffer;
    expect(urisOf(master.toString('utf8'))).toEqual(['hls-240p.m3u8']);
    expect(master.toString('utf8')).toContain('RESOLUTION=320x240');
    expect((await fetchBytes(resolve('hls-240p.m3u8', video.hlsUrl))).status).toBe(200);
  }, 60_000);

  it('a broken file (an MP4 header then garbage) ends FAILED with a reason, the job done with it (no lease left, not taken again)', async () => {
    const v = await videoLesson(pub, files.broken);
    const video = await transcodeUntilDone(pub.moderator, v.courseId, v.lessonId);
    expect(video).toMatchObject({ status: 'FAILED', hlsUrl: null, posterUrl: null, durationSeconds: null });
    expect(video.failureReason).toMatch(/^not a readable video/);
    expect(await videoRow(v.mediaId)).toMatchObject({ status: 'failed', attempts: 1, locked_by: null, locked_until: null });
    expect(await runJob()).toEqual({ claimed: 0, ready: 0, failed: 0, released: 0 });
    expect(existsSync(path.join(dir, '.work', v.mediaId))).toBe(false);
  }, 60_000);

  it('resumes a job whose worker died mid-run (its lease lapsed, scratch files left behind), and leaves a live lease alone', async () => {
    const v = await videoLesson(pub, files.hd);
    // What a worker killed mid-run leaves: the row claimed by it, half its files in the scratch folder.
    const scratch = path.join(dir, '.work', v.mediaId, 'out');
    execFileSync('mkdir', ['-p', scratch]);
    writeFileSync(path.join(scratch, 'hls-720p-000.ts'), 'half a segment');
    await sqlRows(t, sql`update media_videos set locked_by = 'dead-worker', locked_until = now() + interval '1 hour', attempts = 1 where media_id = ${v.mediaId}::uuid`);
    // Its lease still runs: nobody else takes it.
    expect((await runJob()).claimed).toBe(0);
    expect((await lessonVideo(pub.moderator, v.courseId, v.lessonId))!.status).toBe('PROCESSING');
    // The lease lapses (the dead worker renews it no more): the next run takes it from the start.
    await sqlRows(t, sql`update media_videos set locked_until = now() - interval '1 second' where media_id = ${v.mediaId}::uuid`);
    const video = await transcodeUntilDone(pub.moderator, v.courseId, v.lessonId);
    expect(video.status).toBe('READY');
    expect(await videoRow(v.mediaId)).toMatchObject({ status: 'ready', attempts: 2, locked_by: null });
    const segment = await fetchBytes(`/media/${v.mediaId}/hls-720p-000.ts`);
    expect((segment.body as Buffer)[0]).toBe(0x47);
  }, 90_000);

  it('a worker stopping mid-transcode kills ffmpeg and gives the video back (attempt uncounted); the next start transcodes it', async () => {
    const v = await videoLesson(pub, files.hd);
    const stopping = new AbortController();
    const running = runJob({ signal: stopping.signal });
    // Stop once ffmpeg is at work (its scratch folder exists and the row is claimed).
    await waitFor(async () => existsSync(path.join(dir, '.work', v.mediaId, 'original')) && (await videoRow(v.mediaId)).locked_by !== null, 20_000, 'the transcode to start');
    stopping.abort();
    expect(await running).toEqual({ claimed: 1, ready: 0, failed: 0, released: 1 });
    expect(await videoRow(v.mediaId)).toMatchObject({ status: 'processing', attempts: 0, locked_by: null, locked_until: null });
    expect(existsSync(path.join(dir, '.work', v.mediaId))).toBe(false);
    const video = await transcodeUntilDone(pub.moderator, v.courseId, v.lessonId);
    expect(video.status).toBe('READY');
  }, 90_000);

  it('a video whose worker died on every attempt ends FAILED after VIDEO_TRANSCODE_MAX_ATTEMPTS claims, never stuck', async () => {
    const v = await videoLesson(pub, files.small);
    await sqlRows(t, sql`update media_videos set locked_by = 'dead-worker', locked_until = now() - interval '1 second', attempts = 3 where media_id = ${v.mediaId}::uuid`);
    const video = await transcodeUntilDone(pub.moderator, v.courseId, v.lessonId);
    expect(video).toMatchObject({ status: 'FAILED', failureReason: 'transcoding was interrupted 3 times' });
  }, 60_000);

  it("a private tribe's video: signed URLs, the playlists rewritten per request with the signature on every URI, so a player without a cookie fetches renditions and segments", async () => {
    const v = await videoLesson(priv, files.small);
    const video = await transcodeUntilDone(priv.member, v.courseId, v.lessonId);
    expect(video.status).toBe('READY');
    expect(video.hlsUrl).toMatch(new RegExp(`^/media/${v.mediaId}/hls\\.m3u8\\?exp=\\d+&sig=[A-Za-z0-9_-]{43}$`));
    expect(video.posterUrl).toMatch(new RegExp(`^/media/${v.mediaId}/poster\\.jpg\\?exp=`));
    const query = video.hlsUrl.split('?')[1];

    const master = await fetchBytes(video.hlsUrl);
    expect(master.status).toBe(200);
    expect(urisOf((master.body as Buffer).toString('utf8'))).toEqual([`hls-240p.m3u8?${query}`]);
    const renditionUrl = resolve(`hls-240p.m3u8?${query}`, video.hlsUrl);
    const rendition = await fetchBytes(renditionUrl);
    expect(rendition.status).toBe(200);
    const segments = urisOf((rendition.body as Buffer).toString('utf8'));
    for (const s of segments) expect(s).toMatch(new RegExp(`^hls-240p-\\d{3}\\.ts\\?${query}$`));
    const segment = await fetchBytes(resolve(segments[0], renditionUrl));
    expect(segment.status).toBe(200);
    expect((segment.body as Buffer)[0]).toBe(0x47);
    // Without the signature (and no member's cookie), nothing.
    expect((await fetchBytes(`/media/${v.mediaId}/hls.m3u8`)).status).toBe(401);
    expect((await fetchBytes(`/media/${v.mediaId}/${segments[0].split('?')[0]}`)).status).toBe(401);
    // An outsider does not see the lesson's video at all.
    const outsider = await gql(t, priv.outsider, `query($c: ID!){ course(id: $c){ id } }`, { c: v.courseId });
    expect(outsider.data?.course ?? null).toBeNull();
  }, 60_000);

  it('a lesson video must be an uploaded lesson_video of the course\'s tribe: another tribe\'s, an image, an unknown id or a bad value is BAD_USER_INPUT invalid_media, and nothing is written', async () => {
    const where = await courseOf(pub);
    const other = await upload(priv.moderator, priv.tribe.id, files.small);
    expect(other.status).toBe(201);
    const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#336699' } }).png().toBuffer();
    const image = await t.api.post('/media').set('cookie', pub.moderator.cookie).field('kind', 'post_image').field('communityId', pub.tribe.id).attach('file', png, { filename: 'a.png', contentType: 'image/png' });
    expect(image.status).toBe(201);
    const lessons = async () => (await sqlRows(t, sql`select id from course_lessons where module_id = ${where.moduleId}::uuid`)).length;
    for (const bad of [other.body.id, `/media/${other.body.id}/original`, image.body.id, image.body.url, '00000000-0000-4000-8000-000000000000', 'not-a-media', 'https://evil.example/x.mp4']) {
      const out = await addLesson(pub, where, { videoMediaId: bad });
      expect(failure(out)).toEqual({ code: 'BAD_USER_INPUT', reason: 'invalid_media' });
    }
    expect(await lessons()).toBe(0);
    // A plain member may not set a lesson's video.
    const own = await upload(pub.moderator, pub.tribe.id, files.small);
    const lesson = ok(await addLesson(pub, where, {})).addLesson;
    const denied = await gql(t, pub.member, 'mutation($c: ID!, $l: ID!, $v: ID){ setLessonVideo(courseId: $c, lessonId: $l, videoMediaId: $v){ id } }', { c: where.courseId, l: lesson.id, v: own.body.id });
    expect(failure(denied).code).toBe('FORBIDDEN');
    // The moderator sets it by its path, then removes it.
    const set = ok(await gql(t, pub.moderator, `mutation($c: ID!, $l: ID!, $v: ID){ setLessonVideo(courseId: $c, lessonId: $l, videoMediaId: $v){ id ${LESSON_VIDEO} } }`, { c: where.courseId, l: lesson.id, v: own.body.url }));
    expect(set.setLessonVideo.video).toMatchObject({ mediaId: own.body.id, status: 'PROCESSING' });
    const removed = ok(await gql(t, pub.moderator, `mutation($c: ID!, $l: ID!){ setLessonVideo(courseId: $c, lessonId: $l, videoMediaId: null){ id ${LESSON_VIDEO} } }`, { c: where.courseId, l: lesson.id }));
    expect(removed.setLessonVideo.video).toBeNull();
  }, 60_000);

  it('the resource API: a lesson added with video_media_id, and the course read back with each lesson\'s video (processing, then ready with its URLs)', async () => {
    const token = await accessToken(t, pub.moderator);
    const auth = { authorization: `Bearer ${token}` };
    const up = await t.api.post('/media').set(auth).field('kind', 'lesson_video').field('communityId', pub.tribe.id).attach('file', files.small, { filename: 'v.mp4', contentType: 'video/mp4' });
    expect(up.status).toBe(201);
    const where = await courseOf(pub);
    const base = `/v1/communities/${pub.tribe.id}/courses/${where.courseId}`;
    const added = await t.api.post(`${base}/modules/${where.moduleId}/lessons`).set(auth).send({ title: 'REST lesson', video_media_id: up.body.id });
    expect(added.status).toBe(201);
    expect(added.body.data.video).toEqual({ media_id: up.body.id, status: 'processing', hls_url: null, poster_url: null, duration_seconds: null, failure_reason: null });
    const bad = await t.api.post(`${base}/modules/${where.moduleId}/lessons`).set(auth).send({ title: 'REST lesson', video_media_id: 'not-a-media' });
    expect(bad.status).toBe(400);
    await transcodeUntilDone(pub.moderator, where.courseId, added.body.data.id);
    const read = await t.api.get(base).set(auth);
    expect(read.status).toBe(200);
    const lesson = read.body.data.modules[0].lessons[0];
    expect(lesson.video).toMatchObject({ media_id: up.body.id, status: 'ready', hls_url: `/media/${up.body.id}/hls.m3u8`, poster_url: `/media/${up.body.id}/poster.jpg`, failure_reason: null });
    expect(lesson.video.duration_seconds).toBeGreaterThan(1.9);
  }, 60_000);
});
