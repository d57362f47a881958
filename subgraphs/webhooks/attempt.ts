import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { type AppDeps, isForeignKeyViolation } from '../kernel/index.js';
import { EndpointGone, Gate, PER_ORIGIN_CONCURRENCY, ShuttingDown } from './runtime.js';
import { signatureHeader } from './signer.js';
import { endSpan, startSpan, tracingOn, withSpan } from '../kernel/tracing.js';
import { BlockedError } from './ssrf.js';
import * as repo from './webhooks.repository.js';
import type { WebhookDelivery } from './webhooks.tables.js';

/** How much of a receiver's answer is read (then discarded): enough to reuse the connection for small answers. */
export const RESPONSE_BODY_CAP_BYTES = 16 * 1024;

/** What one attempt produced. `status` is null when no HTTP answer came back. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  timeMs: number;
  error: string | null;
  /** Stopped by us (endpoint deleted, process stopping), not by the receiver: not an attempt to count. */
  interrupted?: boolean;
  /** Refused before sending: the URL or the address it resolved to is not allowed (SSRF policy). */
  blocked?: boolean;
}

/** The body of a delivery: `{"id","type","created","data"}`, serialised once and sent as is on every attempt. */
export const deliveryBody = (id: string, type: string, created: Date, data: Record<string, unknown>): string =>
  JSON.stringify({ id, type, created: Math.floor(created.getTime() / 1000), data });

/**
 * POSTs one signed delivery: a fresh `t` per attempt, the whole exchange within the configured timeout,
 * redirects not followed, the answer read up to a small cap and discarded. Never throws.
 *
 * With tracing on, the attempt is a client span `webhook.deliver <event>`: a trace of its own linked to the request
 * that wrote the event (`delivery.traceContext`), or a child of the active span (a test ping asked by a request).
 */
export function attempt(
  app: AppDeps,
  target: { endpointId: string; url: string; secret: string },
  delivery: { id: string; event: string; payload: string; attempts?: number; traceContext?: string | null },
): Promise<AttemptResult> {
  if (!tracingOn()) return send(app, target, delivery);
  const span = startSpan(`webhook.deliver ${delivery.event}`, {
    kind: 'client',
    root: delivery.traceContext !== undefined,
    links: [delivery.traceContext],
    attributes: {
      'svc.webhook.delivery_id': delivery.id,
      'svc.webhook.event': delivery.event,
      'svc.webhook.endpoint_id': target.endpointId,
      'svc.webhook.attempt': (delivery.attempts ?? 0) + 1,
      'http.request.method': 'POST',
    },
  });
  return withSpan(span, () => send(app, target, delivery)).then((result) => {
    if (result.status !== null) span?.setAttribute('http.response.status_code', result.status);
    span?.setAttribute('svc.webhook.outcome', result.ok ? 'delivered' : result.blocked ? 'blocked' : result.interrupted ? 'interrupted' : 'failed');
    if (!result.ok && span) span.setStatus({ code: 2, message: result.error ?? 'failed' });
    endSpan(span);
    return result;
  });
}

async function send(
  app: AppDeps,
  target: { endpointId: string; url: string; secret: string },
  delivery: { id: string; event: string; payload: string },
): Promise<AttemptResult> {
  const rt = app.webhooks;
  const timeoutMs = app.config.webhooks.timeoutMs;
  const controller = new AbortController();
  let set = rt.inflight.get(target.endpointId);
  if (!set) rt.inflight.set(target.endpointId, (set = new Set()));
  set.add(controller);
  let timer: NodeJS.Timeout | undefined;
  let gate: Gate | undefined;
  let origin = '';
  let entered = false;
  let started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    // IP literals never reach the dial-time lookup: check them (and the URL's shape) here, every time.
    const { url } = rt.policy.checkUrlShape(target.url);
    origin = url.origin;
    gate = rt.gates.get(origin);
    if (!gate) rt.gates.set(origin, (gate = new Gate(PER_ORIGIN_CONCURRENCY)));
    if (!gate.tryEnter(controller.signal)) await gate.enter(controller.signal);
    entered = true;
    started = performance.now();
    timer = setTimeout(() => controller.abort(new TimeoutExpired(timeoutMs)), timeoutMs);
    const t = Math.floor(app.clock().getTime() / 1000);
    const status = await post(rt.agent, url, {
      'content-type': 'application/json',
      'user-agent': 'svc-webhooks/1.0',
      'x-svc-delivery': delivery.id,
      'x-svc-event': delivery.event,
      'x-svc-signature': signatureHeader(target.secret, delivery.payload, t),
    }, delivery.payload, controller.signal);
    const ok = status >= 200 && status < 300;
    const error = ok ? null : status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    return { ok, status, timeMs: elapsed(), error };
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    const interrupted = reason instanceof EndpointGone || reason instanceof ShuttingDown;
    const blocked = isBlocked(reason);
    return {
      ok: false,
      status: null,
      timeMs: entered ? elapsed() : 0,
      error: describeFailure(reason, timeoutMs),
      ...(interrupted ? { interrupted } : {}),
      ...(blocked ? { blocked } : {}),
    };
  } finally {
    clearTimeout(timer);
    if (entered) gate!.leave();
    if (gate?.idle && rt.gates.get(origin) === gate) rt.gates.delete(origin);
    set.delete(controller);
    if (set.size === 0) rt.inflight.delete(target.endpointId);
  }
}

/**
 * POSTs `body` to `url` through `agent` and settles with the answer's status once the answer is complete or
 * RESPONSE_BODY_CAP_BYTES of it were read (the rest is not read: the connection is closed), without redirects.
 * Rejects with undici's error, or with `signal`'s reason as soon as it aborts: undici notices an abort during
 * connect and TLS only at its own (coarse) connect timeout, so a silent server would otherwise hold the attempt
 * longer. Undici's dispatch interface rather than `request()`: no response stream or header parsing per attempt.
 */
