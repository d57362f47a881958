import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Identity-provider webhook messages already processed, by the provider's message id (replays are no-ops). */
export const idpWebhookMessages = pgTable('idp_webhook_messages', {
  messageId: text('message_id').primaryKey(),
  eventType: text('event_type').notNull(),
  /** The provider's user id the message named (`data.id`), when it named one. */
  subject: text('subject'),
  receivedAt: timestamp('received_at', { withTimezone: true }).notNull(),
});
