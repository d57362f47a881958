import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FfmpegError, renditionHeights, signPlaylistUris, transcodeToHls } from './ffmpeg.js';

/** ffmpeg's test source (with a tone when `audio`) into `file`. */
function makeTestVideo(file: string, size: string, seconds = 3, audio = true): void {
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=duration=${seconds}:size=${size}:rate=25`];
  if (audio) args.push('-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p');
  if (audio) args.push('-c:a', 'aac', '-shortest');
  args.push(file);
  execFileSync('ffmpeg', args);
}

const FAST = { timeoutMs: 60_000, preset: 'ultrafast', segmentSeconds: 1 };

describe('ffmpeg HLS runner', () => {
  let dir: string;
  const outDir = (name: string) => {
    const d = path.join(dir, name);
    mkdirSync(d);
    return d;
  };
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'svc-ffmpeg-'));
    makeTestVideo(path.join(dir, 'hd.mp4'), '1280x720');
    makeTestVideo(path.join(dir, 'small.mp4'), '320x240', 2, false);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('offers 720p and 360p, fewer for a smaller source, and at least one', () => {
    expect(renditionHeights(1080)).toEqual([720, 360]);
    expect(renditionHeights(720)).toEqual([720, 360]);
    expect(renditionHeights(480)).toEqual([360]);
    expect(renditionHeights(240)).toEqual([240]);
    expect(renditionHeights(239)).toEqual([238]);
  });

  it('transcodes a 3-second 720p video into two renditions, a master playlist with relative URIs, a poster and its duration', async () => {
    const out = outDir('hd');
    const hls = await transcodeToHls(path.join(dir, 'hd.mp4'), out, FAST);
    expect(hls.probe).toMatchObject({ width: 1280, height: 720, hasAudio: true });
    expect(hls.probe.durationSeconds).toBeGreaterThan(2.9);
    expect(hls.probe.durationSeconds).toBeLessThan(3.2);
    expect(hls.renditions.map((r) => [r.name, r.width, r.height])).toEqual([
      ['720p', 1280, 720],
      ['360p', 640, 360],
    ]);
    const master = readFileSync(path.join(out, 'hls.m3u8'), 'utf8');
    expect(master.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(['hls-720p.m3u8', 'hls-360p.m3u8']);
    expect(master).toContain('RESOLUTION=640x360');
    const rendition = readFileSync(path.join(out, 'hls-360p.m3u8'), 'utf8');
    const segments = rendition.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(segments.length).toBeGreaterThanOrEqual(3);
    for (const s of segments) expect(s).toMatch(/^hls-360p-\d{3}\.ts$/);
    expect(rendition).toContain('#EXT-X-ENDLIST');
    // MPEG-TS packets start with the sync byte 0x47; the poster is a JPEG.
    expect(readFileSync(path.join(out, segments[0]))[0]).toBe(0x47);
    expect([...readFileSync(path.join(out, 'poster.jpg')).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    // Every file written is listed, and nothing else is in the folder.
    expect([...hls.files].sort()).toEqual(readdirSync(out).sort());
  }, 60_000);

  it('gives a 320x240 source (no audio) one rendition at its own height', async () => {
    const hls = await transcodeToHls(path.join(dir, 'small.mp4'), outDir('small'), FAST);
    expect(hls.renditions.map((r) => [r.name, r.width, r.height])).toEqual([['240p', 320, 240]]);
    expect(hls.probe.hasAudio).toBe(false);
  }, 60_000);

  it('fails a broken file (an MP4 header then garbage) as invalid, with a reason', async () => {
    const broken = path.join(dir, 'broken.mp4');
    const header = readFileSync(path.join(dir, 'hd.mp4')).subarray(0, 64);
    writeFileSync(broken, Buffer.concat([header, Buffer.alloc(50_000, 0x5a)]));
    const error = await transcodeToHls(broken, outDir('broken'), FAST).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FfmpegError);
    expect((error as FfmpegError).reason).toBe('invalid');
    expect((error as FfmpegError).message).toMatch(/^not a readable video/);
    expect((error as FfmpegError).message).not.toContain(dir);
  });

  it('a missing ffmpeg is a failure of ours (could not start), not an unreadable file', async () => {
    const error = await transcodeToHls(path.join(dir, 'hd.mp4'), outDir('missing'), { ...FAST, ffmpegPath: path.join(dir, 'no-such-bin', 'ffmpeg') }).catch((e: unknown) => e);
    expect((error as FfmpegError).reason).toBe('failed');
    expect((error as FfmpegError).message).toMatch(/^could not start ffprobe: /);
  });

  it('kills ffmpeg at the time limit, and on abort', async () => {
    const slow = await transcodeToHls(path.join(dir, 'hd.mp4'), outDir('slow'), { ...FAST, timeoutMs: 30 }).catch((e: unknown) => e);
    expect((slow as FfmpegError).reason).toBe('timeout');
    const controller = new AbortController();
    const aborted = transcodeToHls(path.join(dir, 'hd.mp4'), outDir('aborted'), { ...FAST, signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    expect(((await aborted) as FfmpegError).reason).toBe('aborted');
  }, 30_000);

  it('appends a signature to every URI of a playlist, tags untouched', () => {
    const playlist = '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nhls-720p.m3u8\n#EXTINF:1.0,\nhls-720p-000.ts\n';
    expect(signPlaylistUris(playlist, 'exp=1&sig=abc')).toBe('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nhls-720p.m3u8?exp=1&sig=abc\n#EXTINF:1.0,\nhls-720p-000.ts?exp=1&sig=abc\n');
    expect(signPlaylistUris(playlist, '')).toBe(playlist);
  });
});
