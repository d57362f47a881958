import { spawn } from 'node:child_process';
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The ffmpeg side of video lessons (docs/media.md, "Video lessons"): `ffprobe` of an upload, and its HLS renditions,
 * master playlist and poster frame written into one output folder. Each tool runs as a child process with its
 * arguments as an array (never a shell), a time limit and an abort signal; it only ever writes into `outDir`, whose
 * file names are generated here (never taken from the upload).
 */

/** What a run needs besides its files. */
export interface FfmpegOptions {
  /** `ffmpeg`'s path (default `ffmpeg` on the PATH); `ffprobe` is looked up beside it. */
  ffmpegPath?: string;
  /** The whole run is killed (SIGKILL) after this many milliseconds and fails with `timeout`. */
  timeoutMs: number;
  /** Aborts the run (a worker stopping): the child is killed and the promise rejects with `aborted`. */
  signal?: AbortSignal;
  /** HLS segment length in seconds (default 4). */
  segmentSeconds?: number;
  /** x264 preset (default `veryfast`; tests use `ultrafast`). */
  preset?: string;
}

/** Why a run failed: `invalid` (the file is not a video ffmpeg can read), `timeout`, `aborted` or `failed`. */
export class FfmpegError extends Error {
  constructor(
    readonly reason: 'invalid' | 'timeout' | 'aborted' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'FfmpegError';
  }
}

/** What ffprobe reads of a video. */
export interface Probe {
  durationSeconds: number;
  width: number;
  height: number;
  hasAudio: boolean;
}

/** One HLS rendition. */
export interface Rendition {
  /** `720p`, `360p`, or the source's own height when it is below 360 (`240p`). */
  name: string;
  width: number;
  height: number;
  /** Its playlist's file name: `hls-720p.m3u8`. */
  playlist: string;
  /** Average bits per second of its segments (the master playlist's BANDWIDTH). */
  bandwidth: number;
}

/** What `transcodeToHls` wrote. */
export interface HlsOutput {
  probe: Probe;
  renditions: Rendition[];
  /** The master playlist's file name. */
  master: string;
  /** The poster's file name. */
  poster: string;
  /** Every file written, names relative to the output folder (master, rendition playlists, segments, poster). */
  files: string[];
}

export const MASTER_PLAYLIST = 'hls.m3u8';
export const POSTER = 'poster.jpg';

/** The heights offered, highest first: a source gets each one up to its own height, and at least one. */
const LADDER = [720, 360] as const;

/** The content type of an output file, by the names this module generates. */
export function contentTypeOf(file: string): string {
  if (file.endsWith('.m3u8')) return 'application/vnd.apple.mpegurl';
  if (file.endsWith('.ts')) return 'video/mp2t';
  if (file.endsWith('.jpg')) return 'image/jpeg';
  return 'application/octet-stream';
}

/** The renditions for a source of `height` pixels: 720p and 360p, those above the source left out, at least one. */
export function renditionHeights(sourceHeight: number): number[] {
  const fits = LADDER.filter((h) => h <= sourceHeight);
  if (fits.length) return [...fits];
  // Smaller than the lowest rung: one rendition at the source's own (even) height.
  return [Math.max(2, sourceHeight - (sourceHeight % 2))];
}

/** `ffprobe` beside `ffmpegPath` (same folder), or on the PATH. */
const ffprobeOf = (ffmpegPath: string) => (ffmpegPath.includes('/') ? path.join(path.dirname(ffmpegPath), 'ffprobe') : 'ffprobe');

/** The last meaningful lines of a tool's stderr: a failure reason a person can read, without paths of this machine. */
function lastLines(stderr: string, outDir?: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('Press [q]'));
  let text = lines.slice(-2).join(' / ').replace(/ @ 0x[0-9a-f]+/g, '');
  if (outDir) text = text.split(outDir).join('.');
  return text.slice(0, 300);
}

