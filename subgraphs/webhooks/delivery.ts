import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { type AppDeps, isForeignKeyViolation } from '../kernel/index.js';
import { isSubscribable, lockUnprocessedEvents, markEventsProcessed } from '../outbox/index.js';
import { signatureHeader } from './signer.js';
import { AddressPolicy, BlockedError, type Resolver } from './ssrf.js';
import * as repo from './webhooks.repository.js';
import type { WebhookDelivery, WebhookEndpoint } from './webhooks.tables.js';

/** Waits after failures 1 to 5 (spec: 1 m, 5 m, 30 m, 2 h, 6 h); the sixth failure is final. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** How much of a receiver's answer is read (then discarded): enough to reuse the connection for small answers. */
export const RESPONSE_BODY_CAP_BYTES = 16 * 1024;
/**
 * Outcomes the database refused (it is restarting) are written again after 100 ms, then twice as long each time,
 * at most this long apart, until they are written or the claim's record window closes.
 */
const RECORD_RETRY_MAX_MS = 2_000;
/**
 * Attempts in flight at once per receiver origin (and connections kept to it). Receivers are spared a burst of
 * hundreds of parallel connections, and their TLS sessions are reused: far faster than one handshake per delivery.
 * An attempt's timeout starts when its turn comes, not while it waits.
 */
export const PER_ORIGIN_CONCURRENCY = 10;
/** Outbox events locked per fan-out transaction. */
const FANOUT_CHUNK = 500;

// ---- per-process runtime: the address policy, the HTTP client, attempts in flight ----

export interface WebhookRuntimeOptions {
  /** DNS resolver used at registration and at dial time (tests inject one). Default: the system's. */
  resolve?: Resolver;
}

interface Runtime {
  policy: AddressPolicy;
  agent: Agent;
  /** Attempts in flight (or waiting for their turn) per endpoint, so deleting an endpoint stops its sends at once. */
  inflight: Map<string, Set<AbortController>>;
  /** Per-origin turns (PER_ORIGIN_CONCURRENCY). */
  gates: Map<string, Gate>;
  /** Aborted (and replaced) when the process stops: outcomes waiting for the database are then given up. */
  stopping: AbortController;
}

/** A counting semaphore whose waiters can be aborted. */
class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  enter(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.active < this.limit) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', onAbort);
        this.active += 1;
        resolve();
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(go), 1);
        reject(signal.reason);
      };
      this.waiting.push(go);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  leave(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}

const runtimes = new WeakMap<AppDeps, Runtime>();

/** Sets up webhook delivery for this app (call once at start-up to inject a resolver); returns nothing useful. */
export function attachWebhooks(app: AppDeps, options: WebhookRuntimeOptions = {}): void {
  const existing = runtimes.get(app);
  if (existing) void existing.agent.close();
  const policy = new AddressPolicy(app.config.webhooks.allowedPrivateHosts, options.resolve);
  const timeout = app.config.webhooks.timeoutMs;
  const agent = new Agent({
    // The lookup refuses non-public addresses at dial time, after any DNS change since registration.
    connect: { lookup: policy.connectLookup(), timeout },
    connections: PER_ORIGIN_CONCURRENCY,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    keepAliveTimeout: 4_000,
  });
  runtimes.set(app, { policy, agent, inflight: new Map(), gates: new Map(), stopping: new AbortController() });
}

function runtimeOf(app: AppDeps): Runtime {
  if (!runtimes.has(app)) attachWebhooks(app);
  return runtimes.get(app)!;
}

/** The address policy of this app (registration checks). */
export const policyOf = (app: AppDeps): AddressPolicy => runtimeOf(app).policy;

/**
 * Stops every attempt of this process now (the process is stopping). They are not recorded: their claims
 * lapse and a later cycle, here or in another worker, sends them again. Outcomes still waiting for the
 * database to come back are tried once more, then given up (those deliveries are sent again too).
 */
