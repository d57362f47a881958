import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../db/src/index.js';
import { webhookDeliveries, webhookEndpoints, type WebhookDelivery, type WebhookEndpoint } from './webhooks.tables.js';

// ---- endpoints ----

/**
 * Takes the tribe's webhook lock of `purpose` until the transaction ends: two endpoint creations (or two test pings)
 * of one tribe count one after the other, in every process.
 */
export async function lockTribe(tx: Executor, communityId: string, purpose: 'endpoints' | 'pings'): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${purpose}:${communityId}`}, 0))`);
}

/** How many endpoints the tribe has. */
export async function countEndpoints(db: Executor, communityId: string): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(eq(webhookEndpoints.communityId, communityId));
  return Number(row?.n ?? 0);
}

export async function insertEndpoint(db: Executor, values: typeof webhookEndpoints.$inferInsert): Promise<WebhookEndpoint> {
  const [row] = await db.insert(webhookEndpoints).values(values).returning();
  return row;
}

/** A tribe's endpoints, oldest first. */
export async function listEndpoints(db: Executor, communityId: string): Promise<WebhookEndpoint[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.communityId, communityId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function findEndpoint(db: Executor, communityId: string, id: string): Promise<WebhookEndpoint | undefined> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.communityId, communityId), eq(webhookEndpoints.id, id)))
    .limit(1);
  return row;
}

export async function updateEndpoint(
  db: Executor,
  communityId: string,
  id: string,
  patch: Partial<Pick<WebhookEndpoint, 'url' | 'events' | 'description' | 'enabled'>>,
  at: Date,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...patch, updatedAt: at })
    .where(and(eq(webhookEndpoints.communityId, communityId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

/** Deletes an endpoint; its deliveries go with it (foreign key cascade). */
export async function deleteEndpoint(db: Executor, communityId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.communityId, communityId), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  return rows.length === 1;
}

// ---- test pings ----

/**
 * The tribe's test pings sent after `since` and the oldest of their times; older rows of the tribe are deleted first
 * (they no longer count). Call under `lockTribe(..., 'pings')`.
 */
export async function pingsSince(tx: Executor, communityId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
  const at = since.toISOString();
  await tx.execute(sql`delete from webhook_test_pings where community_id = ${communityId}::uuid and sent_at <= ${at}::timestamptz`);
  const [row] = rowsOf(await tx.execute(sql`
    select count(*)::int as n, min(sent_at) as oldest from webhook_test_pings
     where community_id = ${communityId}::uuid and sent_at > ${at}::timestamptz`));
  return { count: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : new Date(row.oldest as string) };
}

/** Counts one test ping of the tribe at `at`. */
export async function recordPing(tx: Executor, communityId: string, at: Date): Promise<void> {
  await tx.execute(sql`insert into webhook_test_pings (community_id, sent_at) values (${communityId}::uuid, ${at.toISOString()}::timestamptz)`);
}

// ---- delivery log ----

/** An endpoint's deliveries, newest first. */
export async function listDeliveries(db: Executor, endpointId: string, limit: number, offset: number): Promise<WebhookDelivery[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, endpointId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit)
    .offset(offset);
}

export async function findDelivery(db: Executor, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, id)))
    .limit(1);
  return row;
}

export async function insertDelivery(db: Executor, values: typeof webhookDeliveries.$inferInsert): Promise<WebhookDelivery> {
  const [row] = await db.insert(webhookDeliveries).values(values).returning();
  return row;
}

/** Starts a new attempt cycle for a failed delivery (same id, same body); undefined if it is not failed. */
export async function requeueFailed(db: Executor, id: string, at: Date): Promise<WebhookDelivery | undefined> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: at, deliveredAt: null, claimId: null, claimedUntil: null })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'failed')))
    .returning();
  return row;
}

// ---- fan-out ----

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;

/** Enabled endpoints of these tribes, with what they subscribe to. */
export async function enabledEndpointsOf(
  tx: Executor,
  communityIds: string[],
): Promise<Pick<WebhookEndpoint, 'id' | 'communityId' | 'events'>[]> {
  if (communityIds.length === 0) return [];
  return tx
    .select({ id: webhookEndpoints.id, communityId: webhookEndpoints.communityId, events: webhookEndpoints.events })
    .from(webhookEndpoints)
    .where(and(inArray(webhookEndpoints.communityId, communityIds), eq(webhookEndpoints.enabled, true)));
}

