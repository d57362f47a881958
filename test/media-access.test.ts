import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { signMediaPath, transcodePending, transcodeRuntime } from '../subgraphs/media/index.js';
import { type Actor, type Cast, crew, markPaid, staffedTribe, unique } from './factory.js';
import { gql, movableClock, ok, sqlRows, startService, waitFor, type TestService } from './support.js';

/**
 * Media follow their tribe's and course's access rules (issue 29, docs/media.md "Who may fetch" and "Caching"):
 * `public, immutable` only for media of no tribe; a public tribe's media public for a short shared lifetime (a
 * shared cache revalidates, and is refused once the tribe is private); a paid or members-only course's lesson video
 * only through a URL signed for one viewer who passes the course's rule, in a public tribe too.
 */

let t: TestService;
let dir: string;
let work: string;
let video: string;
const clock = movableClock();
let pub: Cast & { tribe: { id: string; handle: string } };

type Who = { cookie: string } | null;

const png = (width = 64, height = 48) => sharp({ create: { width, height, channels: 3, background: '#2a7f62' } }).png().toBuffer();

const upload = async (who: Actor, kind: string, communityId: string | null, file: Buffer | string) => {
  let req = t.api.post('/media').set('cookie', who.cookie).field('kind', kind);
  if (communityId) req = req.field('communityId', communityId);
  const res = await req.attach('file', file, { filename: kind === 'lesson_video' ? 'v.mp4' : 'a.png', contentType: kind === 'lesson_video' ? 'video/mp4' : 'image/png' });
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string; path: string; thumbnailUrl: string | null };
};

const fetchFile = (url: string, who: Who = null, headers: Record<string, string> = {}) => {
  let req = t.api.get(url).buffer(true).parse((res, done) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => done(null, Buffer.concat(parts)));
  });
  if (who) req = req.set('cookie', who.cookie);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req;
};
/** The error code of a refused file (the Application envelope, `{"error": "<code>"}`). */
const refusal = async (url: string, who: Who = null) => {
  const res = await t.api.get(url).set(who ? { cookie: who.cookie } : {});
  return [res.status, res.body.error];
};

const maxAge = (cacheControl: string) => Number(/max-age=(\d+)/.exec(cacheControl)?.[1]);
const YEAR = 31_536_000;

/** The URI lines of a playlist. */
const urisOf = (playlist: string) => playlist.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
/** A playlist URI resolved as a player does: beside the playlist's own URL (its query dropped). */
const resolve = (uri: string, base: string) => {
  const u = new URL(uri, `http://x${base}`);
  return u.pathname + u.search;
};

const LESSON_VIDEO = 'video { mediaId status hlsUrl posterUrl }';