export function interruptAttempts(app: AppDeps): void {
  const rt = runtimes.get(app);
  if (!rt) return;
  for (const set of rt.inflight.values()) for (const c of set) c.abort(new ShuttingDown());
  rt.stopping.abort();
  rt.stopping = new AbortController();
}

/** Interrupts attempts in flight and closes the HTTP client (keep-alive sockets). */
export async function closeWebhooks(app: AppDeps): Promise<void> {
  const rt = runtimes.get(app);
  if (!rt) return;
  interruptAttempts(app);
  runtimes.delete(app);
  await rt.agent.close();
}

/** Aborts this process's attempts to an endpoint that was just deleted. (Disabling lets attempts in flight finish.) */
export function abortEndpointAttempts(app: AppDeps, endpointId: string): void {
  const set = runtimes.get(app)?.inflight.get(endpointId);
  if (set) for (const c of set) c.abort(new EndpointGone());
}

class EndpointGone extends Error {
  constructor() {
    super('endpoint deleted');
    this.name = 'EndpointGone';
  }
}

class ShuttingDown extends Error {
  constructor() {
    super('shutting down');
    this.name = 'ShuttingDown';
  }
}

// ---- one attempt ----

/** What one attempt produced. `status` is null when no HTTP answer came back. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  timeMs: number;
  error: string | null;
  /** Stopped by us (endpoint deleted, process stopping), not by the receiver: not an attempt to count. */
  interrupted?: boolean;
}

/** The body of a delivery: `{"id","type","created","data"}`, serialised once and sent as is on every attempt. */
export const deliveryBody = (id: string, type: string, created: Date, data: Record<string, unknown>): string =>
  JSON.stringify({ id, type, created: Math.floor(created.getTime() / 1000), data });

/**
 * POSTs one signed delivery: a fresh `t` per attempt, the whole exchange within the configured timeout,
 * redirects not followed, the answer read up to a small cap and discarded. Never throws.
 */
export async function attempt(
  app: AppDeps,
  target: { endpointId: string; url: string; secret: string },
  delivery: { id: string; event: string; payload: string },
): Promise<AttemptResult> {
  const rt = runtimeOf(app);
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
    await gate.enter(controller.signal);
    entered = true;
    started = performance.now();
    timer = setTimeout(() => controller.abort(new TimeoutExpired(timeoutMs)), timeoutMs);
    const t = Math.floor(app.clock().getTime() / 1000);
    const response = await untilAborted(request(url, {
      method: 'POST',
      dispatcher: rt.agent,
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'svc-webhooks/1.0',
        'x-svc-delivery': delivery.id,
        'x-svc-event': delivery.event,
        'x-svc-signature': signatureHeader(target.secret, delivery.payload, t),
      },
      body: delivery.payload,
    }), controller.signal);
    let read = 0;
    for await (const chunk of response.body) {
      read += (chunk as Buffer).length;
      if (read >= RESPONSE_BODY_CAP_BYTES) {
        response.body.destroy();
        break;
      }
    }
    const status = response.statusCode;
    const ok = status >= 200 && status < 300;
    const error = ok ? null : status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    return { ok, status, timeMs: elapsed(), error };
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    const interrupted = reason instanceof EndpointGone || reason instanceof ShuttingDown;
    return { ok: false, status: null, timeMs: entered ? elapsed() : 0, error: describeFailure(reason, timeoutMs), ...(interrupted ? { interrupted } : {}) };
  } finally {
    clearTimeout(timer);
    if (entered) gate!.leave();
    if (gate?.idle && rt.gates.get(origin) === gate) rt.gates.delete(origin);
    set.delete(controller);
    if (set.size === 0) rt.inflight.delete(target.endpointId);
  }
}

/**
 * Settles as `pending` does, or rejects as soon as `signal` aborts: undici notices an abort during connect and
 * TLS only at its own (coarse) connect timeout, so a silent server would otherwise hold the attempt longer.
 */
