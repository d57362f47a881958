import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { mailOutbox, type MailStatus } from './mail.tables.js';

/** A queued mail claimed for one attempt. */
export interface ClaimedMail {
  id: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headers: Record<string, string>;
  attempts: number;
  /** The `traceparent` of the request that queued it, or null. */
  traceContext: string | null;
}

const rowsOf = (result: unknown): Record<string, unknown>[] => (result as { rows: Record<string, unknown>[] }).rows;

/** Inserts a mail; with a `dedupeKey` already used, nothing is inserted and null is returned. */
export async function insert(tx: Executor, values: typeof mailOutbox.$inferInsert): Promise<string | null> {
  const rows = await tx
    .insert(mailOutbox)
    .values(values)
    .onConflictDoNothing({ target: mailOutbox.dedupeKey })
    .returning({ id: mailOutbox.id });
  return rows[0]?.id ?? null;
}

/**
 * Claims up to `limit` due pending mails (oldest due first) until `until`, skipping rows another sender holds
 * (`FOR UPDATE SKIP LOCKED`) and rows whose claim has not lapsed.
 */
export async function claimDue(db: Executor, now: Date, until: Date, limit: number, claimId: string): Promise<ClaimedMail[]> {
  const at = now.toISOString();
  const result = await db.execute(sql`
    update mail_outbox m
       set claim_id = ${claimId}::uuid, claimed_until = ${until.toISOString()}::timestamptz
     where m.id in (
       select id from mail_outbox
        where status = 'pending'
          and next_attempt_at <= ${at}::timestamptz
          and (claimed_until is null or claimed_until <= ${at}::timestamptz)
        order by next_attempt_at, id
        limit ${limit}
        for update skip locked)
    returning m.id, m.kind, m.to_address, m.subject, m.text_body, m.html_body, m.headers, m.attempts, m.trace_context`);
  return rowsOf(result).map((r) => ({
    id: String(r.id),
    kind: String(r.kind),
    to: String(r.to_address),
    subject: String(r.subject),
    text: r.text_body == null ? '' : String(r.text_body),
    html: r.html_body == null ? null : String(r.html_body),
    headers: (typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers ?? {}) as Record<string, string>,
    attempts: Number(r.attempts),
    traceContext: r.trace_context == null ? null : String(r.trace_context),
  }));
}

/** The outcome of one attempt, as stored. */
export interface MailRecord {
  status: MailStatus;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date | null;
  sentAt: Date | null;
  /** Erase the bodies (sent or failed for good: a one-time link must not outlive its purpose here). */
  eraseBody: boolean;
}

/** Records an outcome, only while `claimId` still holds the row; false when the claim was lost. */
export async function record(db: Executor, id: string, claimId: string, r: MailRecord): Promise<boolean> {
  const rows = await db
    .update(mailOutbox)
    .set({
      status: r.status,
      attempts: r.attempts,
      lastError: r.lastError,
      ...(r.nextAttemptAt ? { nextAttemptAt: r.nextAttemptAt } : {}),
      sentAt: r.sentAt,
      claimId: null,
      claimedUntil: null,
      ...(r.eraseBody ? { textBody: null, htmlBody: null } : {}),
    })
    .where(and(eq(mailOutbox.id, id), eq(mailOutbox.claimId, claimId)))
    .returning({ id: mailOutbox.id });
  return rows.length === 1;
}

/** Deletes every mail to `address` (case-insensitive), whatever its status; returns how many. */
export async function deleteToAddress(db: Executor, address: string): Promise<number> {
  const rows = await db.delete(mailOutbox).where(sql`lower(${mailOutbox.toAddress}) = lower(${address})`).returning({ id: mailOutbox.id });
  return rows.length;
}
