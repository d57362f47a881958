import { pgTable, jsonb, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/src/index.js';

/** The transactional outbox: one row per event, written in the transaction of the change it announces. */
export const events = pgTable('events', {
  id: uuid('id').primaryKey().defaultRandom(),
  communityId: uuid('community_id'),
  type: text('type').notNull(),
  data: jsonb('data').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  processedAt: timestamp('processed_at', { withTimezone: true }),
});

/** Event names a webhook endpoint can subscribe to. */
export const SUBSCRIBABLE_EVENTS = [
  'member.joined',
  'member.left',
  'member.removed',
  'order.paid',
  'post.created',
  'win.approved',
  'event.created',
] as const;
export type EventType = (typeof SUBSCRIBABLE_EVENTS)[number];

const SUBSCRIBABLE = new Set<string>(SUBSCRIBABLE_EVENTS);
/** True for an event name a webhook endpoint can subscribe to. */
export const isSubscribable = (type: string): type is EventType => SUBSCRIBABLE.has(type);

/** Records an event inside `tx`; it is delivered only if the transaction commits. */
export async function emitEvent(tx: Executor, communityId: string, type: EventType, data: Record<string, unknown>): Promise<void> {
  await tx.insert(events).values({ communityId, type, data });
}
