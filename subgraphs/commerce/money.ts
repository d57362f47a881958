import { z } from 'zod';

/** The largest price accepted: 1,000,000.00 in major units (fits an `integer` column in cents). */
export const MAX_PRICE_CENTS = 100_000_000;
export const DEFAULT_CURRENCY = 'BRL';

const ISO_4217 = new Set(Intl.supportedValuesOf('currency'));
const DECIMAL = /^(\d{1,9})(?:\.(\d{1,2}))?$/;

/**
 * Converts a price in major units as the API sends it (a JSON number such as 49.9, or its decimal string)
 * to integer cents, exactly: the number's shortest decimal form is parsed, never multiplied as a float.
 * Returns null for a negative value, more than two decimals, exponent notation or more than `MAX_PRICE_CENTS`.
 */
export function toCents(price: number | string): number | null {
  if (typeof price === 'number' && !Number.isFinite(price)) return null;
  const text = typeof price === 'number' ? String(price) : price.trim();
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return cents <= MAX_PRICE_CENTS ? cents : null;
}

/** Integer cents to the API's number in major units (4990 → 49.9): exact, as cents / 100 rounds to the shortest form. */
export const fromCents = (cents: number): number => cents / 100;

/** A zod schema for an API price: a number or decimal string, at least 0, at most two decimals; output in cents. */
export const priceSchema = z.union([z.number(), z.string()], { error: 'price must be a number such as 49.9' }).transform((value, ctx) => {
  const cents = toCents(value);
  if (cents === null) {
    ctx.addIssue({ code: 'custom', message: 'price must be a number from 0 to 1000000 with at most 2 decimals' });
    return z.NEVER;
  }
  return cents;
});

/** A zod schema for an ISO 4217 currency code (case-insensitive in, upper case out). */
export const currencySchema = z
  .string({ error: 'currency must be an ISO 4217 code such as BRL' })
  .trim()
  .toUpperCase()
  .refine((c) => /^[A-Z]{3}$/.test(c) && ISO_4217.has(c), 'currency must be an ISO 4217 code such as BRL');
