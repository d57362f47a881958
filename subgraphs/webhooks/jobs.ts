import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../../db/src/index.js';
import type { AppDeps } from '../kernel/index.js';
import { isSubscribable, lockUnprocessedEvents, markEventsProcessed, type OutboxEvent } from '../outbox/index.js';
import { attempt, deliveryBody, type AttemptResult } from './attempt.js';
import { afterAttempt } from './retry.js';
import { deliveryAttemptDuration, deliveryAttempts, deliveryDelay } from '../kernel/metrics.js';
import { endSpan, startSpan, withSpan } from '../kernel/tracing.js';
import { PER_ORIGIN_CONCURRENCY, type WebhookRuntime } from './runtime.js';
import * as repo from './webhooks.repository.js';
import type { WebhookEndpoint } from './webhooks.tables.js';

/**
 * `svc_webhook_deliveries_total` by outcome (delivered, retried, failed, blocked), the attempt's duration and, once
 * delivered, the delay from the event's creation.
 */
function countDeliveryAttempt(outcome: AttemptResult, status: string, eventAt: Date, now: Date): void {
  deliveryAttempts.inc({ outcome: outcome.blocked ? 'blocked' : status === 'success' ? 'delivered' : status === 'failed' ? 'failed' : 'retried' });
  deliveryAttemptDuration.observe(outcome.timeMs / 1000);
  if (status === 'success') deliveryDelay.observe(Math.max(0, now.getTime() - eventAt.getTime()) / 1000);
}

/**
 * Outcomes the database refused (it is restarting) are written again after 100 ms, then twice as long each time,
 * at most this long apart, until they are written or the claim's record window closes.
 */
const RECORD_RETRY_MAX_MS = 2_000;
/** Outbox events locked per fan-out transaction. */
const FANOUT_CHUNK = 500;

/**
 * Fan-out: turns every unprocessed outbox event into one pending delivery per subscribed, enabled
 * endpoint of its tribe, body serialised once (`created` is the event's enqueue time), due now. Several
 * workers may run it at once: each event is locked by one of them. Returns the deliveries created.
 */
export async function fanOut(app: AppDeps): Promise<number> {
  let created = 0;
  for (;;) {
    // With tracing on, each chunk of events is a `webhooks.fanout` span (a trace of its own) linked to the requests
    // that wrote the events; none when nothing waits (the polling itself is not traced).
    let span: ReturnType<typeof startSpan>;
    const fanned = app.database.db.transaction(async (tx) => {
      const events = await lockUnprocessedEvents(tx, FANOUT_CHUNK);
      if (events.length === 0) return { locked: 0, inserted: 0 };
      span = startSpan('webhooks.fanout', { kind: 'consumer', root: true, links: events.map((e) => e.traceContext), attributes: { 'svc.outbox.events': events.length } });
      return withSpan(span, () => fanOutEvents(app, tx, events));
    });
    let result: { locked: number; inserted: number };
    try {
      result = await fanned;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
    span?.setAttribute('svc.webhook.deliveries_created', result.inserted);
    endSpan(span);
    const { locked, inserted } = result;
    created += inserted;
    if (locked < FANOUT_CHUNK) return created;
  }
}

/** One fan-out chunk inside the transaction that locked `events`: their deliveries inserted, the events marked processed. */
async function fanOutEvents(app: AppDeps, tx: Executor, events: OutboxEvent[]) {
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
              ...(e.traceContext ? { traceContext: e.traceContext } : {}),
            };
          }),
  );
  let n = 0;
  for (let i = 0; i < rows.length; i += 1000) n += await repo.insertDeliveries(tx, rows.slice(i, i + 1000));
  await markEventsProcessed(tx, events.map((e) => e.id), now);
  return { locked: events.length, inserted: n };
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
 * Deliveries the first claim of a cycle takes; each later claim takes up to twice as many as the cycle holds so far,
 * while those are being sent, until the batch is claimed. A batch of at most this many is claimed in one statement.
 */
const FIRST_CLAIM = 5 * PER_ORIGIN_CONCURRENCY;
/** Outcomes written together while attempts are still being sent; the rest are written when the last one ends. */
const RECORD_EVERY = 5 * PER_ORIGIN_CONCURRENCY;
/** At most this many outcomes per statement. */
const RECORD_CHUNK = 1000;

/** Deliveries claimed by one statement, with how long the claim holds them. */
interface Claim {
  id: string;
  rows: repo.ClaimedDelivery[];
  /** `performance.now()` time by which its outcomes are written or given up (see `drain`). */
  recordBy: number;
}

/** A finished attempt waiting to be recorded. */
interface Finished {
  claim: Claim;
  delivery: repo.ClaimedDelivery;
  outcome: AttemptResult;
  record: repo.AttemptRecord;
}

/**
 * One drain cycle: fans out first, then claims up to `WEBHOOK_BATCH_SIZE` due deliveries of enabled
 * endpoints and attempts them concurrently, recording each outcome (success, backoff, or failed).
 * Safe to run in several workers at once: no attempt is sent twice. If the database drops meanwhile, the
 * outcomes are kept and written once it is back, while the claim still holds (see `persist`).
 *
 * The database work overlaps the sending: a large batch is claimed in a few statements (the first small, so
 * sending starts at once; the next while those are sent), and outcomes are written as attempts finish, so only
 * the first claim and the last outcomes are waited for.
 */
