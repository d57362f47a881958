import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type DestinationStream, type Logger } from 'pino';
import { activeTraceIds } from './tracing.js';

/**
 * The id of the request being served, for every log line written while serving it (see `requestIdMixin`). One per
 * process, even when this module is loaded more than once (each Jest test file loads it afresh): Node 20 visits every
 * AsyncLocalStorage ever run at each promise created, so one per load would make every promise slower, file by file.
 */
const requestScope: AsyncLocalStorage<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('svc.requestScope')] ??= new AsyncLocalStorage<string>()) as AsyncLocalStorage<string>;

/** A well-formed client request id: 1 to 128 of `A-Z a-z 0-9 . _ : -` (anything else is replaced by a UUID). */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Runs `fn` (and everything it starts) as the work of request `id`: each log line written meanwhile carries it. */
export const withRequestId = <T>(id: string, fn: () => T): T => requestScope.run(id, fn);

/** The id of the request whose work is running, if any. */
export const currentRequestId = (): string | undefined => requestScope.getStore();

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

/**
 * Adds `requestId` to a line written while serving a request, unless the line or its logger has one already; and,
 * when tracing is on, the active span's `trace_id` and `span_id` (kernel/tracing.ts).
 */
function requestIdMixin(this: unknown, object: object, _level: number, logger: Logger): Record<string, unknown> {
  const id = requestScope.getStore();
  const trace = activeTraceIds(); // undefined when tracing is off
  if (!id || 'requestId' in object) return trace ?? {};
  const bindings = (logger as unknown as Record<symbol, string | undefined>)[pino.symbols.chindingsSym];
  if (bindings?.includes('"requestId":')) return trace ?? {};
  return trace ? { requestId: id, ...trace } : { requestId: id };
}

/**
 * The process's JSON logger (pino): the request id on every line written while serving a request (and the trace and
 * span ids when tracing is on), secrets censored.
 * `destination` defaults to stdout (tests pass a stream to read the lines).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, mixin: requestIdMixin, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, hooks: { streamWrite: censorCredentials } };
  return destination ? pino(options, destination) : pino(options);
}
