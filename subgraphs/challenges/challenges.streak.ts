/** XP for one accepted check-in (source `challenge.checkin`, key `challenge.checkin:<check-in id>`). */
export const CHECKIN_XP = 10;

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The challenge day open at `now` for an enrollment started at `startedAt`: day N is open from
 * startedAt + (N - 1) × 24 h, so day 1 during the first 24 hours. Days are 24-hour periods from the
 * enrollment's start, not calendar days, so no time zone is involved.
 */
export function dayAt(startedAt: Date, now: Date): number {
  return Math.floor((now.getTime() - startedAt.getTime()) / DAY_MS) + 1;
}

/** The length of the run of consecutive day numbers ending at the highest one (`days` in any order, no duplicates). */
export function runEndingAtHighest(days: readonly number[]): number {
  const sorted = [...days].sort((a, b) => b - a);
  if (sorted.length === 0) return 0;
  let run = 1;
  while (run < sorted.length && sorted[run] === sorted[run - 1] - 1) run += 1;
  return run;
}

/**
 * The current streak: the run of consecutive checked-in days ending at the highest day checked in, while that
 * day is today's or yesterday's (today's check-in can still extend it); 0 once a whole day was missed. After
 * the challenge's last day, the streak stays as it was if the last day was checked in, else 0.
 */
export function currentStreak(
  e: { streakRun: number; lastCheckinDay: number | null },
  durationDays: number,
  today: number,
): number {
  if (e.lastCheckinDay === null || e.streakRun === 0) return 0;
  const reference = Math.min(today, durationDays + 1);
  return e.lastCheckinDay >= reference - 1 ? e.streakRun : 0;
}
