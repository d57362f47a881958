import { describe, expect, it } from '@jest/globals';
import { connection, decodeCursor, encodeCursor, firstOf, isNumberAndId, isTimeAndId, slice } from './connection.js';

const SECRET = 'test-secret';
const ID = '0b6f3a52-1f7e-4c1a-9a51-2a4c7f0d9e11';

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    const { kind, code } = error as { kind: string; code: string };
    return { kind, code };
  }
  throw new Error('expected a refusal');
}

describe('cursors', () => {
  it('round-trips a key through an opaque cursor of its list', () => {
    const cursor = encodeCursor(SECRET, 'homeFeed:u1', ['2026-11-23T10:00:00.000Z', ID]);
    expect(cursor).not.toContain(ID);
    expect(decodeCursor(SECRET, 'homeFeed:u1', cursor, isTimeAndId)).toEqual(['2026-11-23T10:00:00.000Z', ID]);
  });

  it('refuses a cursor of another list, a changed one, a re-signed one and garbage with invalid_cursor', () => {
    const cursor = encodeCursor(SECRET, 'homeFeed:u1', ['2026-11-23T10:00:00.000Z', ID]);
    const invalidCursor = { kind: 'invalid', code: 'invalid_cursor' };
    expect(refusal(() => decodeCursor(SECRET, 'homeFeed:u2', cursor, isTimeAndId))).toEqual(invalidCursor);
    expect(refusal(() => decodeCursor('other-secret', 'homeFeed:u1', cursor, isTimeAndId))).toEqual(invalidCursor);
    const [payload, sig] = cursor.split('.');
    const changed = Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', ID])).toString('base64url');
    expect(refusal(() => decodeCursor(SECRET, 'homeFeed:u1', `${changed}.${sig}`, isTimeAndId))).toEqual(invalidCursor);
    expect(refusal(() => decodeCursor(SECRET, 'homeFeed:u1', `${payload}.${sig.slice(1)}`, isTimeAndId))).toEqual(invalidCursor);
    for (const garbage of ['', '.', 'abc', '\u0000', 'x'.repeat(5_000), `${payload}`, `.${sig}`]) {
      expect(refusal(() => decodeCursor(SECRET, 'homeFeed:u1', garbage, isTimeAndId))).toEqual(invalidCursor);
    }
  });

  it('refuses a genuine cursor whose key has the wrong shape for the list', () => {
    const scoreCursor = encodeCursor(SECRET, 'l', [1.5, ID]);
    expect(decodeCursor(SECRET, 'l', scoreCursor, isNumberAndId)).toEqual([1.5, ID]);
    expect(refusal(() => decodeCursor(SECRET, 'l', scoreCursor, isTimeAndId))).toEqual({ kind: 'invalid', code: 'invalid_cursor' });
    const notAnId = encodeCursor(SECRET, 'l', ['2026-11-23T10:00:00.000Z', 'nope']);
    expect(refusal(() => decodeCursor(SECRET, 'l', notAnId, isTimeAndId))).toEqual({ kind: 'invalid', code: 'invalid_cursor' });
  });
});

describe(firstOf.name, () => {
  it('defaults to 20 and takes 1 to 50', () => {
    expect(firstOf(undefined)).toBe(20);
    expect(firstOf(null)).toBe(20);
    expect(firstOf(1)).toBe(1);
    expect(firstOf(50)).toBe(50);
  });

  it('refuses 0, 51, negatives and fractions with invalid_first', () => {
    for (const n of [0, 51, -1, 1.5, Number.MAX_SAFE_INTEGER]) {
      expect(refusal(() => firstOf(n))).toEqual({ kind: 'invalid', code: 'invalid_first' });
    }
  });
});

describe(connection.name, () => {
  const rows = ['a', 'b', 'c'].map((name, i) => ({ name, at: `2026-11-2${i}T00:00:00.000Z`, id: ID }));

  it('shows `limit` rows and says there is a next page when the extra row came back', () => {
    const page = connection(SECRET, 'l', rows, 2, (r) => [r.at, r.id]);
    expect(page.edges.map((e) => e.node.name)).toEqual(['a', 'b']);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(page.pageInfo.endCursor).toBe(page.edges[1].cursor);
    expect(slice(SECRET, 'l', { first: 2, after: page.pageInfo.endCursor }, isTimeAndId)).toEqual({ limit: 2, after: [rows[1].at, ID] });
  });

  it('ends with no next page and a null cursor when empty', () => {
    expect(connection(SECRET, 'l', [], 20, () => [])).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    expect(connection(SECRET, 'l', rows, 3, (r) => [r.at, r.id]).pageInfo.hasNextPage).toBe(false);
  });
});
