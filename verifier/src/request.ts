import { verifyAsync } from './web-crypto.js';
import { WebhookVerificationError } from './errors.js';
import type { HeadersLike, VerifyOptions, WebhookEvent } from './types.js';

/** The parts of a Fetch `Request` that verification reads. */
export interface RequestLike {
  readonly headers: HeadersLike;
  readonly bodyUsed?: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Options of {@link verifyRequest}: everything of `verify` except what the request carries. */
export type VerifyRequestOptions = Omit<VerifyOptions, 'payload' | 'headers'>;

/**
 * Reads the body of a Fetch `Request` (Hono `c.req.raw`, Next.js route handlers, Workers, Deno,
 * Bun) and verifies it with Web Crypto. Consumes the body: use the returned event, or pass
 * `request.clone()` if you need the body again.
 */
export async function verifyRequest<T = Record<string, unknown>>(
  request: RequestLike,
  options: VerifyRequestOptions,
): Promise<WebhookEvent<T>> {
  if (request.bodyUsed) {
    throw new WebhookVerificationError(
      'payload_not_raw',
      'the request body was already read: call verifyRequest before request.json() or request.text(), or pass request.clone()',
    );
  }
  // Bytes rather than text(): decoding and re-encoding could alter a body that is not valid UTF-8.
  const payload = new Uint8Array(await request.arrayBuffer());
  return verifyAsync<T>({ ...options, payload, headers: request.headers });
}
