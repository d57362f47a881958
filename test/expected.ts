// What tests expect to see: formats, the exact error bodies of the Platform API, and shared assertions.
import { expect } from '@jest/globals';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** An ISO 8601 UTC timestamp with milliseconds, as every surface writes one. */
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const KEY_FORMAT = /^svc_sk_[A-Za-z0-9_-]{43}$/;

/** The exact 401 body of the Platform API. */
export const UNAUTHORIZED = { error: { type: 'unauthorized', message: 'Send a valid API key: Authorization: Bearer <key>.' } };
/** The exact 404 body of an unknown /v1 path. */
export const NO_ENDPOINT = { error: { type: 'not_found', message: 'No such Platform API endpoint.' } };
/** The exact 405 body of a method other than GET on a Platform path. */
export const READ_ONLY = { error: { type: 'not_found', message: 'The Platform API is read-only: use GET.' } };
/** The exact 403 body for a key without `scope`. */
export const forbiddenBody = (scope: string) => ({ error: { type: 'forbidden', message: `This API key lacks the ${scope} scope.` } });
/** The exact 429 body at the default limit. */
export const RATE_LIMITED = {
  error: { type: 'rate_limited', message: 'Too many requests: at most 120 per 60 seconds per key. Retry after 60 seconds.' },
};

/** Headers of a response that must never appear on the Platform API. */
export function expectNoCorsOrRateHeaders(headers: Record<string, unknown>): void {
  const names = Object.keys(headers).map((h) => h.toLowerCase());
  expect(names.filter((h) => h.startsWith('access-control-') || h.startsWith('x-ratelimit') || h.startsWith('ratelimit'))).toEqual([]);
}

/** Asserts a resource-API error: status, code, and the `{error: {code, message}}` envelope. */
export function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}
