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

/** Digits after the decimal point of a currency by ISO 4217 (BRL 2, JPY 0, KWD 3), as Intl knows them; 2 when unknown. */
export function fractionDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * Refuses, at `price`, a price with more decimals than its currency has (`JPY 100.5`: the yen has none), so every
 * stored price is a whole number of the currency's smallest unit and a payment provider can charge it exactly.
 * Prices are stored in hundredths, so a three-decimal currency (KWD, BHD, OMR...) is priced to two decimals at most,
 * which `priceSchema` already holds. For a zod `superRefine` over an input with `price` (hundredths) and `currency`.
 */
export function refinePriceToCurrency(input: { price?: number | null; currency?: string | null }, ctx: z.RefinementCtx): void {
  if (!input.price) return;
  const currency = input.currency ?? DEFAULT_CURRENCY;
  const digits = fractionDigits(currency);
  if (digits < 2 && input.price % 10 ** (2 - digits) !== 0) {
    const allowed = digits === 0 ? 'no decimals' : `at most ${digits} decimal`;
    ctx.addIssue({ code: 'custom', path: ['price'], message: `price in ${currency} takes ${allowed} (ISO 4217 minor unit)` });
  }
}

/** A zod schema for an ISO 4217 currency code (case-insensitive in, upper case out). */
export const currencySchema = z
  .string({ error: 'currency must be an ISO 4217 code such as BRL' })
  .trim()
  .toUpperCase()
  .refine((c) => /^[A-Z]{3}$/.test(c) && ISO_4217.has(c), 'currency must be an ISO 4217 code such as BRL');
