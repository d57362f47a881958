import { describe, expect, it } from '@jest/globals';
import { currencySchema, DEFAULT_CURRENCY, fromCents, MAX_PRICE_CENTS, priceSchema, toCents } from './money.js';

describe('money', () => {
  describe(toCents.name, () => {
    it('converts the API number to integer cents exactly', () => {
      expect([0, 0.01, 0.1, 1.1, 19.99, 49.9, 1234.56, 1000000].map((n) => toCents(n))).toEqual([0, 1, 10, 110, 1999, 4990, 123456, 100000000]);
      expect(toCents('49.90')).toBe(4990);
      // 0.07 * 100 is 7.000000000000001 as a float: parsing the decimal form avoids that drift.
      expect(toCents(0.07)).toBe(7);
      expect(toCents(0.29)).toBe(29);
    });

    it('rejects negatives, more than 2 decimals, exponents, non-finite numbers and amounts above 1000000', () => {
      for (const bad of [-1, -0.01, 49.999, 0.1 + 0.2, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, 1000000.01, '1,5', ' ', '1e3']) {
        expect(toCents(bad as number)).toBeNull();
      }
    });

    it('accepts exactly MAX_PRICE_CENTS and nothing above it', () => {
      expect(MAX_PRICE_CENTS).toBe(100_000_000);
      expect(toCents('1000000.00')).toBe(MAX_PRICE_CENTS);
      expect(toCents(1000000.01)).toBeNull();
      expect(toCents('1000001')).toBeNull();
      expect(toCents('999999999.99')).toBeNull();
    });

    it('reads decimal strings: trimmed, leading zeros allowed, one or two decimals', () => {
      expect(toCents(' 49.9 ')).toBe(4990);
      expect(toCents('0049.90')).toBe(4990);
      expect(toCents('7')).toBe(700);
      expect(toCents('0.5')).toBe(50);
      expect(toCents('-0')).toBeNull();
    });

    it.each(['', '.5', '5.', '5.123', '+5', '0x10', '1 000', '5.5.5', '١٢', '10000000000'])('rejects the string %p', (text) => {
      expect(toCents(text)).toBeNull();
    });
  });

  describe(fromCents.name, () => {
    it('answers the shortest decimal number', () => {
      expect([1, 10, 110, 1999, 4990, 100000000].map(fromCents)).toEqual([0.01, 0.1, 1.1, 19.99, 49.9, 1000000]);
      for (let cents = 0; cents < 100_000; cents += 7) expect(toCents(fromCents(cents))).toBe(cents);
    });

    it('round-trips at the top of the range', () => {
      for (const cents of [MAX_PRICE_CENTS, MAX_PRICE_CENTS - 1, 99_999_999, 12_345_678]) expect(toCents(fromCents(cents))).toBe(cents);
    });
  });

  describe('priceSchema', () => {
    it('outputs cents for a number or a decimal string', () => {
      expect(priceSchema.parse(49.9)).toBe(4990);
      expect(priceSchema.parse('19.99')).toBe(1999);
      expect(priceSchema.parse(0)).toBe(0);
    });

    it('refuses an out-of-range or badly written price with a message that says what is accepted', () => {
      for (const bad of [-1, 49.999, '1e3', 1000000.01]) {
        const result = priceSchema.safeParse(bad);
        expect(result.success).toBe(false);
        expect(result.error?.issues.map((i) => i.message)).toEqual(['price must be a number from 0 to 1000000 with at most 2 decimals']);
      }
    });

    it('refuses other types with the type message', () => {
      for (const bad of [null, true, [49.9], { amount: 49.9 }]) {
        const result = priceSchema.safeParse(bad);
        expect(result.success).toBe(false);
        expect(result.error?.issues.map((i) => i.message)).toEqual(['price must be a number such as 49.9']);
      }
    });
  });

  describe('currencySchema', () => {
    it('accepts ISO 4217 codes in any case and around spaces, answering upper case', () => {
      expect(DEFAULT_CURRENCY).toBe('BRL');
      expect(currencySchema.parse('BRL')).toBe('BRL');
      expect(currencySchema.parse('usd')).toBe('USD');
      expect(currencySchema.parse(' eur ')).toBe('EUR');
    });

    it.each(['ABC', 'BTC', 'BR', 'BRLL', 'B1L', '', 'R$'])('refuses %p', (code) => {
      const result = currencySchema.safeParse(code);
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.message)).toEqual(['currency must be an ISO 4217 code such as BRL']);
    });

    it('refuses a non-string with the same hint', () => {
      expect(currencySchema.safeParse(986).error?.issues.map((i) => i.message)).toEqual(['currency must be an ISO 4217 code such as BRL']);
    });
  });
});