/** A course of `accessType` in the public tribe with one lesson showing a new upload of the test video. */
async function courseWithVideo(accessType: 'free' | 'paid' | 'members_only') {
  const media = await upload(pub.moderator, 'lesson_video', pub.tribe.id, video);
  const input = { title: `Course ${unique()}`, accessType, ...(accessType === 'paid' ? { price: 25 } : {}) };
  const course = ok(await gql(t, pub.moderator, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', { c: pub.tribe.id, i: input }));
  const courseId = course.createCourse.id as string;
  const mod = ok(await gql(t, pub.moderator, 'mutation($c: ID!, $i: CreateCourseModuleInput!){ addCourseModule(courseId: $c, input: $i){ id } }', { c: courseId, i: { title: 'Week 1' } }));
  const lesson = ok(await gql(t, pub.moderator, 'mutation($c: ID!, $m: ID!, $i: CreateLessonInput!){ addLesson(courseId: $c, moduleId: $m, input: $i){ id } }', { c: courseId, m: mod.addCourseModule.id, i: { title: 'Lesson', videoMediaId: media.id } }));
  return { media, courseId, lessonId: lesson.addLesson.id as string };
}

/** `Lesson.video` as `who` reads it (null when the course's rule hides it). */
async function lessonVideo(who: Who, courseId: string, lessonId: string): Promise<{ status: string; hlsUrl: string | null; posterUrl: string | null } | null> {
  const out = ok(await gql(t, who, `query($c: ID!){ course(id: $c){ modules { lessons { id ${LESSON_VIDEO} } } } }`, { c: courseId }));
  const lessons = (out.course.modules as Array<{ lessons: Array<{ id: string; video: any }> }>).flatMap((m) => m.lessons);
  return lessons.find((l) => l.id === lessonId)!.video;
}

/** Runs the media.transcode job until every queued video is done. */
const transcodeAll = () =>
  waitFor(async () => {
    await transcodePending(t.deps, transcodeRuntime(t.deps));
    return (await sqlRows(t, sql`select 1 from media_videos where status = 'processing'`)).length === 0;
  }, 60_000, 'the videos to be transcoded');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-media-access-'));
  work = await mkdtemp(path.join(tmpdir(), 'svc-media-access-src-'));
  video = path.join(work, 'small.mp4');
  execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', video]);
  t = await startService({ MEDIA_DIR: dir, MEDIA_URL_TTL_SECONDS: '600', VIDEO_X264_PRESET: 'ultrafast', VIDEO_HLS_SEGMENT_SECONDS: '1' }, clock.now);
  pub = await staffedTribe(t, await crew(t), { isPublic: true });
  // Other test files' queued videos (a shared test database) are not this file's to transcode.
  await sqlRows(t, sql`delete from media_videos where status = 'processing'`);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('media cache headers', () => {
  it("a public tribe's post image is never immutable nor kept a year by shared caches; once the tribe is private, shared caches revalidating are refused", async () => {
    const s = await staffedTribe(t, await crew(t), { isPublic: true });
    const image = await upload(s.member, 'post_image', s.tribe.id, await png());
    expect(image.url).toBe(image.path); // a public tribe's media: a plain path
    const first = await fetchFile(image.path);
    expect(first.status).toBe(200);
    const cc = first.headers['cache-control'];
    expect(cc).toBe('public, max-age=300');
    expect(cc).not.toMatch(/immutable/);
    expect(maxAge(cc)).toBeLessThanOrEqual(300);
    // A shared cache revalidating within the tribe's public life: 304 with the same short lifetime.
    const etag = first.headers.etag;
    const revalidated = await fetchFile(image.path, null, { 'if-none-match': etag });
    expect([revalidated.status, revalidated.headers['cache-control']]).toEqual([304, 'public, max-age=300']);
    for (const url of [image.thumbnailUrl!]) expect((await fetchFile(url)).headers['cache-control']).toBe('public, max-age=300');

    ok(await gql(t, s.owner, 'mutation($id: ID!, $i: UpdateCommunityInput!){ updateCommunity(id: $id, input: $i){ id isPublic } }', { id: s.tribe.id, i: { isPublic: false } }));
    // The shared cache's revalidation (If-None-Match, no cookie) is refused, and the refusal is not cached.
    const stale = await fetchFile(image.path, null, { 'if-none-match': etag });
    expect([stale.status, stale.headers['cache-control']]).toEqual([401, 'no-store']);
    expect(await refusal(image.path, s.outsider)).toEqual([403, 'forbidden']);
    // Its members still see it, privately.
    const member = await fetchFile(image.path, s.member2);
    expect([member.status, member.headers['cache-control']]).toEqual([200, 'private, max-age=0, must-revalidate']);
  });

  it("a private tribe's media through a signed URL: private, for the signature's life at most, not immutable", async () => {
    const s = await staffedTribe(t, await crew(t), { isPublic: false });
    const image = await upload(s.member, 'post_image', s.tribe.id, await png());
    const res = await fetchFile(image.url);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(maxAge(res.headers['cache-control'])).toBeLessThanOrEqual(600);
  });

  it('an avatar and a tribe-less post image, which can never become private, stay public and immutable for a year', async () => {
    const avatar = await upload(pub.member, 'avatar', null, await png(128, 128));
    const loose = await upload(pub.member, 'post_image', null, await png());
    for (const url of [avatar.url, avatar.thumbnailUrl!, loose.url]) {
      const res = await fetchFile(url);
      expect([url, res.status, res.headers['cache-control']]).toEqual([url, 200, `public, max-age=${YEAR}, immutable`]);
    }
  });
});

describe('lesson videos', () => {
  let paid: Awaited<ReturnType<typeof courseWithVideo>>;
  let membersOnly: Awaited<ReturnType<typeof courseWithVideo>>;
  let free: Awaited<ReturnType<typeof courseWithVideo>>;
  beforeAll(async () => {
    paid = await courseWithVideo('paid');
    membersOnly = await courseWithVideo('members_only');
    free = await courseWithVideo('free');
    await transcodeAll();
    // pub.member buys the paid course (the manual provider, marked paid by the owner); pub.member2 does not.
    const enrolled = ok(await gql(t, pub.member, 'mutation($c: ID!){ enrollCourse(courseId: $c){ status order { id } } }', { c: paid.courseId }));
    expect(enrolled.enrollCourse.status).toBe('pending_payment');
    ok(await markPaid(t, pub.owner, enrolled.enrollCourse.order.id));
  }, 120_000);

  const files = (mediaId: string) => ['hls.m3u8', 'hls-240p.m3u8', 'hls-240p-000.ts', 'poster.jpg', 'original'].map((f) => `/media/${mediaId}/${f}`);

  it("a paid course's video in a public tribe: its unsigned URLs are refused to everyone, the buyer's cookie included", async () => {
    for (const url of files(paid.media.id)) {
      for (const who of [null, pub.outsider, pub.member2, pub.member, pub.owner]) {
        expect([url, ...(await refusal(url, who))]).toEqual([url, 403, 'signed_url_required']);
      }
    }
  });

  it('the buyer gets URLs signed for them that play: playlists carry the signature to every rendition and segment, privately cached', async () => {
    const v = (await lessonVideo(pub.member, paid.courseId, paid.lessonId))!;
    expect(v.status).toBe('READY');
    expect(v.hlsUrl).toMatch(new RegExp(`^/media/${paid.media.id}/hls\\.m3u8\\?exp=\\d+&u=${pub.member.id}&sig=[A-Za-z0-9_-]{43}$`));
    const query = v.hlsUrl!.split('?')[1];
    const master = await fetchFile(v.hlsUrl!);
    expect(master.status).toBe(200);
    expect(master.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(maxAge(master.headers['cache-control'])).toBeLessThanOrEqual(600);
    expect(urisOf((master.body as Buffer).toString('utf8'))).toEqual([`hls-240p.m3u8?${query}`]);
    const renditionUrl = resolve(`hls-240p.m3u8?${query}`, v.hlsUrl!);
    const rendition = await fetchFile(renditionUrl);
    expect(rendition.status).toBe(200);
    const segments = urisOf((rendition.body as Buffer).toString('utf8'));
    for (const s of segments) expect(s).toMatch(new RegExp(`^hls-240p-\\d{3}\\.ts\\?${query}$`));
    const segment = await fetchFile(resolve(segments[0], renditionUrl));
    expect([segment.status, (segment.body as Buffer)[0]]).toEqual([200, 0x47]);
    const poster = await fetchFile(v.posterUrl!);
    expect([poster.status, poster.headers['content-type']]).toEqual([200, 'image/jpeg']);
    // The moderators who edit the course get their own signed URLs too.
    const mod = (await lessonVideo(pub.moderator, paid.courseId, paid.lessonId))!;
    expect(mod.hlsUrl).toContain(`&u=${pub.moderator.id}&`);
    expect((await fetchFile(mod.hlsUrl!)).status).toBe(200);
  });

  it('who has not bought it gets no signed URL: the lesson shows no video to a member who did not pay, an outsider or an anonymous reader', async () => {
    for (const who of [pub.member2, pub.outsider, null]) expect(await lessonVideo(who, paid.courseId, paid.lessonId)).toBeNull();
    const rest = await t.api.get(`/v1/communities/${pub.tribe.id}/courses/${paid.courseId}`).set('authorization', `Bearer ${pub.member2.token}`);
    expect(rest.status).toBe(200);
    expect(rest.body.data.modules[0].lessons[0].video).toBeUndefined();
  });

  it('a tampered, re-addressed, expired or unbound signature is refused', async () => {
    const v = (await lessonVideo(pub.member, paid.courseId, paid.lessonId))!;
    const tampered = v.hlsUrl!.replace(/sig=(.)/, (_m, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    expect(await refusal(tampered)).toEqual([403, 'invalid_signature']);
    // The buyer's signature handed to someone else's id, or moved to another video.
    expect(await refusal(v.hlsUrl!.replace(`u=${pub.member.id}`, `u=${pub.member2.id}`))).toEqual([403, 'invalid_signature']);
    expect(await refusal(`/media/${membersOnly.media.id}/hls.m3u8?${v.hlsUrl!.split('?')[1]}`)).toEqual([403, 'invalid_signature']);
    // A signature that names no viewer (what a private tribe's post images carry) does not open a paid course's video.
    expect(await refusal(signMediaPath(t.deps, `/media/${paid.media.id}/hls.m3u8`))).toEqual([403, 'signed_url_required']);
    clock.advance(601_000);
    try {
      expect(await refusal(v.hlsUrl!)).toEqual([403, 'url_expired']);
    } finally {
      clock.advance(-601_000);
    }
  });

  it("the course's rule is checked again on every file: after a full refund the buyer's URL stops working", async () => {
    const s = await staffedTribe(t, await crew(t), { isPublic: true });
    const media = await upload(s.moderator, 'lesson_video', s.tribe.id, video);
    const course = ok(await gql(t, s.moderator, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', { c: s.tribe.id, i: { title: 'Refunded', accessType: 'paid', price: 10 } }));
    const mod = ok(await gql(t, s.moderator, 'mutation($c: ID!, $i: CreateCourseModuleInput!){ addCourseModule(courseId: $c, input: $i){ id } }', { c: course.createCourse.id, i: { title: 'W' } }));
    const lesson = ok(await gql(t, s.moderator, 'mutation($c: ID!, $m: ID!, $i: CreateLessonInput!){ addLesson(courseId: $c, moduleId: $m, input: $i){ id } }', { c: course.createCourse.id, m: mod.addCourseModule.id, i: { title: 'L', videoMediaId: media.id } }));
    await transcodeAll();
    const enrolled = ok(await gql(t, s.member, 'mutation($c: ID!){ enrollCourse(courseId: $c){ order { id } } }', { c: course.createCourse.id }));
    const orderId = enrolled.enrollCourse.order.id as string;
    ok(await markPaid(t, s.owner, orderId));
    const v = (await lessonVideo(s.member, course.createCourse.id, lesson.addLesson.id))!;
    expect((await fetchFile(v.hlsUrl!)).status).toBe(200);
    ok(await gql(t, s.owner, 'mutation($o: ID!){ refundOrder(orderId: $o){ id status } }', { o: orderId }));
    expect(await refusal(v.hlsUrl!)).toEqual([403, 'forbidden']);
    expect(await refusal(v.posterUrl!)).toEqual([403, 'forbidden']);
    expect(await lessonVideo(s.member, course.createCourse.id, lesson.addLesson.id)).toBeNull();
  }, 90_000);

  it("a members-only course's video: signed for members, nothing for an outsider of the public tribe, unsigned refused", async () => {
    const v = (await lessonVideo(pub.member2, membersOnly.courseId, membersOnly.lessonId))!;
    expect(v.hlsUrl).toContain(`&u=${pub.member2.id}&`);
    expect((await fetchFile(v.hlsUrl!)).status).toBe(200);
    expect(await lessonVideo(pub.outsider, membersOnly.courseId, membersOnly.lessonId)).toBeNull();
    expect(await lessonVideo(null, membersOnly.courseId, membersOnly.lessonId)).toBeNull();
    expect(await refusal(`/media/${membersOnly.media.id}/hls.m3u8`, pub.member2)).toEqual([403, 'signed_url_required']);
  });

  it("a free course's video in a public tribe stays open: plain paths anyone fetches, cached like the tribe's other media", async () => {
    const v = (await lessonVideo(null, free.courseId, free.lessonId))!;
    expect(v).toMatchObject({ status: 'READY', hlsUrl: `/media/${free.media.id}/hls.m3u8`, posterUrl: `/media/${free.media.id}/poster.jpg` });
    for (const url of [v.hlsUrl!, v.posterUrl!, `/media/${free.media.id}/hls-240p-000.ts`]) {
      const res = await fetchFile(url);
      expect([url, res.status, res.headers['cache-control']]).toEqual([url, 200, 'public, max-age=300']);
    }
  });

  it('a video on no lesson yet goes to its uploader by the upload answer\'s signed URL only', async () => {
    const media = await upload(pub.moderator, 'lesson_video', pub.tribe.id, video);
    expect(media.url).toMatch(new RegExp(`^/media/${media.id}/original\\?exp=\\d+&u=${pub.moderator.id}&sig=`));
    expect((await fetchFile(media.url)).status).toBe(200);
    expect(await refusal(media.path)).toEqual([403, 'signed_url_required']);
  });
});
