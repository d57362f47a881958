import sharp, { type Metadata, type OutputInfo } from 'sharp';
import type { Readable } from 'node:stream';

/** The largest side of the stored image. */
export const IMAGE_MAX_SIDE = 2048;
/** The largest side of the thumbnail. */
export const THUMB_SIDE = 320;
/**
 * The most pixels an uploaded image may declare (width x height): 50 megapixels, well above any camera's 48 MP but far
 * below a decompression bomb's 50,000 x 50,000 (2.5 gigapixels), which libvips refuses before decoding a pixel.
 */
export const MAX_INPUT_PIXELS = 50_000_000;

/** Why an image was refused: `image_too_large` (a bomb, or too many pixels) or `invalid_image` (unreadable, truncated). */
export class ImageRejected extends Error {
  constructor(
    readonly code: 'image_too_large' | 'invalid_image',
    message: string,
  ) {
    super(message);
    this.name = 'ImageRejected';
  }
}

/** One re-encoded rendition, as a stream of WebP bytes, and its size once the stream has ended. */
export interface Rendition {
  name: 'image' | 'thumb';
  stream: Readable;
  /** Resolves to the rendition's pixel size after `stream` ended. */
  info: Promise<{ width: number; height: number }>;
}

const open = (file: string) => sharp(file, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'truncated', sequentialRead: true, animated: false });

/**
 * Checks the image at `file` (its header only: the declared size against `MAX_INPUT_PIXELS`), then returns its two
 * WebP renditions: `image` (at most `IMAGE_MAX_SIDE` px a side) and `thumb` (at most `THUMB_SIDE`). Both are turned
 * upright by their EXIF orientation and carry no metadata (EXIF, GPS, XMP, ICC dropped: sharp keeps none unless asked).
 * The first frame of an animation is kept. Decoding runs on libvips' threads, off the event loop.
 */
export async function renditionsOf(file: string): Promise<{ width: number; height: number; renditions: Rendition[] }> {
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ImageRejected('invalid_image', `The image cannot be read: ${(error as Error).message}`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!width || !height) throw new ImageRejected('invalid_image', 'The image declares no size.');
  if (width * height > MAX_INPUT_PIXELS) {
    throw new ImageRejected('image_too_large', `The image declares ${width} x ${height} pixels; at most ${MAX_INPUT_PIXELS} pixels are accepted.`);
  }
  const rendition = (name: Rendition['name'], side: number, quality: number): Rendition => {
    const stream = open(file).autoOrient().resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }).webp({ quality });
    const info = new Promise<{ width: number; height: number }>((resolve, reject) => {
      stream.once('info', (i: OutputInfo) => resolve({ width: i.width, height: i.height }));
      stream.once('error', reject);
    });
    info.catch(() => undefined); // the stream's consumer sees the same error
    return { name, stream, info };
  };
  return { width, height, renditions: [rendition('image', IMAGE_MAX_SIDE, 82), rendition('thumb', THUMB_SIDE, 75)] };
}

/** A sharp decoding failure as an `ImageRejected` (pixel limit: `image_too_large`; anything else: `invalid_image`). */
export function imageErrorOf(error: unknown): ImageRejected {
  if (error instanceof ImageRejected) return error;
  const message = (error as Error)?.message ?? String(error);
  if (/pixel limit/i.test(message)) return new ImageRejected('image_too_large', 'The image has too many pixels.');
  return new ImageRejected('invalid_image', `The image cannot be decoded: ${message.split('\n')[0]}`);
}
