import { describe, expect, it } from '@jest/globals';
import { CHECKIN_XP, currentStreak, dayAt, runEndingAtHighest } from './challenges.streak.js';

const HOUR = 60 * 60 * 1000;

describe('challenge streak rules', () => {
  it('awards 10 XP per check-in', () => {
    expect(CHECKIN_XP).toBe(10);
  });

  describe(dayAt.name, () => {
    const start = new Date('2030-01-01T10:00:00.000Z');
    const at = (iso: string) => dayAt(start, new Date(iso));

    it('opens day N at start + (N - 1) × 24 h', () => {
      expect(at('2030-01-01T10:00:00.000Z')).toBe(1);
      expect(at('2030-01-02T09:59:59.999Z')).toBe(1);
      expect(at('2030-01-02T10:00:00.000Z')).toBe(2);
      expect(at('2030-01-11T10:00:00.000Z')).toBe(11);
    });

    it('counts 24-hour periods, not calendar days: midnight does not open a day', () => {
      expect(at('2030-01-01T23:59:59.999Z')).toBe(1);
      expect(at('2030-01-02T00:00:00.000Z')).toBe(1);
      expect(dayAt(new Date('2030-01-01T23:30:00.000Z'), new Date('2030-01-02T00:30:00.000Z'))).toBe(1);
    });

    it('answers day 0 or below before the start (never day 1)', () => {
      expect(dayAt(start, new Date(start.getTime() - 1))).toBe(0);
      expect(dayAt(start, new Date(start.getTime() - 24 * HOUR))).toBe(0);
      expect(dayAt(start, new Date(start.getTime() - 24 * HOUR - 1))).toBe(-1);
    });

    it('counts long challenges exactly (day 366 after 365 × 24 h)', () => {
      expect(dayAt(start, new Date(start.getTime() + 365 * 24 * HOUR))).toBe(366);
      expect(dayAt(start, new Date(start.getTime() + 365 * 24 * HOUR - 1))).toBe(365);
    });
  });

  describe(runEndingAtHighest.name, () => {
    it('counts consecutive days ending at the highest day checked in', () => {
      expect(runEndingAtHighest([])).toBe(0);
      expect(runEndingAtHighest([1])).toBe(1);
      expect(runEndingAtHighest([3, 1, 2])).toBe(3);
      expect(runEndingAtHighest([1, 2, 4])).toBe(1);
      expect(runEndingAtHighest([1, 2, 4, 5, 6])).toBe(3);
    });

    it('ignores an earlier, longer run', () => {
      expect(runEndingAtHighest([1, 2, 3, 4, 5, 7, 8])).toBe(2);
      expect(runEndingAtHighest([10, 1, 2, 3])).toBe(1);
    });

    it('sorts numerically, not as text (9, 10, 11 is a run of 3)', () => {
      expect(runEndingAtHighest([11, 9, 10])).toBe(3);
      expect(runEndingAtHighest([2, 10, 100])).toBe(1);
    });

    it('leaves its input as it was', () => {
      const days = [3, 1, 2];
      runEndingAtHighest(days);
      expect(days).toEqual([3, 1, 2]);
    });
  });

  describe(currentStreak.name, () => {
    it('keeps the run while the last day checked in is today or yesterday, else 0', () => {
      const e = { streakRun: 3, lastCheckinDay: 5 };
      expect(currentStreak(e, 30, 5)).toBe(3);
      expect(currentStreak(e, 30, 6)).toBe(3);
      expect(currentStreak(e, 30, 7)).toBe(0);
      expect(currentStreak({ streakRun: 0, lastCheckinDay: null }, 30, 1)).toBe(0);
    });

    it('freezes after the last day: kept when the last day was checked in, else 0', () => {
      expect(currentStreak({ streakRun: 7, lastCheckinDay: 7 }, 7, 40)).toBe(7);
      expect(currentStreak({ streakRun: 6, lastCheckinDay: 6 }, 7, 40)).toBe(0);
    });

    it('on the day after the last day, still counts the last day as yesterday', () => {
      expect(currentStreak({ streakRun: 2, lastCheckinDay: 7 }, 7, 8)).toBe(2);
      expect(currentStreak({ streakRun: 2, lastCheckinDay: 6 }, 7, 8)).toBe(0);
    });

    it('answers 0 without a check-in or with an empty run, whatever the other field says', () => {
      expect(currentStreak({ streakRun: 4, lastCheckinDay: null }, 30, 4)).toBe(0);
      expect(currentStreak({ streakRun: 0, lastCheckinDay: 4 }, 30, 4)).toBe(0);
    });

    it('keeps the run for a check-in dated after today (a clock behind the enrollment)', () => {
      expect(currentStreak({ streakRun: 1, lastCheckinDay: 3 }, 30, 1)).toBe(1);
    });
  });
});
