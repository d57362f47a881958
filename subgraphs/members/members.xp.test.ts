import { describe, expect, it } from '@jest/globals';
import { levelFor, xpForLevel } from './members.xp.js';

describe('XP curve', () => {
  describe(levelFor.name, () => {
    it('follows level = floor(sqrt(xp / 100)) + 1', () => {
      expect([0, 99, 100, 399, 400, 899, 900, 1600].map(levelFor)).toEqual([1, 1, 2, 2, 3, 3, 4, 5]);
    });

    it('changes level exactly where each level starts, up to level 1000', () => {
      for (let level = 2; level <= 1000; level += 1) {
        const start = 100 * (level - 1) ** 2;
        expect([level, levelFor(start - 1), levelFor(start)]).toEqual([level, level - 1, level]);
      }
    });

    it('keeps negative XP at level 1', () => {
      expect([-1, -100, -1e9].map(levelFor)).toEqual([1, 1, 1]);
    });

    it('answers the level of a large total without float drift (level 10001 at 10^10 XP)', () => {
      expect(levelFor(10_000_000_000)).toBe(10_001);
      expect(levelFor(10_000_000_000 - 1)).toBe(10_000);
      expect(levelFor(2_147_483_647)).toBe(4_635);
    });
  });

  describe(xpForLevel.name, () => {
    it('is 100 × (level − 1)²', () => {
      expect([1, 2, 3, 4, 5, 10, 100].map(xpForLevel)).toEqual([0, 100, 400, 900, 1600, 8100, 980100]);
    });

    it('starts at 0 for level 1 and below', () => {
      expect([1, 0, -5].map(xpForLevel)).toEqual([0, 0, 0]);
    });

    it('is the inverse of levelFor at every level start, and never above the XP held', () => {
      for (let level = 1; level <= 200; level += 1) expect(levelFor(xpForLevel(level))).toBe(level);
      for (let xp = 0; xp < 5000; xp += 37) expect(xpForLevel(levelFor(xp))).toBeLessThanOrEqual(xp);
      for (let xp = 0; xp < 5000; xp += 37) expect(xpForLevel(levelFor(xp) + 1)).toBeGreaterThan(xp);
    });
  });
});
