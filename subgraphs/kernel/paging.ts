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

/** A Platform API page request after clamping (spec 4.1: never an error). */
export interface PlatformPaging {
  page: number;
  pageSize: number;
  offset: number;
}

/** A Platform API page: `hasMore` is the spec's heuristic (the page came back full), not a count. */
export interface PlatformPage<T> {
  items: T[];
  page: number;
  pageSize: number;
  hasMore: boolean;
}

export const PLATFORM_PAGE_SIZE = { default: 25, min: 1, max: 100 } as const;
/** The highest page served; beyond it a page is clamped too (offsets stay exact integers). */
export const PLATFORM_MAX_PAGE = 1_000_000_000;

const clamp = (n: number, min: number, max: number) => Math.min(max, Math.max(min, n));

/**
 * Clamps a Platform API page request silently: a missing or non-integer page is 1, below 1 is 1;
 * a missing or non-integer pageSize is 25, and it is held between 1 and 100.
 */
export function platformPaging(page: number | null | undefined, pageSize: number | null | undefined): PlatformPaging {
  const p = typeof page === 'number' && Number.isInteger(page) ? clamp(page, 1, PLATFORM_MAX_PAGE) : 1;
  const size =
    typeof pageSize === 'number' && Number.isInteger(pageSize)
      ? clamp(pageSize, PLATFORM_PAGE_SIZE.min, PLATFORM_PAGE_SIZE.max)
      : PLATFORM_PAGE_SIZE.default;
  return { page: p, pageSize: size, offset: (p - 1) * size };
}

/** Builds a Platform page from rows fetched with `limit pageSize`. */
export function toPlatformPage<T>(rows: T[], p: PlatformPaging): PlatformPage<T> {
  return { items: rows, page: p.page, pageSize: p.pageSize, hasMore: rows.length === p.pageSize };
}
