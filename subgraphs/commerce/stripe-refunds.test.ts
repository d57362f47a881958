import { describe, expect, it } from '@jest/globals';
import { stripeAmountToCents } from './stripe-refunds.js';

describe(stripeAmountToCents.name, () => {
  it('keeps two-decimal currencies as they are (BRL, USD)', () => {
    expect(stripeAmountToCents('BRL', 4990)).toBe(4990);
    expect(stripeAmountToCents('USD', 1)).toBe(1);
  });

  it('scales zero-decimal currencies up (JPY: yen to hundredths)', () => {
    expect(stripeAmountToCents('JPY', 500)).toBe(50_000);
  });

  it('scales three-decimal currencies down, refusing what is not a whole hundredth (KWD)', () => {
    expect(stripeAmountToCents('KWD', 1230)).toBe(123);
    expect(stripeAmountToCents('KWD', 1235)).toBeNull();
  });

  it.each([[10.5], [-1], ['100'], [null], [undefined], [Number.MAX_SAFE_INTEGER + 2]])('refuses %p', (amount) => {
    expect(stripeAmountToCents('BRL', amount)).toBeNull();
  });
});
