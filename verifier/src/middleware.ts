// Express 4/5 (and Connect / plain node:http) middleware. Typed structurally: no express import.
import { Buffer } from 'node:buffer';
import { checkSecret, checkTolerance, toBytes } from './core.js';
import { DEFAULT_DEDUPE_TTL_SECONDS, type SeenStore } from './dedupe.js';
import { WebhookVerificationError } from './errors.js';
import { verify } from './node.js';
import type { HeaderRecord, RawPayload, VerifyOptions, WebhookEvent } from './types.js';

/** The request fields the middleware reads and sets. Express's `Request` satisfies it. */
export interface WebhookRequest {
  headers: HeaderRecord;
  body?: unknown;
  /** Set by the middleware after verification. */
  webhookEvent?: WebhookEvent;
  readonly readableEnded?: boolean;
  [Symbol.asyncIterator](): AsyncIterator<unknown>;
}

/** The response fields the middleware uses. Express's `Response` and `http.ServerResponse` satisfy it. */
export interface WebhookResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
  on?(event: 'finish', listener: () => void): unknown;
}

export type NextFunction = (err?: unknown) => void;

/** The middleware returned by {@link expressWebhook}; it never rejects. */
export type WebhookMiddleware = (req: WebhookRequest, res: WebhookResponse, next: NextFunction) => Promise<void>;

export interface ExpressWebhookOptions extends Omit<VerifyOptions, 'payload' | 'headers'> {
  /** Deduplicate on the delivery id: a repeat is answered 200 `{"duplicate":true}` without calling next. */
  dedupe?: SeenStore;
  /** How long ids are remembered in `dedupe`. Default 24 h. */
  dedupeTtlSeconds?: number;
  /** Largest body read from the stream; larger ones get 413. Default 1 MiB. */
  maxBodyBytes?: number;
}

class PayloadTooLarge extends Error {}

/**
 * Middleware that verifies a delivery, sets `req.webhookEvent` and calls `next()`.
 *
 * Reads the raw body itself, or uses the Buffer/string left by `express.raw()` / `express.text()`.
 * On failure it answers 400 `{"error": "<code>", "message": "..."}` (413 `payload_too_large` over
 * `maxBodyBytes`) and does not call next. With `dedupe`, a delivery id already seen is answered
 * 200 `{"duplicate": true}`; an id whose handler answered non-2xx is forgotten so the retry runs.
 * When it read the stream itself, it leaves the raw Buffer in `req.body`.
 */
export function expressWebhook(options: ExpressWebhookOptions): WebhookMiddleware {
  // Wrong configuration fails at start-up, not as a 500 on the first delivery.
  checkSecret(options?.secret);
  checkTolerance(options.toleranceSeconds);
  const { dedupe, dedupeTtlSeconds = DEFAULT_DEDUPE_TTL_SECONDS, maxBodyBytes = 1024 * 1024, ...verifyOptions } = options;

  return async function svcWebhook(req, res, next) {
    let event: WebhookEvent;
    try {
      const payload = await rawBody(req, maxBodyBytes);
      event = verify({ ...verifyOptions, payload, headers: req.headers });
    } catch (err) {
      if (err instanceof WebhookVerificationError) {
        return sendJson(res, 400, { error: err.code, message: err.message });
      }
      if (err instanceof PayloadTooLarge) {
        return sendJson(res, 413, { error: 'payload_too_large', message: `webhook bodies are at most ${maxBodyBytes} bytes` });
      }
      return next(err);
    }
    req.webhookEvent = event;

    if (dedupe && typeof event.id === 'string') {
      const id = event.id;
      try {
        if (!(await dedupe.checkAndAdd(id, dedupeTtlSeconds))) return sendJson(res, 200, { duplicate: true });
      } catch (err) {
        return next(err);
      }
      res.on?.('finish', () => {
        const ok = res.statusCode >= 200 && res.statusCode < 300;
        if (!ok && dedupe.delete) Promise.resolve(dedupe.delete(id)).catch(() => undefined);
      });
    }
    next();
  };
}

async function rawBody(req: WebhookRequest, maxBytes: number): Promise<RawPayload> {
  const { body } = req;
  if (typeof body === 'string' || ArrayBuffer.isView(body)) return body as RawPayload; // express.raw / express.text
  // body-parser marks a consumed stream with _body; Express 4 may leave {} on a stream it did not read.
  const consumed = req.readableEnded === true || (req as { _body?: unknown })._body === true;
  if (consumed) {
    if (body === undefined) {
      throw new WebhookVerificationError(
        'payload_not_raw',
        'the request body stream was already consumed by another middleware: mount expressWebhook() before any body parser on this route',
      );
    }
    throw new WebhookVerificationError(
      'payload_not_raw',
      'the request body was already parsed (express.json() ran first), so the raw bytes that were signed are gone: ' +
        "mount expressWebhook() before express.json(), or use express.raw({ type: 'application/json' }) on this route",
    );
  }

  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new PayloadTooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<unknown>) {
    const bytes = toBytes(chunk as RawPayload);
    size += bytes.byteLength;
    // Keep draining rather than destroying the stream, so the 413 can still be sent.
    if (size <= maxBytes) chunks.push(bytes);
  }
  if (size > maxBytes) throw new PayloadTooLarge();
  const joined = Buffer.concat(chunks, size); // a Buffer, as express.raw() would have left
  req.body = joined;
  return joined;
}

function sendJson(res: WebhookResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