/** Inserts deliveries; a pair (event, endpoint) that already has one is skipped. */
export async function insertDeliveries(tx: Executor, rows: (typeof webhookDeliveries.$inferInsert)[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await tx.insert(webhookDeliveries).values(rows).onConflictDoNothing().returning({ id: webhookDeliveries.id });
  return inserted.length;
}

// ---- drain ----

/** A delivery claimed for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  event: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
  /** The `traceparent` of the request that wrote the event, or null. */
  traceContext: string | null;
  /** When the event was written (the delivery's `created_at`). */
  createdAt: Date;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for one attempt: rows another worker is
 * claiming right now are skipped (`FOR UPDATE SKIP LOCKED`), and a claim holds until `until`, so two
 * workers never send the same attempt. A worker that dies mid-attempt frees its rows when `until` passes.
 *
 * The due rows are read in the due index's order and the scan stops after `limit` of them, whatever the planner
 * estimates: a burst of deliveries is claimed before autovacuum analyses the table, and with the estimate of a
 * handful of pending rows PostgreSQL chose a bitmap scan of every pending row and a sort (15 to 20 ms per claim with
 * 9,000 pending, against 1 to 3 ms). Hence bitmap scans off for this statement and the endpoint checked per row (a
 * join would be planned as a hash join, which loses the order).
 */
export async function claimDue(db: Db, now: Date, until: Date, limit: number, claimId: string): Promise<ClaimedDelivery[]> {
  const at = now.toISOString();
  const result = await db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_bitmapscan = off`);
    return tx.execute(sql`
      update webhook_deliveries d
         set claim_id = ${claimId}::uuid, claimed_until = ${until.toISOString()}::timestamptz
        from webhook_endpoints e
       where e.id = d.endpoint_id
         and d.id in (
           select d2.id from webhook_deliveries d2
            where d2.status = 'pending'
              and d2.next_attempt_at <= ${at}::timestamptz
              and (d2.claimed_until is null or d2.claimed_until <= ${at}::timestamptz)
              and (select e2.enabled from webhook_endpoints e2 where e2.id = d2.endpoint_id)
            order by d2.next_attempt_at, d2.id
            limit ${limit}
            for update of d2 skip locked)
      returning d.id, d.endpoint_id, d.event, d.payload, d.attempts, e.url, e.secret, d.trace_context, d.created_at`);
  });
  return rowsOf(result).map((r) => ({
    id: String(r.id),
    endpointId: String(r.endpoint_id),
    event: String(r.event),
    payload: String(r.payload),
    attempts: Number(r.attempts),
    url: String(r.url),
    secret: String(r.secret),
    traceContext: r.trace_context == null ? null : String(r.trace_context),
    createdAt: new Date(r.created_at as string | Date),
  }));
}

/** Frees the rows of a claim whose outcome is unknown (the claim statement failed), so the next cycle may take them. */
export async function releaseClaim(db: Executor, claimId: string): Promise<number> {
  const rows = await db
    .update(webhookDeliveries)
    .set({ claimId: null, claimedUntil: null })
    .where(eq(webhookDeliveries.claimId, claimId))
    .returning({ id: webhookDeliveries.id });
  return rows.length;
}

/** The outcome of one attempt, as stored. */
export type AttemptRecord = Pick<
  WebhookDelivery,
  'status' | 'attempts' | 'responseStatus' | 'responseTimeMs' | 'lastError' | 'nextAttemptAt' | 'deliveredAt'
>;

/**
 * Records the attempts of one drain cycle in one statement, each only where `claimId` still holds the row:
 * a delivery deleted meanwhile (its endpoint was deleted) records nothing. Returns the ids recorded.
 */
export async function recordAttempts(
  db: Executor,
  claimId: string,
  outcomes: Array<{ id: string; record: AttemptRecord }>,
): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  // One array per column (nine parameters, whatever the batch size): the statement text never changes, so
  // PostgreSQL parses it quickly and drizzle builds no tuple per outcome.
  const n = outcomes.length;
  const ids = new Array<string>(n);
  const statuses = new Array<string>(n);
  const attempts = new Array<number>(n);
  const responseStatuses = new Array<number | null>(n);
  const times = new Array<number | null>(n);
  const errors = new Array<string | null>(n);
  const nextAt = new Array<string | null>(n);
  const deliveredAt = new Array<string | null>(n);
  for (let i = 0; i < n; i += 1) {
    const { id, record: r } = outcomes[i]!;
    ids[i] = id;
    statuses[i] = r.status;
    attempts[i] = r.attempts;
    responseStatuses[i] = r.responseStatus;
    times[i] = r.responseTimeMs;
    errors[i] = r.lastError;
    nextAt[i] = r.nextAttemptAt ? r.nextAttemptAt.toISOString() : null;
    deliveredAt[i] = r.deliveredAt ? r.deliveredAt.toISOString() : null;
  }
  const result = await db.execute(sql`
    update webhook_deliveries d
       set status = v.status, attempts = v.attempts, response_status = v.response_status,
           response_time_ms = v.response_time_ms, last_error = v.last_error, next_attempt_at = v.next_attempt_at,
           delivered_at = v.delivered_at, claim_id = null, claimed_until = null
      from unnest(${sql.param(ids)}::uuid[], ${sql.param(statuses)}::text[], ${sql.param(attempts)}::int[],
                  ${sql.param(responseStatuses)}::int[], ${sql.param(times)}::int[], ${sql.param(errors)}::text[],
                  ${sql.param(nextAt)}::timestamptz[], ${sql.param(deliveredAt)}::timestamptz[])
           as v(id, status, attempts, response_status, response_time_ms, last_error, next_attempt_at, delivered_at)
     where d.id = v.id and d.claim_id = ${claimId}::uuid
    returning d.id`);
  return new Set(rowsOf(result).map((r) => String(r.id)));
}