/** Runs `file` with `args` (no shell), collecting stdout and the tail of stderr, within the options' time and signal. */
function run(file: string, args: string[], opts: Pick<FfmpegOptions, 'timeoutMs' | 'signal'>, cwd?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new FfmpegError('aborted', 'transcoding was interrupted'));
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    let stdout = '';
    let stderr = '';
    let ended: FfmpegError | null = null;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < 1_000_000) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-8_000); // the tail is what explains a failure
    });
    const kill = (why: FfmpegError) => {
      ended ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill(new FfmpegError('timeout', `transcoding took longer than ${Math.round(opts.timeoutMs / 1000)} s`)), opts.timeoutMs);
    const onAbort = () => kill(new FfmpegError('aborted', 'transcoding was interrupted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new FfmpegError('failed', `could not start ${path.basename(file)}: ${error.message}`));
    });
    child.once('close', (code, sig) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (ended) return reject(ended);
      if (code === 0) return resolve({ stdout, stderr });
      const err = new FfmpegError('failed', `${path.basename(file)} exited with ${code ?? sig}: ${lastLines(stderr, cwd)}`);
      (err as FfmpegError & { stderr?: string }).stderr = stderr;
      reject(err);
    });
  });
}

/**
 * Reads the duration, size and streams of `input` with ffprobe. Rejects with `invalid` when ffprobe cannot read it
 * or it has no video stream with a size and a duration.
 */
export async function probeVideo(input: string, opts: FfmpegOptions): Promise<Probe> {
  let out: string;
  try {
    ({ stdout: out } = await run(
      ffprobeOf(opts.ffmpegPath ?? 'ffmpeg'),
      ['-v', 'error', '-print_format', 'json', '-show_entries', 'format=duration:stream=codec_type,width,height,duration', input],
      opts,
    ));
  } catch (error) {
    // A tool that ran and refused the file (not one that could not start: that stays `failed`).
    if (error instanceof FfmpegError && error.reason === 'failed' && (error as FfmpegError & { stderr?: string }).stderr !== undefined) {
      const detail = lastLines((error as FfmpegError & { stderr?: string }).stderr ?? '', path.dirname(input)).replaceAll(input, 'the upload');
      throw new FfmpegError('invalid', `not a readable video${detail ? `: ${detail}` : ''}`);
    }
    throw error;
  }
  let parsed: { format?: { duration?: string }; streams?: Array<{ codec_type?: string; width?: number; height?: number; duration?: string }> };
  try {
    parsed = JSON.parse(out) as typeof parsed;
  } catch {
    throw new FfmpegError('invalid', 'not a readable video: ffprobe gave no description');
  }
  const video = parsed.streams?.find((s) => s.codec_type === 'video' && (s.width ?? 0) > 0 && (s.height ?? 0) > 0);
  if (!video) throw new FfmpegError('invalid', 'not a readable video: no video stream');
  const durationSeconds = Number(parsed.format?.duration ?? video.duration);
  if (!Number.isFinite(durationSeconds) || durationSeconds <= 0) throw new FfmpegError('invalid', 'not a readable video: no duration');
  return {
    durationSeconds,
    width: video.width!,
    height: video.height!,
    hasAudio: parsed.streams?.some((s) => s.codec_type === 'audio') ?? false,
  };
}

/**
 * Transcodes `input` into `outDir` (which must exist and be empty or hold an earlier, interrupted attempt's files,
 * which are overwritten): one H.264/AAC HLS rendition per `renditionHeights`, each `hls-<name>.m3u8` with segments
 * `hls-<name>-000.ts`..., the master playlist `hls.m3u8` naming them by relative URI, and `poster.jpg` (a frame at one
 * second, or the middle of a shorter video). One ffmpeg run decodes the source once for every output.
 */
