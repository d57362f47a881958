// Parsing and checks shared by the Node and the Web Crypto paths. Must not import node:* modules.
import { WebhookVerificationError } from './errors.js';
import type {
  HeadersInput,
  HeadersLike,
  NowInput,
  SignOptions,
  TestHeadersOptions,
  VerifyOptions,
  WebhookEvent,
  WebhookHeaders,
} from './types.js';

export const SIGNATURE_HEADER = 'x-svc-signature';
export const DELIVERY_HEADER = 'x-svc-delivery';
export const EVENT_HEADER = 'x-svc-event';
/** The spec's replay window, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEADER_FORMAT = 'expected "t=<unix seconds>,v1=<lowercase hex>"';
// Unix seconds above this are almost surely milliseconds (Date.now()); year 5138.
const MAX_UNIX_SECONDS = 1e11;
// Anything but lowercase hex; with the length check, a cheaper test than /^[0-9a-f]{64}$/ on each delivery.
const NOT_LOWER_HEX = /[^0-9a-f]/;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The parts of an `x-svc-signature` header that matter: `t` and every `v1` entry. */
export interface ParsedSignatureHeader {
  timestamp: number;
  signatures: string[];
}

/**
 * Parses `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. Entries of other schemes (such as `v0`) are
 * ignored; whitespace around entries is allowed. Throws `malformed_header` when `t` is missing,
 * repeated with different values, or not an integer, or when there is no non-empty `v1`.
 */
export function parseSignatureHeader(value: string): ParsedSignatureHeader {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  // indexOf scanning rather than split: this runs on every delivery, and it halves the cost.
  for (let start = 0; start < value.length; ) {
    const comma = value.indexOf(',', start);
    const end = comma === -1 ? value.length : comma;
    const eq = value.indexOf('=', start);
    if (eq !== -1 && eq < end) {
      const key = value.slice(start, eq).trim();
      const val = value.slice(eq + 1, end).trim();
      if (key === 't') {
        const seconds = Number(val);
        if (!/^\d+$/.test(val) || !Number.isSafeInteger(seconds)) {
          throw malformed(`t=${val.slice(0, 20)} is not unix seconds; ${HEADER_FORMAT}`);
        }
        // A repeated header arrives joined; its copies may repeat t, but must agree on it.
        if (timestamp !== undefined && timestamp !== seconds) {
          throw malformed(`it has t= entries that disagree; ${HEADER_FORMAT}`);
        }
        timestamp = seconds;
      } else if (key === 'v1' && val !== '') {
        signatures.push(val);
      }
    }
    start = end + 1;
  }
  if (timestamp === undefined) throw malformed(`it has no t= entry; ${HEADER_FORMAT}`);
  if (signatures.length === 0) throw malformed(`it has no v1= entry; ${HEADER_FORMAT}`);
  return { timestamp, signatures };
}

/**
 * Reads one header from a plain object (keys in any case, string or string[] values) or from
 * anything with `get` (Fetch `Headers`). Repeated values are joined with a comma.
 */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  if (headers === null || typeof headers !== 'object') {
    throw new TypeError('headers must be the request headers: a plain object or a Fetch Headers');
  }
  if (typeof (headers as HeadersLike).get === 'function') {
    return (headers as HeadersLike).get(name) ?? undefined;
  }
  // Node's req.headers are lower-case already: try the exact key before scanning.
  const direct = (headers as Record<string, string | readonly string[] | undefined>)[name];
  if (direct !== undefined) return typeof direct === 'string' ? direct : direct.join(',');
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : (value as readonly string[]).join(',');
  }
  return undefined;
}

/** The payload as bytes, refusing anything that is not raw text or bytes. */
export function toBytes(payload: unknown): Uint8Array {
  if (typeof payload === 'string') return encoder.encode(payload);
  if (payload instanceof Uint8Array) return payload; // Buffer included: already the viewed bytes
  // ArrayBuffer.isView and the tag check also work across realms (vm contexts, jest).
  if (ArrayBuffer.isView(payload)) {
    return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  }
  if (Object.prototype.toString.call(payload) === '[object ArrayBuffer]') {
    return new Uint8Array(payload as ArrayBuffer);
  }
  const got = payload === null ? 'null' : typeof payload;
  throw new WebhookVerificationError(
    'payload_not_raw',
    `payload is ${got}: pass the raw request body (string, Buffer or Uint8Array), not parsed JSON. ` +
      "In Express, mount express.raw({ type: 'application/json' }) or expressWebhook() before express.json(); " +
      'with Fetch, use await request.arrayBuffer() or verifyRequest(request).',
  );
}

/** Current unix seconds from the `now` option (default: the system clock). */
export function resolveNow(now: NowInput | undefined): number {
  const value = typeof now === 'function' ? now() : now;
  if (value === undefined) return Math.floor(Date.now() / 1000);
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  return checkUnixSeconds(value, 'now');
}

/** Unix seconds of a sign timestamp (default: now). */
export function resolveTimestamp(timestamp: number | Date | undefined): number {
  if (timestamp instanceof Date) return Math.floor(timestamp.getTime() / 1000);
  if (timestamp === undefined) return Math.floor(Date.now() / 1000);
  const seconds = checkUnixSeconds(timestamp, 'timestamp');
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new TypeError('timestamp must be a non-negative integer of unix seconds');
  }
  return seconds;
}

