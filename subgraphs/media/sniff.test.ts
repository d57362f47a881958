import { describe, expect, it } from '@jest/globals';
import { sniff } from './sniff.js';

const b = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const box = (type: string, brand: string) => b([0, 0, 0, 0x20], type, brand, [0, 0, 0, 0], 'isommp41');

describe('sniff', () => {
  it('knows the four image types by their magic bytes', () => {
    expect(sniff(b([0xff, 0xd8, 0xff, 0xe0], 'JFIF'))?.mime).toBe('image/jpeg');
    expect(sniff(b([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a], 'rest'))?.mime).toBe('image/png');
    expect(sniff(b('GIF89a', [1, 0, 1, 0]))?.mime).toBe('image/gif');
    expect(sniff(b('GIF87a'))?.mime).toBe('image/gif');
    expect(sniff(b('RIFF', [0, 0, 0, 0], 'WEBPVP8 '))?.mime).toBe('image/webp');
  });

  it('knows MP4, MOV and WebM', () => {
    expect(sniff(box('ftyp', 'isom'))).toEqual({ family: 'video', mime: 'video/mp4' });
    expect(sniff(box('ftyp', 'mp42'))?.mime).toBe('video/mp4');
    expect(sniff(box('ftyp', 'qt  '))).toEqual({ family: 'video', mime: 'video/quicktime' });
    expect(sniff(b([0, 0, 0, 8], 'wide', [0, 0, 0, 8], 'mdat'))?.mime).toBe('video/quicktime');
    const webm = b([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0x82, 0x84], 'webm', [0x42, 0x87]);
    expect(sniff(webm)).toEqual({ family: 'video', mime: 'video/webm' });
  });

  it('refuses everything else: text, PDF, Matroska that is not WebM, HEIC and audio brands, empty and short files', () => {
    expect(sniff(Buffer.alloc(0))).toBeNull();
    expect(sniff(b([0xff, 0xd8]))).toBeNull();
    expect(sniff(b('hello world, not an image'))).toBeNull();
    expect(sniff(b('%PDF-1.7'))).toBeNull();
    expect(sniff(b('RIFF', [0, 0, 0, 0], 'WAVEfmt '))).toBeNull();
    expect(sniff(b([0x1a, 0x45, 0xdf, 0xa3, 0x93, 0x42, 0x82, 0x88], 'matroska'))).toBeNull();
    expect(sniff(box('ftyp', 'heic'))).toBeNull();
    expect(sniff(box('ftyp', 'M4A '))).toBeNull();
    expect(sniff(b('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
  });
});
