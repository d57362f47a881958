// gateway/src/bounded-cache.ts: the caches of documents, plans and compiled fetches are bounded in estimated bytes,
// and what is stored for a document sent once never pushes out what clients send again (issue 29, memory).
import { describe, expect, it } from '@jest/globals';
import { parse } from 'graphql';
import { BoundedCache, documentBytes } from '../gateway/src/bounded-cache.js';

const sized = (bytes: number, oneOffBytes: number) => new BoundedCache<number>({ bytes, oneOffBytes, sizeOf: (value) => value });

describe(BoundedCache.name, () => {
  describe('get', () => {
    it('keeps an entry for good only once it is read again', () => {
      const cache = sized(100, 30);
      cache.set('regular', 10);
      expect(cache.get('regular')).toBe(10);
      for (let i = 0; i < 1000; i += 1) cache.set(`once ${i}`, 10);
      expect(cache.get('regular')).toBe(10);
      expect(cache.stats.kept).toEqual({ entries: 1, bytes: 10 });
      expect(cache.stats.oneOff).toEqual({ entries: 3, bytes: 30 });
      expect(cache.get('once 0')).toBeUndefined();
      expect(cache.get('once 999')).toBe(10);
    });

    it('forgets the least recently used kept entries past its bytes', () => {
      const cache = sized(30, 30);
      for (const key of ['a', 'b', 'c']) {
        cache.set(key, 10);
        cache.get(key);
      }
      cache.get('a');
      cache.set('d', 10);
      cache.get('d');
      expect(['a', 'b', 'c', 'd'].map((k) => cache.peek(k))).toEqual([10, undefined, 10, 10]);
      expect(cache.stats.kept.bytes).toBe(30);
    });
  });

  describe('set', () => {
    it('keeps nothing larger than a part, and replaces an entry where it is', () => {
      const cache = sized(100, 30);
      cache.set('huge', 31);
      expect(cache.has('huge')).toBe(false);
      cache.set('k', 5);
      cache.get('k');
      cache.set('k', 20);
      expect(cache.stats.kept).toEqual({ entries: 1, bytes: 20 });
      expect(cache.stats.oneOff.entries).toBe(0);
    });
  });
});

describe(documentBytes.name, () => {
  it('grows with the tokens of a document, above what graphql-js keeps for them', () => {
    const small = parse('{ a: communities { items { id } } }');
    const large = parse(`{ ${Array.from({ length: 50 }, (_, i) => `a${i}: communities { items { id name } }`).join(' ')} }`);
    expect(documentBytes(small)).toBeGreaterThan(12 * 310);
    expect(documentBytes(large)).toBeGreaterThan(30 * documentBytes(small));
    expect(documentBytes(small, true)).toBeGreaterThan(documentBytes(small));
  });
});
