import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Personal API keys of the resource API (spec 5.3, migration 0031): a user's own keys. The key itself is never stored:
 * only its SHA-256 (hex) and its first 17 characters.
 */
export const personalApiKeys = pgTable('personal_api_keys', {
  id: uuid('id').primaryKey().defaultRandom(),
  userId: uuid('user_id').notNull(),
  name: text('name').notNull(),
  keyPrefix: text('key_prefix').notNull(),
  keyHash: text('key_hash').notNull(),
  scopes: text('scopes').array().notNull(),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export type PersonalApiKeyRow = typeof personalApiKeys.$inferSelect;
/** A personal key as its owner sees it: everything but the hash. */
export type PersonalApiKey = Omit<PersonalApiKeyRow, 'keyHash'>;
