import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isoTime } from './iso-time.js';

const same = (time: number) => {
  const date = new Date(time);
  expect([time, isoTime(date)]).toEqual([time, date.toISOString()]);
};

describe('isoTime', () => {
  it('formats as toISOString does at the edges: years 0000 and 9999, the epoch, leap days, centuries, milliseconds', () => {
    const edges = [
      -62_167_219_200_000, // 0000-01-01T00:00:00.000Z
      -62_167_219_200_001, // -000001-12-31T23:59:59.999Z: left to toISOString
      253_402_300_799_999, // 9999-12-31T23:59:59.999Z
      253_402_300_800_000, // +010000-01-01: left to toISOString
      0,
      -1,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2000, 2, 1),
      Date.UTC(1900, 1, 28, 12),
      Date.UTC(1900, 2, 1),
      Date.UTC(2100, 1, 28, 0, 0, 0, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(2026, 10, 26, 13, 27, 36, 599),
      8.64e15, // the largest time value
      -8.64e15,
    ];
    for (const time of edges) same(time);
    expect(isoTime(new Date(-62_167_219_200_000))).toBe('0000-01-01T00:00:00.000Z');
    expect(isoTime(new Date(253_402_300_799_999))).toBe('9999-12-31T23:59:59.999Z');
  });

  it('formats every instant of years 0000 to 9999 and beyond as toISOString does', () => {
    fc.assert(fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (time) => same(time)), { numRuns: 10_000 });
    fc.assert(fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }), (time) => same(time)), { numRuns: 10_000 });
  });

  it('throws the same RangeError as toISOString for an invalid date', () => {
    expect(() => new Date(Number.NaN).toISOString()).toThrow(RangeError);
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