export async function drain(app: AppDeps): Promise<DrainResult> {
  await fanOut(app);
  const rt = app.webhooks;
  // Aborted (then replaced) when the process stops: a claim that returns after that sends nothing (its claim lapses).
  const stopping = rt.stopping.signal;
  const { batchSize, timeoutMs } = app.config.webhooks;
  // Each claim covers the longest wait for the batch (every delivery to one origin, waiting its turn) plus half the
  // worker lock lifetime (60 s by default). Outcomes are written within the first half of that margin or given
  // up, so the claim never lapses while this process still holds an outcome; a dead worker's claims lapse with it.
  const sendingMs = Math.ceil(batchSize / PER_ORIGIN_CONCURRENCY) * timeoutMs;
  const marginMs = app.config.worker.lockLifetimeMs / 2;
  const result: DrainResult = { attempted: 0, succeeded: 0, retrying: 0, failed: 0, discarded: 0 };

  const claim = async (limit: number): Promise<Claim> => {
    const now = app.clock();
    const id = randomUUID();
    const recordBy = performance.now() + sendingMs + marginMs / 2;
    try {
      return { id, recordBy, rows: await repo.claimDue(app.database.db, now, new Date(now.getTime() + sendingMs + marginMs), limit, id) };
    } catch (error) {
      // The claim may have been written before the connection dropped: free its rows rather than let them wait.
      await persist(app, rt, 'release the claim', () => repo.releaseClaim(app.database.db, id), recordBy);
      throw error;
    }
  };

  const finished: Finished[] = [];
  let sending = 0;
  let claiming = true;
  let wake = () => undefined as void;
  const changed = () => {
    const w = wake;
    wake = () => undefined;
    w();
  };
  const send = async (c: Claim, d: repo.ClaimedDelivery) => {
    sending += 1;
    try {
      const outcome = await attempt(app, { endpointId: d.endpointId, url: d.url, secret: d.secret }, d);
      // An interrupted attempt is not recorded: its claim lapses and a later cycle tries again.
      if (outcome.interrupted) result.discarded += 1;
      else {
        const record = afterAttempt(d.attempts, outcome, app.clock());
        finished.push({ claim: c, delivery: d, outcome, record });
        countDeliveryAttempt(outcome, record.status, d.createdAt, app.clock());
      }
    } catch (error) {
      result.discarded += 1; // `attempt` never throws: kept so that a bug cannot stall the cycle
      app.log.error({ err: error, deliveryId: d.id }, 'webhook attempt threw');
    } finally {
      sending -= 1;
      changed();
    }
  };
  /** Writes outcomes as attempts finish, RECORD_EVERY at a time, then the rest once nothing is being sent. */
  const recordAsTheyFinish = async () => {
    for (;;) {
      const last = !claiming && sending === 0;
      if (finished.length >= RECORD_EVERY || (last && finished.length > 0)) await record(app, rt, finished.splice(0, RECORD_CHUNK), result);
      else if (last) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const recording = recordAsTheyFinish();

  try {
    for (let held = 0; held < batchSize; ) {
      const limit = Math.min(batchSize - held, held === 0 ? FIRST_CLAIM : 2 * held);
      let c: Claim;
      try {
        c = await claim(limit);
      } catch (error) {
        if (held === 0) throw error;
        // What this cycle already holds is still sent and recorded; the rest waits for the next cycle.
        app.log.error({ err: error }, 'webhook drain: claiming more of the batch failed');
        break;
      }
      held += c.rows.length;
      result.attempted += c.rows.length;
      if (stopping.aborted) {
        result.discarded += c.rows.length; // never sent: the claim lapses, as an interrupted attempt's does
        break;
      }
      for (const d of c.rows) void send(c, d);
      if (c.rows.length < limit) break;
    }
  } finally {
    claiming = false;
    changed();
    await recording;
  }
  return result;
}

/**
 * Records `outcomes` (one statement per claim among them), each only where its claim still holds the row, and
 * counts them in `result`: a delivery whose outcome was not written (gone, or the database did not come back in
 * time) counts as discarded and will be sent again.
 */
async function record(app: AppDeps, rt: WebhookRuntime, outcomes: Finished[], result: DrainResult): Promise<void> {
  const byClaim = new Map<Claim, Finished[]>();
  for (const o of outcomes) {
    const list = byClaim.get(o.claim);
    if (list) list.push(o);
    else byClaim.set(o.claim, [o]);
  }
  for (const [c, list] of byClaim) {
    const rows = list.map((o) => ({ id: o.delivery.id, record: o.record }));
    const ids = await persist(app, rt, 'record attempts', () => repo.recordAttempts(app.database.db, c.id, rows), c.recordBy);
    if (!ids) app.log.error({ deliveryIds: rows.map((o) => o.id) }, 'webhook outcomes not recorded: these deliveries will be sent again');
    for (const { delivery: d, outcome, record: r } of list) {
      if (!ids?.has(d.id)) result.discarded += 1;
      else if (r.status === 'success') result.succeeded += 1;
      else if (r.status === 'failed') result.failed += 1;
      else result.retrying += 1;
      if (ids?.has(d.id) && !outcome.ok) {
        app.log.warn({ deliveryId: d.id, endpointId: d.endpointId, attempts: r.attempts, error: outcome.error }, 'webhook attempt failed');
      }
    }
  }
}

/**
 * Runs one write of the drain until the database takes it: after a failure (the database is restarting) it
 * tries again after 100 ms, then twice as long each time, at most `RECORD_RETRY_MAX_MS` apart, until
 * `by` (a `performance.now()` time) or until the process stops (then once more). Undefined when it gave up.
 */
async function persist<T>(app: AppDeps, rt: WebhookRuntime, what: string, write: () => Promise<T>, by: number): Promise<T | undefined> {
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
