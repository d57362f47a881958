import sharp, { type Metadata, type OutputInfo } from 'sharp';
import type { Readable } from 'node:stream';

/** The largest side of the stored image. */
export const IMAGE_MAX_SIDE = 2048;
/** The largest side of the thumbnail. */
export const THUMB_SIDE = 320;
/**
 * The most pixels an uploaded image of each kind may declare (width x height), read from its header before a pixel is
 * decoded (libvips' `limitInputPixels` too): an avatar 16 megapixels (4,096 x 4,096), a post image 40 megapixels
 * (7,680 x 5,120; a 24 MP phone photo or a 36 MP camera's fit). Decoding costs with the pixels, not the bytes: a
 * 156 KB PNG declaring 7,000 x 7,000 pixels (49 MP) is refused, as is a decompression bomb's 50,000 x 50,000.
 */
export const PIXEL_BUDGETS = { avatar: 16_000_000, post_image: 40_000_000 } as const;
export type ImageKind = keyof typeof PIXEL_BUDGETS;

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

const open = (file: string, maxPixels: number) => sharp(file, { limitInputPixels: maxPixels, failOn: 'truncated', sequentialRead: true, animated: false });

/**
 * Checks the image at `file` (its header only: the declared size against the kind's `PIXEL_BUDGETS`), then returns its two
 * WebP renditions: `image` (at most `IMAGE_MAX_SIDE` px a side) and `thumb` (at most `THUMB_SIDE`). Both are turned
 * upright by their EXIF orientation and carry no metadata (EXIF, GPS, XMP, ICC dropped: sharp keeps none unless asked).
 * The first frame of an animation is kept. Decoding runs on libvips' threads, off the event loop.
 */
export async function renditionsOf(file: string, kind: ImageKind): Promise<{ width: number; height: number; renditions: Rendition[] }> {
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ImageRejected('invalid_image', `The image cannot be read: ${(error as Error).message}`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!width || !height) throw new ImageRejected('invalid_image', 'The image declares no size.');
  const budget = PIXEL_BUDGETS[kind];
  if (width * height > budget) {
    const n = (v: number) => v.toLocaleString('en-US');
    throw new ImageRejected('image_too_large', `The image declares ${n(width)} x ${n(height)} pixels (${n(width * height)}); a ${kind} may have at most ${n(budget)} pixels.`);
  }
  const rendition = (name: Rendition['name'], side: number, quality: number): Rendition => {
    const stream = open(file, budget).autoOrient().resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }).webp({ quality });
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
