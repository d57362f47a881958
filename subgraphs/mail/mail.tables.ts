import { integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** The mail outbox: one row per mail, queued in the transaction of the change that causes it. */
export const mailOutbox = pgTable('mail_outbox', {
  id: uuid('id').primaryKey().defaultRandom(),
  kind: text('kind').notNull(),
  toAddress: text('to_address').notNull(),
  subject: text('subject').notNull(),
  textBody: text('text_body'),
  htmlBody: text('html_body'),
  headers: jsonb('headers').$type<Record<string, string>>().notNull(),
  dedupeKey: text('dedupe_key'),
  status: text('status', { enum: ['pending', 'sent', 'logged', 'failed'] }).notNull(),
  attempts: integer('attempts').notNull(),
  lastError: text('last_error'),
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
  claimId: uuid('claim_id'),
  claimedUntil: timestamp('claimed_until', { withTimezone: true }),
  sentAt: timestamp('sent_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  /** The `traceparent` of the request that queued the mail (null when tracing is off): its `mail.send` span links to it. */
  traceContext: text('trace_context'),
});

/** Where a mail is: waiting (`pending`), handed to the SMTP server (`sent`), kept without SMTP (`logged`), given up (`failed`). */
export type MailStatus = (typeof mailOutbox.$inferSelect)['status'];

/**
 * What a mail is, for the log and the outbox (not a notification kind): `verification` and `password_reset` are
 * transactional (asked for by the user, no unsubscribe); `digest` is the daily notifications digest.
 */
export type MailKind = 'verification' | 'password_reset' | 'digest';
