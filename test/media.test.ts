import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type request from 'supertest';
import { LocalDiskStorage } from '../subgraphs/media/index.js';
import { type Cast, createTribe, crew, staffedTribe, UNKNOWN_ID } from './factory.js';
import { countOf, failure, gql, movableClock, ok, sqlRows, startService, type TestService } from './support.js';

let t: TestService;
let dir: string;
let store: LocalDiskStorage;
const clock = movableClock();
let cast: Cast & { tribe: { id: string; handle: string } };
let secret: Cast & { tribe: { id: string; handle: string } };

const MB = 1024 * 1024;

/** Every file under MEDIA_DIR, and the media rows: what a refused upload must leave as it was. */
const kept = async () => ({ files: await store.list(), rows: await countOf(t, sql`select count(*)::int as n from media`) });

// ---- files ----

const jpegWithGps = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#3a6ea5' } })
    .jpeg({ quality: 80 })
    .withExif({ IFD0: { Make: 'TestCam', Model: 'Leaky' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2400/100', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 0/1' } })
    .toBuffer();
const png = (width = 64, height = 48) => sharp({ create: { width, height, channels: 4, background: '#ff000080' } }).png().toBuffer();
/** A noisy photo-like JPEG: most of its bytes are scan data, so cutting it leaves a truncated image. */
const noisyJpeg = async () => {
  const raw = Buffer.alloc(400 * 300 * 3);
  for (let i = 0; i < raw.length; i += 1) raw[i] = (i * 2654435761) >>> 24;
  return sharp(raw, { raw: { width: 400, height: 300, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
};

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])) >>> 0);
  return Buffer.concat([head, Buffer.from(type, 'latin1'), data, crc]);
};
/** A decompression bomb: a PNG of a few hundred bytes declaring 50,000 x 50,000 pixels. */
const bomb = () => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(50_000, 0);
  ihdr.writeUInt32BE(50_000, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(0, 9); // grey
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc(50_001 * 4))), chunk('IEND', Buffer.alloc(0))]);
};
/** Bytes that sniff as an MP4 (an `ftyp isom` box) followed by `size` bytes of filler. */
const mp4 = (size: number) => Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypisom\0\0\x02\0isomiso2avc1mp41', 'latin1'), Buffer.alloc(size, 7)]);

// ---- requests ----

