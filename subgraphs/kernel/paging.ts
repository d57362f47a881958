import { invalid } from './errors.js';

/** A page request after validation. */
export interface Paging {
  page: number;
  perPage: number;
  offset: number;
}

/** A page of items; `hasMore` is exact (one extra row is fetched to know). */
export interface Page<T> {
  items: T[];
  page: number;
  perPage: number;
  hasMore: boolean;
}

/**
 * Validates a page request: page and perPage must be positive integers; perPage above `max` is clamped.
 */
export function paging(page: number | undefined | null, perPage: number | undefined | null, max = 50, fallback = 20): Paging {
  const p = page ?? 1;
  const pp = perPage ?? fallback;
  if (!Number.isInteger(p) || p < 1 || p > 1_000_000) throw invalid('invalid_query', 'page must be an integer from 1 to 1000000.');
  if (!Number.isInteger(pp) || pp < 1) throw invalid('invalid_query', `per_page must be an integer from 1 to ${max}.`);
  const size = Math.min(pp, max);
  return { page: p, perPage: size, offset: (p - 1) * size };
}

/** Builds a page from rows fetched with `limit perPage + 1`. */
export function toPage<T>(rows: T[], p: Paging): Page<T> {
  return { items: rows.slice(0, p.perPage), page: p.page, perPage: p.perPage, hasMore: rows.length > p.perPage };
}
