import { describe, it, expect } from '@jest/globals';
import { MemorySeenStore } from '../src/dedupe.js';

function clock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (seconds: number) => (now += seconds * 1000) };
}

describe(MemorySeenStore.name, () => {
  it('remembers an id for 24 hours by default', () => {
    const c = clock();
    const store = new MemorySeenStore({ clock: c.now });
    expect(store.checkAndAdd('dlv_1')).toBe(true);
    expect(store.checkAndAdd('dlv_1')).toBe(false);
    c.advance(24 * 3600 - 1);
    expect(store.has('dlv_1')).toBe(true);
    c.advance(1);
    expect(store.has('dlv_1')).toBe(false);
    expect(store.checkAndAdd('dlv_1')).toBe(true);
  });

  it('honours a per-call and a per-store TTL', () => {
    const c = clock();
    const store = new MemorySeenStore({ clock: c.now, ttlSeconds: 60 });
    store.add('short', 10);
    store.add('default');
    c.advance(30);
    expect(store.has('short')).toBe(false);
    expect(store.has('default')).toBe(true);
    c.advance(30);
    expect(store.has('default')).toBe(false);
  });

  it('drops expired ids as new ones arrive', () => {
    const c = clock();
    const store = new MemorySeenStore({ clock: c.now, ttlSeconds: 10 });
    for (let i = 0; i < 100; i++) store.add(`old_${i}`);
    c.advance(11);
    store.add('new');
    expect(store.size).toBe(1);
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const store = new MemorySeenStore({ maxEntries: 3 });
    for (const id of ['a', 'b', 'c', 'd']) store.add(id);
    expect(store.size).toBe(3);
    expect(store.has('a')).toBe(false);
    expect(store.has('d')).toBe(true);
  });

  it('forgets an id on delete', () => {
    const store = new MemorySeenStore();
    store.add('x');
    store.delete('x');
    expect(store.checkAndAdd('x')).toBe(true);
  });

  it('rejects a non-positive TTL', () => {
    expect(() => new MemorySeenStore({ ttlSeconds: 0 })).toThrow(TypeError);
  });
});
