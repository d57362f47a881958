import { randomUUID } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';
import { activeTraceIds } from './tracing.js';

/** A well-formed client request id: 1 to 128 of `A-Z a-z 0-9 . _ : -` (anything else is replaced by a UUID). */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's id: the `x-request-id` it came with when well-formed (`WELL_FORMED_REQUEST_ID`), else a new UUID. */
export const requestIdFrom = (given: unknown): string => (typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID());

/**
 * The logger of a line about one request: the service's own, with the request's id bound as `requestId`. Service code
 * that logs while serving a request writes through it (or through a logger its caller made so), so that every line
 * of a request can be found by the id its answer carried (`x-request-id`). The id travels in the request's context,
 * not in an `AsyncLocalStorage`: on Node 20 one of those makes every promise of the process pay a hook.
 */
export function requestLogger(ctx: { app: { log: Logger }; requestId?: string }): Logger {
  return ctx.requestId ? ctx.app.log.child({ requestId: ctx.requestId }) : ctx.app.log;
}

/**
 * Never written to a log, at the top of a line's object or one level down (`{err}`, `{req}`, `{user}`...): credentials,
 * tokens, keys, cookies and passwords. Censored as `[redacted]`.
 */
const SECRET_KEYS = [
  'password',
  'newPassword',
  'currentPassword',
  'token',
  'accessToken',
  'refreshToken',
  'access_token',
  'refresh_token',
  'sessionToken',
  'resetToken',
  'secret',
  'signingSecret',
  'signing_secret',
  'apiKey',
  'api_key',
  'key',
  'authorization',
  'cookie',
  'set-cookie',
  'stripe-signature',
  'x-svc-internal-secret',
];
export const REDACTED_PATHS = [
  ...SECRET_KEYS.flatMap((k) => [`["${k}"]`, `*["${k}"]`]),
  ...['authorization', 'cookie', 'set-cookie', 'stripe-signature', 'x-svc-internal-secret', 'x-svc-caller-assertion'].flatMap((h) => [
    `req.headers["${h}"]`,
    `res.headers["${h}"]`,
  ]),
];

/**
 * Credentials recognisable by their form, censored wherever they appear in a line (a message, an error's text, a URL,
 * any field): personal API keys `svc_pk_...`, Platform API keys `svc_sk_...` and refresh tokens `svc_rt_...` keep their
 * kind and lose the rest (`svc_pk_[redacted]`).
 */
// No leading \b: a key glued to a word character (`Bearer%20svc_pk_...`, `key=svc_sk_...` in a URL) is censored too.
export const CREDENTIAL_TEXT = /(svc_(?:pk|sk|rt)_)[A-Za-z0-9_-]{8,}/g;

/** A written line with every `CREDENTIAL_TEXT` censored (a line without `svc_` costs one substring search). */
export const censorCredentials = (line: string): string => (line.includes('svc_') ? line.replace(CREDENTIAL_TEXT, '$1[redacted]') : line);

/** The active span's `trace_id` and `span_id` on every line when tracing is on (kernel/tracing.ts). */
const traceMixin = (): Record<string, unknown> => activeTraceIds() ?? {};

/**
 * The process's JSON logger (pino): the trace and span ids on every line when tracing is on, secrets censored (a
 * request's lines carry its id through `requestLogger` or the request's own logger).
 * `destination` defaults to stdout (tests pass a stream to read the lines).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, mixin: traceMixin, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, hooks: { streamWrite: censorCredentials } };
  return destination ? pino(options, destination) : pino(options);
}