export async function transcodeToHls(input: string, outDir: string, opts: FfmpegOptions): Promise<HlsOutput> {
  const started = Date.now();
  const probe = await probeVideo(input, opts);
  const remaining = () => Math.max(1, opts.timeoutMs - (Date.now() - started));
  const segment = opts.segmentSeconds ?? 4;
  const preset = opts.preset ?? 'veryfast';
  const heights = renditionHeights(probe.height);
  const renditions: Array<Omit<Rendition, 'bandwidth'>> = heights.map((h) => {
    const name = `${h}p`;
    // The width keeps the source's aspect ratio, rounded to even (H.264 4:2:0 needs even sizes).
    const w = Math.max(2, Math.round((probe.width * h) / probe.height / 2) * 2);
    return { name, width: w, height: h, playlist: `hls-${name}.m3u8` };
  });

  const args = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-i', input];
  for (const r of renditions) {
    args.push('-map', '0:v:0');
    if (probe.hasAudio) args.push('-map', '0:a:0');
    args.push(
      '-vf', `scale=${r.width}:${r.height}`,
      '-c:v', 'libx264', '-preset', preset, '-profile:v', 'main', '-pix_fmt', 'yuv420p', '-crf', '23',
      // A key frame at every segment boundary, so the renditions switch cleanly.
      '-force_key_frames', `expr:gte(t,n_forced*${segment})`, '-sc_threshold', '0',
    );
    if (probe.hasAudio) args.push('-c:a', 'aac', '-b:a', r.height >= 720 ? '128k' : '96k', '-ac', '2');
    args.push(
      '-f', 'hls', '-hls_time', String(segment), '-hls_playlist_type', 'vod', '-hls_list_size', '0',
      '-hls_segment_type', 'mpegts', '-hls_flags', 'independent_segments',
      // Relative names: the playlist's URIs resolve beside it (/media/<id>/hls-720p-000.ts).
      '-hls_segment_filename', `hls-${r.name}-%03d.ts`,
      r.playlist,
    );
  }
  const at = Math.min(1, probe.durationSeconds / 2);
  const top = renditions[0];
  args.push('-map', '0:v:0', '-ss', at.toFixed(3), '-frames:v', '1', '-vf', `scale=${top.width}:${top.height}`, '-q:v', '3', '-update', '1', POSTER);

  try {
    await run(opts.ffmpegPath ?? 'ffmpeg', args, { timeoutMs: remaining(), signal: opts.signal }, outDir);
  } catch (error) {
    if (error instanceof FfmpegError && error.reason === 'failed' && (error as FfmpegError & { stderr?: string }).stderr !== undefined) throw new FfmpegError('invalid', `the video could not be transcoded: ${error.message.replace(/^ffmpeg exited with [^:]*: /, '')}`);
    throw error;
  }

  const written = (await readdir(outDir)).sort();
  const withBandwidth: Rendition[] = [];
  for (const r of renditions) {
    const segments = written.filter((f) => f.startsWith(`hls-${r.name}-`) && f.endsWith('.ts'));
    if (!written.includes(r.playlist) || segments.length === 0) throw new FfmpegError('failed', `ffmpeg wrote no ${r.name} rendition`);
    let bytes = 0;
    for (const s of segments) bytes += (await stat(path.join(outDir, s))).size;
    withBandwidth.push({ ...r, bandwidth: Math.max(1, Math.ceil((bytes * 8) / probe.durationSeconds)) });
  }
  if (!written.includes(POSTER)) throw new FfmpegError('failed', 'ffmpeg wrote no poster frame');

  await writeFile(path.join(outDir, MASTER_PLAYLIST), masterPlaylist(withBandwidth));
  const files = [MASTER_PLAYLIST, POSTER, ...withBandwidth.flatMap((r) => [r.playlist, ...written.filter((f) => f.startsWith(`hls-${r.name}-`) && f.endsWith('.ts'))])];
  return { probe, renditions: withBandwidth, master: MASTER_PLAYLIST, poster: POSTER, files };
}

/** The master playlist: one `EXT-X-STREAM-INF` per rendition, highest first, each naming its playlist relatively. */
export function masterPlaylist(renditions: readonly Rendition[]): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const r of renditions) {
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${Math.ceil(r.bandwidth * 1.2)},AVERAGE-BANDWIDTH=${r.bandwidth},RESOLUTION=${r.width}x${r.height},NAME="${r.name}"`);
    lines.push(r.playlist);
  }
  return lines.join('\n') + '\n';
}

/**
 * `playlist` with `query` (`exp=...&sig=...`, a private tribe's signed URL) appended to every URI line, so a player
 * that resolves the relative URIs beside the playlist fetches each rendition and segment with the same signature.
 * Tags and comments are kept as they are; a URI that has a query already is left alone.
 */
export function signPlaylistUris(playlist: string, query: string): string {
  if (!query) return playlist;
  return playlist
    .split('\n')
    .map((line) => {
      const t = line.trim();
      if (!t || t.startsWith('#') || t.includes('?') || t.includes('/')) return line;
      return `${t}?${query}`;
    })
    .join('\n');
}