function post(agent: Dispatcher, url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const handler = new PostHandler(signal, resolve, reject);
    if (signal.aborted) return handler.handleEvent();
    signal.addEventListener('abort', handler, { once: true });
    agent.dispatch({ origin: url.origin, path: url.search ? `${url.pathname}${url.search}` : url.pathname, method: 'POST', headers, body }, handler);
  });
}

/** The undici handler of `post` (and the listener of its signal): one object per attempt, no closures. */
class PostHandler implements Dispatcher.DispatchHandler {
  private settled = false;
  private abortRequest: ((reason: Error) => void) | undefined;
  private status = 0;
  private read = 0;

  constructor(
    private readonly signal: AbortSignal,
    private readonly resolve: (status: number) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** The signal aborted. */
  handleEvent(): void {
    this.fail(this.signal.reason);
    this.abortRequest?.(this.signal.reason);
  }

  onConnect(abort: (reason: Error) => void): void {
    if (this.settled) abort(this.signal.reason ?? new Error('attempt over'));
    else this.abortRequest = abort;
  }

  onHeaders(statusCode: number): boolean {
    if (statusCode >= 200) this.status = statusCode; // 1xx: informational, the answer follows
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.read += chunk.length;
    if (this.read < RESPONSE_BODY_CAP_BYTES) return true;
    this.succeed();
    this.abortRequest?.(new Error('answer body over the cap: not read'));
    return false;
  }

  onComplete(): void {
    this.succeed();
  }

  onError(error: Error): void {
    this.fail(error);
  }

  private succeed(): void {
    if (this.end()) this.resolve(this.status);
  }

  private fail(error: unknown): void {
    if (this.end()) this.reject(error);
  }

  private end(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.signal.removeEventListener('abort', this);
    return true;
  }
}

class TimeoutExpired extends Error {
  constructor(readonly ms: number) {
    super(`timeout: no complete answer within ${ms} ms`);
    this.name = 'TimeoutExpired';
  }
}

const TLS_CODE = /CERT|SSL|TLS|SIGNATURE|ISSUER|ALTNAME/;

/** True when the SSRF policy refused the attempt (the URL's shape, or the address it resolved to), anywhere in the cause chain. */
function isBlocked(error: unknown, depth = 0): boolean {
  for (let e = error as any, i = depth; e && i < 6; e = e.cause, i += 1) {
    if (e instanceof BlockedError || e.code === 'ERR_SVC_BLOCKED_ADDRESS') return true;
    if (Array.isArray(e.errors) && e.errors.some((inner: unknown) => isBlocked(inner, i + 1))) return true;
  }
  return false;
}

/** A short reason for `lastError`: timeout, connection refused, TLS error, blocked address, and so on. */
export function describeFailure(error: unknown, timeoutMs: number): string {
  const chain: Array<{ code?: string; message?: string; name?: string; cause?: unknown; errors?: unknown[] }> = [];
  for (let e = error as any, i = 0; e && i < 6; e = e.cause, i += 1) {
    chain.push(e);
    if (Array.isArray(e.errors)) chain.push(...e.errors);
  }
  for (const e of chain) {
    if (e instanceof TimeoutExpired) return e.message;
    if (e instanceof EndpointGone) return 'aborted: endpoint deleted';
    if (e instanceof BlockedError || e.code === 'ERR_SVC_BLOCKED_ADDRESS') return e.message ?? 'blocked address';
  }
  for (const e of chain) {
    const code = e.code ?? '';
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return `timeout: no complete answer within ${timeoutMs} ms`;
    }
    if (code === 'ECONNREFUSED') return 'connection refused';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `DNS lookup failed (${code})`;
    if (TLS_CODE.test(code)) return `TLS error: ${code}`;
    if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'connection closed by the receiver before an answer';
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `network unreachable (${code})`;
  }
  const first = chain[0];
  return `network error: ${first?.code ?? first?.name ?? 'unknown'}${first?.message ? ` (${first.message.slice(0, 200)})` : ''}`;
}

/** Data of the `ping` test event. */
export const PING_MESSAGE = 'Test delivery from svc: your endpoint is reachable and verifies signatures.';

/**
 * Sends a `ping` to an endpoint now and logs it as a delivery of one attempt (success or failed; a test is
 * never retried). Returns the logged delivery, or null if the endpoint was deleted meanwhile.
 */
export async function sendPing(
  app: AppDeps,
  endpoint: { id: string; communityId: string; url: string; secret: string },
): Promise<{ delivery: WebhookDelivery | null; result: AttemptResult }> {
  const id = randomUUID();
  const createdAt = app.clock();
  const payload = deliveryBody(id, 'ping', createdAt, { message: PING_MESSAGE });
  const result = await attempt(app, { endpointId: endpoint.id, url: endpoint.url, secret: endpoint.secret }, { id, event: 'ping', payload });
  const now = app.clock();
  try {
    const delivery = await repo.insertDelivery(app.database.db, {
      id,
      endpointId: endpoint.id,
      communityId: endpoint.communityId,
      eventId: null,
      event: 'ping',
      payload,
      status: result.ok ? 'success' : 'failed',
      attempts: 1,
      responseStatus: result.status,
      responseTimeMs: result.timeMs,
      lastError: result.error,
      nextAttemptAt: null,
      deliveredAt: result.ok ? now : null,
      createdAt,
    });
    return { delivery, result };
  } catch (error) {
    if (isForeignKeyViolation(error)) {
      return { delivery: null, result }; // the endpoint was deleted while the ping was in flight
    }
    throw error;
  }
}
