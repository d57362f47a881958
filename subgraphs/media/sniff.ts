/**
 * The type of an upload, from its first bytes only (never its name or the client's Content-Type).
 * Images: JPEG, PNG, WebP, GIF. Videos: MP4, MOV (QuickTime), WebM.
 */
export type SniffedType =
  | { family: 'image'; mime: 'image/jpeg' | 'image/png' | 'image/webp' | 'image/gif' }
  | { family: 'video'; mime: 'video/mp4' | 'video/quicktime' | 'video/webm' };

/** How many leading bytes `sniff` needs to decide (fewer are fine at the end of a short file). */
export const SNIFF_BYTES = 64;

const ascii = (b: Buffer, start: number, end: number) => b.toString('latin1', start, end);

/** ISO BMFF brands that are not video we accept (still images, audio) even though the box says `ftyp`. */
const NON_VIDEO_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1', 'avif', 'avis', 'M4A ', 'M4B ', 'M4P ', 'F4A ', 'F4B ', 'crx ', 'jp2 ', 'jpx ']);

/**
 * The type of the file whose first bytes are `head` (at least `SNIFF_BYTES` of them unless the file is shorter),
 * or null when it is none of the accepted types.
 */
export function sniff(head: Buffer): SniffedType | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { family: 'image', mime: 'image/jpeg' };
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { family: 'image', mime: 'image/png' };
  }
  if (head.length >= 6 && (ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a')) return { family: 'image', mime: 'image/gif' };
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP') return { family: 'image', mime: 'image/webp' };
  if (head.length >= 12 && ascii(head, 4, 8) === 'ftyp') {
    const brand = ascii(head, 8, 12);
    if (brand === 'qt  ') return { family: 'video', mime: 'video/quicktime' };
    if (NON_VIDEO_BRANDS.has(brand)) return null;
    // isom, iso2..iso6, mp41, mp42, avc1, M4V , dash, 3gp4... : an MP4 family video container.
    if (/^[\x20-\x7e]{4}$/.test(brand)) return { family: 'video', mime: 'video/mp4' };
    return null;
  }
  // Old QuickTime files start with a top-level atom other than ftyp.
  if (head.length >= 8 && ['moov', 'mdat', 'wide', 'free', 'pnot'].includes(ascii(head, 4, 8)) && head.readUInt32BE(0) >= 8) {
    return { family: 'video', mime: 'video/quicktime' };
  }
  // Matroska/WebM: EBML header, then a DocType element (0x42 0x82) "webm" within the header.
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) {
    const docType = head.indexOf(Buffer.from([0x42, 0x82]), 4);
    if (docType > 0 && docType + 3 < head.length) {
      const len = head[docType + 2]! & 0x7f; // a one-byte EBML size (0x84 = 4)
      if (ascii(head, docType + 3, docType + 3 + len) === 'webm') return { family: 'video', mime: 'video/webm' };
    }
    return null;
  }
  return null;
}
