import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { serializeDateTime } from './graphql.js';

/** What the DateTime scalar answered before its shortcut for canonical strings. */
const general = (value: unknown) => (value instanceof Date ? value : new Date(value as string)).toISOString();
const outcome = (f: (v: unknown) => string, value: unknown) => {
  try {
    return { value: f(value) };
  } catch (error) {
    return { error: String(error) };
  }
};

describe('DateTime serialisation', () => {
  it('answers every string exactly as parsing and formatting it did: canonical, normalised, invalid', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const stamp = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), two(13), two(32), two(24), two(60), two(60), fc.integer({ min: 0, max: 999 }), fc.constantFrom('Z', 'z', '+00:00', ''))
      .map(([y, mo, d, h, mi, s, ms, zone]) => `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, '0')}${zone}`);
    fc.assert(fc.property(fc.oneof(stamp, fc.string()), (value) => expect(outcome(serializeDateTime, value)).toEqual(outcome(general, value))), { numRuns: 20_000 });
    for (const value of ['2026-02-28T23:59:59.999Z', '2026-02-29T00:00:00.000Z', '2026-04-31T12:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-13-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z', 'soon', '']) {
      expect(outcome(serializeDateTime, value)).toEqual(outcome(general, value));
    }
  });

  it('formats Dates and numbers as before', () => {
    for (const value of [new Date(0), new Date('2026-11-26T10:00:00.123Z'), 1_700_000_000_000, new Date(Number.NaN)]) {
      expect(outcome(serializeDateTime, value)).toEqual(outcome(general, value));
    }
  });
});
