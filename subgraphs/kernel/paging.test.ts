import { describe, expect, it } from '@jest/globals';
import { paging, PLATFORM_MAX_PAGE, PLATFORM_PAGE_SIZE, platformPaging, toPage, toPlatformPage } from './paging.js';

/** The error `paging` throws, as code and message. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
  throw new Error('expected a refusal');
}

describe(paging.name, () => {
  it('defaults to page 1 of 20, offset 0', () => {
    expect(paging(undefined, undefined)).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(paging(null, null)).toEqual({ page: 1, perPage: 20, offset: 0 });
  });

  it('takes another fallback size and maximum', () => {
    expect(paging(undefined, undefined, 100, 50)).toEqual({ page: 1, perPage: 50, offset: 0 });
    expect(paging(2, 500, 100)).toEqual({ page: 2, perPage: 100, offset: 100 });
  });

  it('skips (page - 1) × perPage rows', () => {
    expect(paging(3, 10)).toEqual({ page: 3, perPage: 10, offset: 20 });
    expect(paging(1_000_000, 50)).toEqual({ page: 1_000_000, perPage: 50, offset: 49_999_950 });
  });

  it('clamps perPage above the maximum, and computes the offset with the clamped size', () => {
    expect(paging(2, 51)).toEqual({ page: 2, perPage: 50, offset: 50 });
    expect(paging(2, 50)).toEqual({ page: 2, perPage: 50, offset: 50 });
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1_000_001])('refuses page %p', (page) => {
    expect(refusal(() => paging(page, 10))).toEqual({ code: 'invalid_query', message: 'page must be an integer from 1 to 1000000.' });
  });

  it.each([0, -5, 2.5, Number.NaN])('refuses per_page %p, naming the maximum', (perPage) => {
    expect(refusal(() => paging(1, perPage))).toEqual({ code: 'invalid_query', message: 'per_page must be an integer from 1 to 50.' });
    expect(refusal(() => paging(1, perPage, 100))).toEqual({ code: 'invalid_query', message: 'per_page must be an integer from 1 to 100.' });
  });
});

describe(toPage.name, () => {
  const p = paging(2, 3);

  it('has more exactly when the extra row came back, and drops that row', () => {
    expect(toPage([1, 2, 3, 4], p)).toEqual({ items: [1, 2, 3], page: 2, perPage: 3, hasMore: true });
    expect(toPage([1, 2, 3], p)).toEqual({ items: [1, 2, 3], page: 2, perPage: 3, hasMore: false });
    expect(toPage([], p)).toEqual({ items: [], page: 2, perPage: 3, hasMore: false });
  });
});

describe(platformPaging.name, () => {
  it('defaults to page 1 of 25', () => {
    expect(PLATFORM_PAGE_SIZE).toEqual({ default: 25, min: 1, max: 100 });
    expect(platformPaging(undefined, undefined)).toEqual({ page: 1, pageSize: 25, offset: 0 });
    expect(platformPaging(null, null)).toEqual({ page: 1, pageSize: 25, offset: 0 });
  });

  it('never refuses: clamps page to 1.., pageSize to 1..100', () => {
    expect(platformPaging(0, 0)).toEqual({ page: 1, pageSize: 1, offset: 0 });
    expect(platformPaging(-3, -3)).toEqual({ page: 1, pageSize: 1, offset: 0 });
    expect(platformPaging(4, 101)).toEqual({ page: 4, pageSize: 100, offset: 300 });
    expect(platformPaging(4, 100)).toEqual({ page: 4, pageSize: 100, offset: 300 });
  });

  it('treats a non-integer page or size as missing', () => {
    expect(platformPaging(2.5, 10.5)).toEqual({ page: 1, pageSize: 25, offset: 0 });
    expect(platformPaging(Number.NaN, Number.POSITIVE_INFINITY)).toEqual({ page: 1, pageSize: 25, offset: 0 });
  });

  it('holds a huge page at the highest page served, so the offset stays an exact integer', () => {
    expect(PLATFORM_MAX_PAGE).toBe(1_000_000_000);
    const p = platformPaging(Number.MAX_SAFE_INTEGER, 100);
    expect(p).toEqual({ page: PLATFORM_MAX_PAGE, pageSize: 100, offset: 99_999_999_900 });
    expect(Number.isSafeInteger(p.offset)).toBe(true);
  });
});

describe(toPlatformPage.name, () => {
  const p = platformPaging(1, 2);

  it('has more when the page came back full (the spec heuristic), and keeps every row', () => {
    expect(toPlatformPage(['a', 'b'], p)).toEqual({ items: ['a', 'b'], page: 1, pageSize: 2, hasMore: true });
    expect(toPlatformPage(['a'], p)).toEqual({ items: ['a'], page: 1, pageSize: 2, hasMore: false });
    expect(toPlatformPage([], p)).toEqual({ items: [], page: 1, pageSize: 2, hasMore: false });
  });
});