function untilAborted<T extends { body: { destroy(): unknown } }>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      pending.then((late) => late.body.destroy(), () => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

class TimeoutExpired extends Error {
  constructor(readonly ms: number) {
    super(`timeout: no complete answer within ${ms} ms`);
    this.name = 'TimeoutExpired';
  }
}

const TLS_CODE = /CERT|SSL|TLS|SIGNATURE|ISSUER|ALTNAME/;

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

/** The stored state after an attempt: success; or pending with the next backoff; or failed after the sixth failure. */
export function afterAttempt(previousAttempts: number, result: AttemptResult, now: Date): repo.AttemptRecord {
  const attempts = previousAttempts + 1;
  const base = { attempts, responseStatus: result.status, responseTimeMs: result.timeMs };
  if (result.ok) return { ...base, status: 'success', lastError: null, nextAttemptAt: null, deliveredAt: now };
  if (attempts >= MAX_ATTEMPTS) return { ...base, status: 'failed', lastError: result.error, nextAttemptAt: null, deliveredAt: null };
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return { ...base, status: 'pending', lastError: result.error, nextAttemptAt: new Date(now.getTime() + delay), deliveredAt: null };
}

// ---- the two jobs ----


/**
 * Fan-out: turns every unprocessed outbox event into one pending delivery per subscribed, enabled
 * endpoint of its tribe, body serialised once (`created` is the event's enqueue time), due now. Several
 * workers may run it at once: each event is locked by one of them. Returns the deliveries created.
 */
export async function fanOut(app: AppDeps): Promise<number> {
  let created = 0;
  for (;;) {
    const { locked, inserted } = await app.database.db.transaction(async (tx) => {
      const events = await lockUnprocessedEvents(tx, FANOUT_CHUNK);
      if (events.length === 0) return { locked: 0, inserted: 0 };
      const communityIds = [...new Set(events.map((e) => e.communityId).filter((id): id is string => !!id))];
      const byTribe = new Map<string, Array<Pick<WebhookEndpoint, 'id' | 'communityId' | 'events'>>>();
      for (const ep of await repo.enabledEndpointsOf(tx, communityIds)) {
        const list = byTribe.get(ep.communityId);
        if (list) list.push(ep);
        else byTribe.set(ep.communityId, [ep]);
      }
      const now = app.clock();
      const rows = events.flatMap((e) =>
        !isSubscribable(e.type) || !e.communityId
          ? []
          : (byTribe.get(e.communityId) ?? [])
              .filter((ep) => ep.events.includes(e.type))
              .map((ep) => {
                const id = randomUUID();
                return {
                  id,
                  endpointId: ep.id,
                  communityId: ep.communityId,
                  eventId: e.id,
                  event: e.type,
                  payload: deliveryBody(id, e.type, e.createdAt, e.data),
                  status: 'pending' as const,
                  nextAttemptAt: now,
                  createdAt: e.createdAt,
                };
              }),
      );
      let n = 0;
      for (let i = 0; i < rows.length; i += 1000) n += await repo.insertDeliveries(tx, rows.slice(i, i + 1000));
      await markEventsProcessed(tx, events.map((e) => e.id), now);
      return { locked: events.length, inserted: n };
    });
    created += inserted;
    if (locked < FANOUT_CHUNK) return created;
  }
}

/** What one drain cycle did. */
export interface DrainResult {
  /** Deliveries claimed and attempted. */
  attempted: number;
  succeeded: number;
  /** Failed and scheduled again. */
  retrying: number;
  /** Failed for the sixth time: `failed` for good. */
  failed: number;
  /** Attempted but not recorded: the delivery was gone (endpoint deleted) or this process is stopping. */
  discarded: number;
}

/**
 * One drain cycle: fans out first, then claims up to `WEBHOOK_BATCH_SIZE` due deliveries of enabled
 * endpoints and attempts them concurrently, recording each outcome (success, backoff, or failed).
 * Safe to run in several workers at once: no attempt is sent twice. If the database drops meanwhile, the
 * outcomes are kept and written once it is back, while the claim still holds (see `persist`).
 */
export async function drain(app: AppDeps): Promise<DrainResult> {
  await fanOut(app);
  const rt = runtimeOf(app);
  const { batchSize, timeoutMs } = app.config.webhooks;
  const now = app.clock();
  const claimId = randomUUID();
  // The claim covers the longest wait for the batch (every delivery to one origin, waiting its turn) plus half the
  // worker lock lifetime (60 s by default). Outcomes are written within the first half of that margin or given
  // up, so the claim never lapses while this process still holds an outcome; a dead worker's claims lapse with it.
  const sendingMs = Math.ceil(batchSize / PER_ORIGIN_CONCURRENCY) * timeoutMs;
  const marginMs = app.config.worker.lockLifetimeMs / 2;
  const until = new Date(now.getTime() + sendingMs + marginMs);
  const recordBy = performance.now() + sendingMs + marginMs / 2;
  let claimed: repo.ClaimedDelivery[];
  try {
    claimed = await repo.claimDue(app.database.db, now, until, batchSize, claimId);
  } catch (error) {
    // The claim may have been written before the connection dropped: free its rows rather than let them wait.
    await persist(app, rt, 'release the claim', () => repo.releaseClaim(app.database.db, claimId), recordBy);
    throw error;
  }
  const result: DrainResult = { attempted: claimed.length, succeeded: 0, retrying: 0, failed: 0, discarded: 0 };
  const outcomes = await Promise.all(
    claimed.map(async (d) => {
      const outcome = await attempt(app, { endpointId: d.endpointId, url: d.url, secret: d.secret }, d);
      return { delivery: d, outcome, record: afterAttempt(d.attempts, outcome, app.clock()) };
    }),
  );
  // An interrupted attempt is not recorded: its claim lapses and a later cycle tries again.
  const toRecord = outcomes.filter((o) => !o.outcome.interrupted).map((o) => ({ id: o.delivery.id, record: o.record }));
  const recorded = new Set<string>();
  for (let i = 0; i < toRecord.length; i += 1000) {
    const chunk = toRecord.slice(i, i + 1000);
    const ids = await persist(app, rt, 'record attempts', () => repo.recordAttempts(app.database.db, claimId, chunk), recordBy);
    if (ids) for (const id of ids) recorded.add(id);
    else app.log.error({ deliveryIds: chunk.map((o) => o.id) }, 'webhook outcomes not recorded: these deliveries will be sent again');
  }
  for (const { delivery: d, outcome, record } of outcomes) {
    if (!recorded.has(d.id)) result.discarded += 1;
    else if (record.status === 'success') result.succeeded += 1;
    else if (record.status === 'failed') result.failed += 1;
    else result.retrying += 1;
    if (recorded.has(d.id) && !outcome.ok) {
      app.log.warn({ deliveryId: d.id, endpointId: d.endpointId, attempts: record.attempts, error: outcome.error }, 'webhook attempt failed');
    }
  }
  return result;
}

/**
 * Runs one write of the drain until the database takes it: after a failure (the database is restarting) it
 * tries again after 100 ms, then twice as long each time, at most `RECORD_RETRY_MAX_MS` apart, until
 * `by` (a `performance.now()` time) or until the process stops (then once more). Undefined when it gave up.
 */
async function persist<T>(app: AppDeps, rt: Runtime, what: string, write: () => Promise<T>, by: number): Promise<T | undefined> {
  const stopping = rt.stopping.signal;
  for (let tries = 1, delay = 100; ; tries += 1, delay = Math.min(2 * delay, RECORD_RETRY_MAX_MS)) {
    try {
      const written = await write();
      if (tries > 1) app.log.info({ what, tries }, 'webhook drain: written after the database came back');
      return written;
    } catch (error) {
      const wait = Math.min(delay, by - performance.now());
      if (wait <= 0 || stopping.aborted) {
        app.log.error({ err: error, what, tries }, 'webhook drain: the database is unavailable, giving up');
        return undefined;
      }
      if (tries === 1) app.log.warn({ err: error, what }, 'webhook drain: the database is unavailable, retrying');
      await sleep(wait, { signal: stopping }).catch(() => undefined);
    }
  }
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
