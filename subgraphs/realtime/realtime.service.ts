import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/** The PostgreSQL `LISTEN/NOTIFY` channel that carries realtime signals between processes. */
export const REALTIME_CHANNEL = 'svc_realtime';

/**
 * What changed, by id only: a listener re-reads the row and checks that each subscriber may still see it.
 * `notification`: a notification of `userId` was added or updated; `unread`: `userId`'s unread counts changed;
 * `message`: a message of a conversation was added, edited or deleted; `conversation`: a conversation changed
 * (participants, title, last message) for its participants; `signedOut`: credentials of `userId` ended, so the
 * sockets signed in with `credential` (every socket of the user without it), except those signed in with `keep`,
 * are closed (4401). A credential is named as the identity domain names it (`session:<id>`, `family:<id>`).
 */
export type RealtimeSignal =
  | { topic: 'notification'; userId: string; notificationId: string }
  | { topic: 'signedOut'; userId: string; credential?: string; keep?: string }
  | { topic: 'unread'; userId: string }
  | { topic: 'message'; conversationId: string; messageId: string }
  | { topic: 'conversation'; conversationId: string };

/**
 * Announces `signal` inside `tx`: PostgreSQL delivers it to every listening process when, and only if, the
 * transaction commits (NOTIFY is transactional), so a subscriber never hears of a row it cannot read yet.
 */
export async function publish(tx: Executor, signal: RealtimeSignal): Promise<void> {
  await tx.execute(sql`select pg_notify(${REALTIME_CHANNEL}, ${JSON.stringify(signal)})`);
}

/**
 * Announces every signal of `signals` inside `tx` in one statement (a fan-out chunk of a thousand notifications costs
 * one round trip, not a thousand); the same delivery rule as `publish`.
 */
export async function publishAll(tx: Executor, signals: readonly RealtimeSignal[]): Promise<void> {
  if (signals.length === 0) return;
  const payloads = signals.map((s) => JSON.stringify(s));
  await tx.execute(sql`select pg_notify(${REALTIME_CHANNEL}, p) from unnest(${sql.param(payloads)}::text[]) as p`);
}
