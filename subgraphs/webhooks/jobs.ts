import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppDeps } from '../kernel/index.js';
import { isSubscribable, lockUnprocessedEvents, markEventsProcessed } from '../outbox/index.js';
import { attempt, deliveryBody } from './attempt.js';
import { afterAttempt } from './retry.js';
import { PER_ORIGIN_CONCURRENCY, type WebhookRuntime } from './runtime.js';
import * as repo from './webhooks.repository.js';
import type { WebhookEndpoint } from './webhooks.tables.js';

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
  const rt = app.webhooks;
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
