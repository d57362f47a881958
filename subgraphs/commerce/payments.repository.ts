import type { Executor } from '../../db/src/index.js';
import { paymentProviderEvents } from './payments.tables.js';

/**
 * Records a provider event as processed; false when the same provider event id was recorded before (a replay).
 * A concurrent delivery of the same event waits on the primary key until the first transaction ends.
 */
export async function recordProviderEvent(db: Executor, values: typeof paymentProviderEvents.$inferInsert): Promise<boolean> {
  const rows = await db
    .insert(paymentProviderEvents)
    .values(values)
    .onConflictDoNothing()
    .returning({ eventId: paymentProviderEvents.eventId });
  return rows.length === 1;
}