type Who = { cookie?: string; token?: string } | null;
const upload = (who: Who, fields: Record<string, string>, file?: { bytes: Buffer; name?: string; type?: string }, where = '/media') => {
  let req: request.Test = t.api.post(where);
  if (who?.token) req = req.set('authorization', `Bearer ${who.token}`);
  else if (who?.cookie) req = req.set('cookie', who.cookie);
  for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
  if (file) req = req.attach('file', file.bytes, { filename: file.name ?? 'upload.bin', contentType: file.type ?? 'application/octet-stream' });
  return req;
};
const fetchMedia = (url: string, who: Who = null, headers: Record<string, string> = {}) => {
  let req = t.api.get(url).buffer(true).parse((res, done) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => done(null, Buffer.concat(parts)));
  });
  if (who?.cookie) req = req.set('cookie', who.cookie);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req;
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-media-'));
  store = new LocalDiskStorage(dir);
  t = await startService({ MEDIA_DIR: dir, MEDIA_MAX_IMAGE_MB: '1', MEDIA_MAX_VIDEO_MB: '2', MEDIA_URL_TTL_SECONDS: '600' }, clock.now);
  const people = await crew(t); // the same six people staff both tribes; the outsider joins neither
  cast = await staffedTribe(t, people, { isPublic: true });
  secret = await staffedTribe(t, people, { isPublic: false });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('POST /media', () => {
  it('re-encodes a 3000 x 2000 JPEG with GPS EXIF into a WebP of 2,048 px and a 320 px thumbnail, without metadata', async () => {
    const original = await jpegWithGps(3000, 2000);
    expect((await sharp(original).metadata()).exif).toBeDefined();
    const res = await upload(cast.member, { kind: 'post_image' }, { bytes: original, name: 'holiday.jpg', type: 'image/jpeg' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'post_image', contentType: 'image/jpeg', size: original.length, width: 2048, height: 1365, communityId: null, status: 'ready' });
    expect(res.body.url).toBe(`/media/${res.body.id}/image`);
    expect(res.body.thumbnailUrl).toBe(`/media/${res.body.id}/thumb`);
    const image = await fetchMedia(res.body.url);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/webp');
    const meta = await sharp(image.body as Buffer).metadata();
    expect([meta.format, meta.width, meta.height, meta.exif, meta.xmp, meta.icc]).toEqual(['webp', 2048, 1365, undefined, undefined, undefined]);
    const thumb = await sharp((await fetchMedia(res.body.thumbnailUrl)).body as Buffer).metadata();
    expect([thumb.format, thumb.width, thumb.height, thumb.exif]).toEqual(['webp', 320, 213, undefined]);
    const [row] = await sqlRows(t, sql`select owner_id, kind, content_type, community_id from media where id = ${res.body.id}`);
    expect(row).toEqual({ owner_id: cast.member.id, kind: 'post_image', content_type: 'image/jpeg', community_id: null });
    // The original, with its GPS position, is not kept: only the two re-encoded files.
    expect((await store.list()).filter((f) => f.includes(res.body.id)).map((f) => path.basename(f)).sort()).toEqual(['image', 'thumb']);
  });

  it('accepts a resource API access token (Bearer) at /media and at /v1/media', async () => {
    const a = await upload({ token: cast.member.token }, { kind: 'avatar' }, { bytes: await png() });
    expect([a.status, a.body.kind, a.body.width]).toEqual([201, 'avatar', 64]);
    const b = await upload({ token: cast.member.token }, { kind: 'avatar' }, { bytes: await png() }, '/v1/media');
    expect([b.status, b.body.kind]).toEqual([201, 'avatar']);
  });

  it('reads the type from the bytes: a PNG named evil.exe sent as text/plain is an image; text named photo.jpg sent as image/jpeg is refused', async () => {
    const good = await upload(cast.member, { kind: 'avatar' }, { bytes: await png(), name: 'evil.exe', type: 'text/plain' });
    expect([good.status, good.body.contentType]).toEqual([201, 'image/png']);
    const before = await kept();
    const bad = await upload(cast.member, { kind: 'avatar' }, { bytes: Buffer.from('<?php system($_GET["c"]); ?> definitely a jpeg'), name: 'photo.jpg', type: 'image/jpeg' });
    expect([bad.status, bad.body]).toEqual([400, { error: 'unsupported_type', message: expect.any(String), requestId: expect.any(String) }]);
    expect(await kept()).toEqual(before);
  });

  describe('hostile files (each refused, nothing kept: no file, no row)', () => {
    const refused = async (res: request.Response | Promise<request.Response>, status: number, code: string) => {
      const before = await kept();
      const r = await res;
      expect([r.status, r.body]).toEqual([status, { error: code, message: expect.any(String), requestId: expect.any(String) }]);
      expect(await kept()).toEqual(before);
    };

    it('wrong magic bytes: a GIF header on a video kind, an MP4 for an avatar, a PDF', async () => {
      await refused(upload(cast.moderator, { kind: 'lesson_video', communityId: cast.tribe.id }, { bytes: Buffer.from('GIF89a........') }), 400, 'unsupported_type');
      await refused(upload(cast.member, { kind: 'avatar' }, { bytes: mp4(100) }), 400, 'unsupported_type');
      await refused(upload(cast.member, { kind: 'post_image' }, { bytes: Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj') }), 400, 'unsupported_type');
    });

    it('a truncated JPEG', async () => {
      const whole = await noisyJpeg();
      await refused(upload(cast.member, { kind: 'post_image' }, { bytes: whole.subarray(0, Math.floor(whole.length * 0.6)) }), 400, 'invalid_image');
    });

    it('a decompression bomb: a few hundred bytes declaring 50,000 x 50,000 pixels', async () => {
      const b = bomb();
      expect(b.length).toBeLessThan(2000);
      await refused(upload(cast.member, { kind: 'post_image' }, { bytes: b }), 400, 'image_too_large');
    });

    it('a 0-byte file', async () => {
      await refused(upload(cast.member, { kind: 'post_image' }, { bytes: Buffer.alloc(0) }), 400, 'empty_file');
    });

    it('a file name with path traversal is never used: the file is stored under a generated id inside MEDIA_DIR', async () => {
      const name = '../../../../../../tmp/svc-media-traversal.png';
      const res = await upload(cast.member, { kind: 'post_image' }, { bytes: await png(), name });
      expect(res.status).toBe(201);
      expect(existsSync('/tmp/svc-media-traversal.png')).toBe(false);
      expect(existsSync(path.resolve(dir, name))).toBe(false);
      for (const f of await store.list()) expect(f).toMatch(/^[0-9a-f]{2}\/[0-9a-f-]{36}\/(image|thumb|original)$/);
      expect(JSON.stringify(res.body)).not.toContain('traversal');
    });

    it('missing fields: no kind, no file, kind after the file', async () => {
      await refused(upload(cast.member, {}, { bytes: await png() }), 400, 'missing_field');
      await refused(upload(cast.member, { kind: 'avatar' }), 400, 'missing_field');
      const late = t.api.post('/media').set('cookie', cast.member.cookie).attach('file', await png(), 'a.png').field('kind', 'avatar');
      await refused(late, 400, 'missing_field');
    });

    it('an unknown kind', async () => {
      await refused(upload(cast.member, { kind: 'banner' }, { bytes: await png() }), 400, 'invalid_kind');
    });

    it('a second file', async () => {
      const two = t.api.post('/media').set('cookie', cast.member.cookie).field('kind', 'avatar').attach('file', await png(), 'a.png').attach('file', await png(), 'b.png');
      await refused(two, 400, 'too_many_files');
    });

    it('not multipart: 415', async () => {
      await refused(t.api.post('/media').set('cookie', cast.member.cookie).send({ kind: 'avatar', file: 'aGVsbG8=' }), 415, 'unsupported_media_type');
    });

    it('unauthenticated: 401 in each surface envelope, a bad token too', async () => {
      await refused(upload(null, { kind: 'avatar' }, { bytes: await png() }), 401, 'unauthorized');
      await refused(upload({ token: 'not-a-token' }, { kind: 'avatar' }, { bytes: await png() }), 401, 'unauthorized');
      const before = await kept();
      const v1 = await upload(null, { kind: 'avatar' }, { bytes: await png() }, '/v1/media');
      expect([v1.status, v1.body.error.code]).toEqual([401, 'unauthorized']);
      expect(await kept()).toEqual(before);
    });

    it('a cookie upload from another site (Origin of another host) is refused: 403 forbidden_origin (the app-wide guard of cookie writes)', async () => {
      const cookieOnly = { cookie: cast.member.cookie };
      await refused(upload(cookieOnly, { kind: 'avatar' }, { bytes: await png() }).set('origin', 'https://evil.example'), 403, 'forbidden_origin');
      const otherPort = await upload(cookieOnly, { kind: 'avatar' }, { bytes: await png() }).set('origin', 'http://127.0.0.1');
      expect(otherPort.status).toBe(403); // another port is another origin
      const noOrigin = await upload(cookieOnly, { kind: 'avatar' }, { bytes: await png() });
      expect(noOrigin.status).toBe(201);
    });

    it('an image over MEDIA_MAX_IMAGE_MB (1 here) is cut off with 413', async () => {
      const big = Buffer.concat([await png(), Buffer.alloc(MB + 100, 1)]);
      await refused(upload(cast.member, { kind: 'post_image' }, { bytes: big }), 413, 'file_too_large');
    });

    it('a video over MEDIA_MAX_VIDEO_MB (2 here) is cut off with 413', async () => {
      await refused(upload(cast.moderator, { kind: 'lesson_video', communityId: cast.tribe.id }, { bytes: mp4(3 * MB) }), 413, 'file_too_large');
    });
  });

  describe('tribes', () => {
    it('a post image of a tribe needs membership (an outsider 403, an unknown tribe 404); an avatar takes no tribe', async () => {
      const a = await upload(cast.outsider, { kind: 'post_image', communityId: cast.tribe.id }, { bytes: await png() });
      expect([a.status, a.body]).toEqual([403, { error: 'forbidden', message: expect.any(String), requestId: expect.any(String) }]);
      const b = await upload(cast.member, { kind: 'post_image', communityId: UNKNOWN_ID }, { bytes: await png() });
      expect([b.status, b.body]).toEqual([404, { error: 'not_found', message: expect.any(String), requestId: expect.any(String) }]);
      const c = await upload(cast.member, { kind: 'avatar', communityId: cast.tribe.id }, { bytes: await png() });
      expect([c.status, c.body]).toEqual([400, { error: 'invalid_input', message: expect.any(String), requestId: expect.any(String) }]);
      const d = await upload(cast.member, { kind: 'post_image', communityId: cast.tribe.id }, { bytes: await png() });
      expect([d.status, d.body.communityId]).toEqual([201, cast.tribe.id]);
    });

    it('a lesson video needs its tribe and the moderator role: a member 403, no communityId 400', async () => {
      const a = await upload(cast.member, { kind: 'lesson_video', communityId: cast.tribe.id }, { bytes: mp4(1000) });
      expect([a.status, a.body]).toEqual([403, { error: 'forbidden', message: expect.any(String), requestId: expect.any(String) }]);
      const b = await upload(cast.moderator, { kind: 'lesson_video' }, { bytes: mp4(1000) });
      expect([b.status, b.body]).toEqual([400, { error: 'missing_field', message: expect.any(String), requestId: expect.any(String) }]);
      const c = await upload(cast.moderator, { kind: 'lesson_video', communityId: cast.tribe.id }, { bytes: mp4(1000), name: 'intro.mov' });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ kind: 'lesson_video', contentType: 'video/mp4', size: 1032, path: `/media/${c.body.id}/original`, thumbnailUrl: null });
      // A lesson video goes to viewers' signed URLs only: the upload answers one for its uploader.
      expect(c.body.url).toMatch(new RegExp(`^/media/${c.body.id}/original\\?exp=\\d+&u=${cast.moderator.id}&sig=[A-Za-z0-9_-]{43}$`));
    });
  });
});

describe('GET /media/{id}/{variant}', () => {
  let video: { id: string; url: string };
  let bytes: Buffer;
  beforeAll(async () => {
    bytes = Buffer.concat([mp4(0), Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251))]);
    const res = await upload(cast.moderator, { kind: 'lesson_video', communityId: cast.tribe.id }, { bytes });
    video = res.body;
  });

  it('serves the file with its ETag, its access rule\'s cache headers (a lesson video on no lesson: its uploader\'s signed URL, private), nosniff and its length; HEAD sends no body', async () => {
    const res = await fetchMedia(video.url);
    expect(res.status).toBe(200);
    expect((res.body as Buffer).equals(bytes)).toBe(true);
    expect(res.headers).toMatchObject({
      'content-type': 'video/mp4',
      'content-length': String(bytes.length),
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
    });
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    const head = await t.api.head(video.url);
    expect([head.status, head.headers['content-length'], head.headers.etag]).toEqual([200, String(bytes.length), res.headers.etag]);
    const again = await fetchMedia(video.url, null, { 'if-none-match': res.headers.etag });
    expect(again.status).toBe(304);
  });

  it('answers byte ranges with 206 (a-b, a-, -n) and an unsatisfiable one with 416', async () => {
    const size = bytes.length;
    const cases: Array<[string, number, number]> = [['bytes=0-99', 0, 99], [`bytes=100-`, 100, size - 1], ['bytes=-10', size - 10, size - 1], [`bytes=5-${size + 100}`, 5, size - 1]];
    for (const [range, start, end] of cases) {
      const res = await fetchMedia(video.url, null, { range });
      expect([range, res.status, res.headers['content-range'], res.headers['content-length']]).toEqual([range, 206, `bytes ${start}-${end}/${size}`, String(end - start + 1)]);
      expect((res.body as Buffer).equals(bytes.subarray(start, end + 1))).toBe(true);
    }
    const bad = await fetchMedia(video.url, null, { range: `bytes=${size}-` });
    expect([bad.status, bad.headers['content-range']]).toEqual([416, `bytes */${size}`]);
    const stale = await fetchMedia(video.url, null, { range: 'bytes=0-9', 'if-range': '"other"' });
    expect([stale.status, (stale.body as Buffer).length]).toEqual([200, size]);
  });

  it('404 for an unknown media, an unknown variant and a malformed id', async () => {
    for (const url of [`/media/${UNKNOWN_ID}/image`, `/media/${video.id}/poster`, '/media/..%2f..%2fetc/passwd', `/media/${video.id}/..%2f..%2f`]) {
      const res = await t.api.get(url);
      expect([url, res.status]).toEqual([url, 404]);
    }
  });
});