function checkUnixSeconds(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${name} must be a Date or a number of unix seconds`);
  }
  if (value > MAX_UNIX_SECONDS) {
    throw new TypeError(`${name} looks like milliseconds; pass unix seconds (Math.floor(Date.now() / 1000)) or a Date`);
  }
  return value;
}

export function checkSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError("secret must be the endpoint's signing secret string (whsec_...)");
  }
}

export function checkTolerance(tolerance: unknown): number {
  if (tolerance === undefined) return DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError('toleranceSeconds must be a non-negative number of seconds (default 300)');
  }
  return tolerance;
}

/** What both verify paths need after the checks that do not involve the secret. */
export interface PreparedVerification {
  /** The raw body: the string as given (hashed and parsed without a copy), or its bytes. */
  payload: string | Uint8Array;
  timestamp: number;
  signatures: string[];
}

/**
 * Runs, in order: option checks, payload is raw, header present, header parses, timestamp within
 * tolerance. Signature comparison is left to the caller's crypto.
 */
export function prepareVerification(options: VerifyOptions): PreparedVerification {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('verify takes one options object: { payload, headers, secret }');
  }
  checkSecret(options.secret);
  const tolerance = checkTolerance(options.toleranceSeconds);
  const payload = typeof options.payload === 'string' ? options.payload : toBytes(options.payload);
  const header = getHeader(options.headers, SIGNATURE_HEADER)?.trim();
  if (!header) {
    throw new WebhookVerificationError(
      'missing_header',
      `missing ${SIGNATURE_HEADER} header: pass the request headers as received (a plain object or a Fetch Headers); ` +
        'requests without it were not sent by the service',
    );
  }
  const { timestamp, signatures } = parseSignatureHeader(header);
  const now = resolveNow(options.now);
  const skew = Math.abs(now - timestamp);
  if (skew > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_out_of_range',
      `signature timestamp t=${timestamp} is ${skew} s ${timestamp < now ? 'in the past' : 'in the future'}, ` +
        `more than the ${tolerance} s tolerance: a replayed delivery, or this machine's clock is wrong (sync it with NTP)`,
    );
  }
  return { payload, timestamp, signatures };
}

/** The payload as bytes. */
export const payloadBytes = (payload: string | Uint8Array): Uint8Array => (typeof payload === 'string' ? encoder.encode(payload) : payload);

/** The signed bytes: `${t}.` followed by the raw body. */
export function signedContent(timestamp: number, payload: string | Uint8Array): Uint8Array {
  const bytes = payloadBytes(payload);
  const prefix = encoder.encode(`${timestamp}.`);
  const out = new Uint8Array(prefix.length + bytes.length);
  out.set(prefix, 0);
  out.set(bytes, prefix.length);
  return out;
}

/**
 * True when one of the `v1` candidates equals `expected`. Only 64-char lowercase hex candidates
 * are compared (uppercase is refused, as the spec says lowercase); `equal` must be constant-time.
 */
export function anySignatureMatches(
  expected: Uint8Array,
  candidates: readonly string[],
  equal: (a: Uint8Array, b: Uint8Array) => boolean,
  fromHex: (hex: string) => Uint8Array = hexToBytes,
): boolean {
  let matched = false;
  for (const candidate of candidates) {
    if (candidate.length === 64 && !NOT_LOWER_HEX.test(candidate) && equal(expected, fromHex(candidate))) matched = true;
  }
  return matched;
}

export function signatureMismatch(): WebhookVerificationError {
  return new WebhookVerificationError(
    'signature_mismatch',
    `no v1 signature in ${SIGNATURE_HEADER} matches: check the endpoint secret (the whole whsec_... string) ` +
      'and pass the raw request body exactly as received; re-serialised JSON (JSON.stringify(req.body)) never matches',
  );
}

/** Constant-time equality for byte arrays of any length (lengths are not secret here). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Parses a verified body. A correctly signed body that is not a JSON object is refused. */
export function parseEvent<T>(bytes: Uint8Array | string): WebhookEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof bytes === 'string' ? bytes : decoder.decode(bytes));
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new WebhookVerificationError(
      'payload_not_raw',
      'the signature is valid but the body is not a UTF-8 JSON object, which the service never sends; ' +
        'if this is a test, sign and send a JSON body like {"id":"...","type":"...","created":0,"data":{}}',
    );
  }
  return parsed as WebhookEvent<T>;
}

export function bytesToHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function formatSignatureHeader(timestamp: number, hex: string): string {
  return `t=${timestamp},v1=${hex}`;
}

/** Resolved inputs of sign(): the bytes to send and the timestamp. */
export function prepareSign(options: SignOptions): { bytes: Uint8Array; timestamp: number } {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('sign takes one options object: { payload, secret, timestamp }');
  }
  checkSecret(options.secret);
  return { bytes: toBytes(options.payload), timestamp: resolveTimestamp(options.timestamp) };
}

/** The three delivery headers, with id and event defaulting to the body's id and type. */
export function buildTestHeaders(options: TestHeadersOptions, bytes: Uint8Array, signature: string): WebhookHeaders {
  let body: Partial<Record<'id' | 'type', unknown>> = {};
  try {
    body = parseEvent(bytes);
  } catch {
    // Not JSON: the caller wants to test that case; fall back to placeholder ids.
  }
  return {
    'x-svc-signature': signature,
    'x-svc-delivery': options.id ?? (typeof body.id === 'string' ? body.id : 'evt_test'),
    'x-svc-event': options.event ?? (typeof body.type === 'string' ? body.type : 'ping'),
  };
}

function malformed(detail: string): WebhookVerificationError {
  return new WebhookVerificationError('malformed_header', `${SIGNATURE_HEADER} header is malformed: ${detail}`);
}
