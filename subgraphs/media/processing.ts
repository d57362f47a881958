// How many images and videos one process decodes at once (issue 29): an upload flood queues here instead of taking
// every core and every libuv thread (sharp's pipelines run on libuv's pool, as file and crypto work do).
import sharp from 'sharp';
import type { AppDeps } from '../kernel/index.js';

/**
 * A tiny FIFO semaphore: `run(task)` starts `task` when fewer than `limit` tasks run, else when one ends. `active`,
 * `queued` and `peak` (the most tasks seen running at once) describe it.
 */
export class WorkQueue {
  active = 0;
  peak = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  get queued(): number {
    return this.waiting.length;
  }

  /** Waits for a slot and takes it: call the function it resolves to, once, to give the slot back. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    this.peak = Math.max(this.peak, this.active);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next task (active unchanged), so no newcomer can jump the queue.
      if (next) next();
      else this.active -= 1;
    };
  }

  /** Runs `task` in a slot, waiting for one first; the slot is given back whatever `task` does. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      release();
    }
  }
}

/** The work queues of one app (one per process in production). */
export interface MediaWork {
  /** Image decoding and encoding (both renditions of an upload): `MEDIA_IMAGE_CONCURRENCY` at once. */
  images: WorkQueue;
  /** Video transcoding (ffprobe and ffmpeg of a lesson video): `MEDIA_VIDEO_CONCURRENCY` at once. */
  videos: WorkQueue;
}

const queues = new WeakMap<AppDeps, MediaWork>();

/**
 * The app's media work queues, made on first use from `config.media`. libvips then works each image on one thread
 * (`sharp.concurrency(1)`: an image's two renditions are two pipelines), so images in flight take at most
 * `2 x MEDIA_IMAGE_CONCURRENCY` threads of libuv's pool (4 by default) and cores.
 */
export function mediaWork(app: AppDeps): MediaWork {
  let work = queues.get(app);
  if (!work) {
    sharp.concurrency(1);
    work = { images: new WorkQueue(app.config.media.imageConcurrency), videos: new WorkQueue(app.config.media.videoConcurrency) };
    queues.set(app, work);
  }
  return work;
}