describe('media of a private tribe', () => {
  let up: { id: string; url: string; path: string; thumbnailUrl: string };
  beforeAll(async () => {
    const res = await upload(secret.member, { kind: 'post_image', communityId: secret.tribe.id }, { bytes: await png(100, 100) });
    expect(res.status).toBe(201);
    up = res.body;
  });

  it('answers the upload with signed URLs (exp and sig), which load without any cookie', async () => {
    expect(up.url).toMatch(new RegExp(`^/media/${up.id}/image\\?exp=\\d+&sig=[A-Za-z0-9_-]{43}$`));
    expect(up.path).toBe(`/media/${up.id}/image`);
    const res = await fetchMedia(up.url);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toMatch(/^private, max-age=(\d+)$/);
    expect(Number(/max-age=(\d+)/.exec(res.headers['cache-control'])![1])).toBeLessThanOrEqual(600);
    expect((await fetchMedia(up.thumbnailUrl)).status).toBe(200);
  });

  it('refuses the bare path to anonymous callers (401) and outsiders (403); serves it to a member by cookie', async () => {
    const anonymous = await t.api.get(up.path);
    expect([anonymous.status, anonymous.body]).toEqual([401, { error: 'unauthorized', message: expect.any(String), requestId: expect.any(String) }]);
    const outsider = await t.api.get(up.path).set('cookie', secret.outsider.cookie);
    expect([outsider.status, outsider.body]).toEqual([403, { error: 'forbidden', message: expect.any(String), requestId: expect.any(String) }]);
    const member = await fetchMedia(up.path, secret.member2);
    expect([member.status, member.headers['cache-control']]).toEqual([200, 'private, max-age=0, must-revalidate']);
  });

  it('refuses a tampered signature, a signature of another media, and an expired one', async () => {
    const tampered = up.url.replace(/sig=(.)/, (_m, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
    const a = await t.api.get(tampered);
    expect([a.status, a.body]).toEqual([403, { error: 'invalid_signature', message: expect.any(String), requestId: expect.any(String) }]);
    const other = await upload(secret.member, { kind: 'post_image', communityId: secret.tribe.id }, { bytes: await png() });
    const borrowed = `${up.path}?${other.body.url.split('?')[1]}`;
    expect((await t.api.get(borrowed)).status).toBe(403);
    clock.advance(601_000);
    try {
      const b = await t.api.get(up.url);
      expect([b.status, b.body]).toEqual([403, { error: 'url_expired', message: expect.any(String), requestId: expect.any(String) }]);
    } finally {
      clock.advance(-601_000);
    }
  });
});

describe('content referencing uploads', () => {
  const CREATE = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id mediaUrls } }';

  it("a post takes the author's own post images of its tribe; GraphQL answers them signed", async () => {
    const img = await upload(secret.member, { kind: 'post_image', communityId: secret.tribe.id }, { bytes: await png() });
    const post = ok(await gql(t, secret.member, CREATE, { c: secret.tribe.id, i: { content: 'look', mediaUrls: [img.body.url, 'https://cdn.example.com/a.png'] } })).createPost;
    const [row] = await sqlRows(t, sql`select media_urls from posts where id = ${post.id}`);
    expect(row.media_urls).toEqual([img.body.path, 'https://cdn.example.com/a.png']);
    expect(post.mediaUrls[0]).toMatch(new RegExp(`^${img.body.path}\\?exp=\\d+&sig=`));
    expect((await fetchMedia(post.mediaUrls[0])).status).toBe(200);
  });

  it("refuses another user's media, a media of another tribe, an avatar and an unknown id (BAD_USER_INPUT invalid_media), writing nothing", async () => {
    const mine = await upload(secret.member, { kind: 'post_image', communityId: secret.tribe.id }, { bytes: await png() });
    const elsewhere = await upload(cast.member, { kind: 'post_image', communityId: cast.tribe.id }, { bytes: await png() });
    const avatar = await upload(cast.member, { kind: 'avatar' }, { bytes: await png() });
    const own = await createTribe(t, secret.member);
    const before = await countOf(t, sql`select count(*)::int as n from posts`);
    const cases: Array<[{ cookie: string }, string, string]> = [
      [secret.member2, secret.tribe.id, mine.body.path],
      [secret.member, own.id, mine.body.path],
      [cast.member, cast.tribe.id, avatar.body.path],
      [cast.member, cast.tribe.id, `/media/${UNKNOWN_ID}/image`],
      [cast.member, cast.tribe.id, `/media/${elsewhere.body.id}/nope`],
    ];
    for (const [who, tribe, url] of cases) {
      expect([url, failure(await gql(t, who, CREATE, { c: tribe, i: { content: 'x', mediaUrls: [url] } }))]).toEqual([url, { code: 'BAD_USER_INPUT', reason: 'invalid_media' }]);
    }
    expect(await countOf(t, sql`select count(*)::int as n from posts`)).toBe(before);
    // A tribe-less post image goes in a public tribe's post, not a private one's.
    const loose = await upload(secret.member, { kind: 'post_image' }, { bytes: await png() });
    expect(failure(await gql(t, secret.member, CREATE, { c: secret.tribe.id, i: { content: 'x', mediaUrls: [loose.body.path] } })).reason).toBe('invalid_media');
    ok(await gql(t, secret.member, CREATE, { c: own.id, i: { content: 'x', mediaUrls: [loose.body.path] } }));
  });

  it('updateProfile takes the user\'s own avatar upload as avatarUrl, and refuses a post image or another\'s avatar', async () => {
    const UPDATE = 'mutation($i: UpdateProfileInput!){ updateProfile(input: $i){ avatarUrl } }';
    const avatar = await upload(cast.member2, { kind: 'avatar' }, { bytes: await png() });
    expect(ok(await gql(t, cast.member2, UPDATE, { i: { avatarUrl: avatar.body.path } })).updateProfile.avatarUrl).toBe(avatar.body.path);
    expect((await fetchMedia(avatar.body.path)).status).toBe(200);
    const image = await upload(cast.member2, { kind: 'post_image' }, { bytes: await png() });
    expect(failure(await gql(t, cast.member2, UPDATE, { i: { avatarUrl: image.body.path } })).reason).toBe('invalid_media');
    expect(failure(await gql(t, cast.member, UPDATE, { i: { avatarUrl: avatar.body.path } })).reason).toBe('invalid_media');
    expect(failure(await gql(t, cast.member, UPDATE, { i: { avatarUrl: '/media/../../etc/passwd' } })).code).toBe('BAD_USER_INPUT');
  });
});
