import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LocalDiskStorage, StorageNotFound, assertKey, mediaKey } from './storage.js';

let dir: string;
let store: LocalDiskStorage;
const text = async (r: Readable) => {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts).toString();
};

// The store's folder inside a folder of the test's own: what a bad key would write beside the store (`../x`) is
// looked for there, not in the shared temporary folder where anything may be called `x`.
let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'svc-storage-'));
  dir = path.join(parent, 'store');
  store = new LocalDiskStorage(dir);
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('LocalDiskStorage', () => {
  it('puts a stream, reports size and SHA-256, and gets it whole or by an inclusive byte range', async () => {
    const key = mediaKey('0f0e5d6c-1111-4222-8333-944445555666', 'original');
    expect(key).toBe('0f/0f0e5d6c-1111-4222-8333-944445555666/original');
    const stored = await store.put(key, Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    expect(stored).toEqual({ size: 11, sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' });
    expect(await text(await store.get(key))).toBe('hello world');
    expect(await text(await store.get(key, { start: 6, end: 10 }))).toBe('world');
    expect((await store.stat(key))?.size).toBe(11);
  });

  it('leaves nothing when the body fails midway (no file under the key, no temporary file)', async () => {
    const key = mediaKey('1f0e5d6c-1111-4222-8333-944445555666', 'original');
    async function* failing() {
      yield Buffer.from('partial');
      throw new Error('connection cut');
    }
    await expect(store.put(key, Readable.from(failing()))).rejects.toThrow('connection cut');
    expect(await store.stat(key)).toBeNull();
    expect((await store.list()).filter((f) => f.startsWith('.tmp/'))).toEqual([]);
  });

  it('refuses keys that could leave the folder or were not generated', async () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a//b', 'A/b', 'a/b/', '.tmp/x', 'a\\b', 'a/..', '', 'a/b c']) {
      expect(() => assertKey(bad)).toThrow(/Invalid storage key/);
      await expect(store.put(bad, Readable.from([Buffer.from('x')]))).rejects.toThrow(/Invalid storage key/);
    }
    expect(existsSync(path.join(dir, '..', 'x'))).toBe(false);
  });

  it('get of a missing key is StorageNotFound; delete and deletePrefix are idempotent', async () => {
    await expect(store.get('ab/missing/original')).rejects.toBeInstanceOf(StorageNotFound);
    const key = mediaKey('2f0e5d6c-1111-4222-8333-944445555666', 'image');
    await store.put(key, Readable.from([Buffer.from('x')]));
    await store.deletePrefix('2f/2f0e5d6c-1111-4222-8333-944445555666');
    await store.deletePrefix('2f/2f0e5d6c-1111-4222-8333-944445555666');
    await store.delete(key);
    expect(await store.stat(key)).toBeNull();
  });
});
