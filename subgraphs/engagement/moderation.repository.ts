import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import {
  moderationAuditLog,
  moderationItems,
  moderationReports,
  moderationWarnings,
  type AuditAction,
  type AuditEntry,
  type ModerationItem,
  type ModerationWarning,
  type Report,
  type ReportReason,
  type TargetType,
} from './moderation.tables.js';

/** Inserts an open report unless the reporter has one open on the target; undefined when one was open. */
export async function insertReport(db: Executor, values: typeof moderationReports.$inferInsert): Promise<Report | undefined> {
  const [row] = await db.insert(moderationReports).values(values).onConflictDoNothing().returning();
  return row;
}

/** The reporter's open report on a target. */
export async function findOpenReport(db: Executor, reporterId: string, targetType: TargetType, targetId: string): Promise<Report | undefined> {
  const [row] = await db
    .select()
    .from(moderationReports)
    .where(
      and(
        eq(moderationReports.reporterId, reporterId),
        eq(moderationReports.targetType, targetType),
        eq(moderationReports.targetId, targetId),
        isNull(moderationReports.resolvedAt),
      ),
    )
    .limit(1);
  return row;
}

/** Opens (or reopens) the target's queue item at `at`; the snapshot is kept from the first report. */
export async function openItem(
  db: Executor,
  values: { communityId: string; targetType: TargetType; targetId: string; subjectUserId: string | null; snapshot: string | null },
  at: Date,
): Promise<ModerationItem> {
  const [row] = await db
    .insert(moderationItems)
    .values({ ...values, status: 'open', lastReportAt: at })
    .onConflictDoUpdate({
      target: [moderationItems.communityId, moderationItems.targetId],
      set: { status: 'open', lastReportAt: at, resolvedAt: null, resolvedBy: null, action: null, actionReason: null },
    })
    .returning();
  return row;
}

export async function findItem(db: Executor, communityId: string, targetId: string): Promise<ModerationItem | undefined> {
  const [row] = await db
    .select()
    .from(moderationItems)
    .where(and(eq(moderationItems.communityId, communityId), eq(moderationItems.targetId, targetId)))
    .limit(1);
  return row;
}

/** Marks the target's item resolved (creating it for a target nobody reported) and closes its open reports. */
export async function resolveItem(
  db: Executor,
  values: { communityId: string; targetType: TargetType; targetId: string; subjectUserId: string | null },
  resolution: { by: string; action: AuditAction; reason: string | null; at: Date },
): Promise<ModerationItem> {
  const set = { status: 'resolved' as const, resolvedAt: resolution.at, resolvedBy: resolution.by, action: resolution.action, actionReason: resolution.reason };
  const [row] = await db
    .insert(moderationItems)
    .values({ ...values, ...set })
    .onConflictDoUpdate({ target: [moderationItems.communityId, moderationItems.targetId], set })
    .returning();
  await db
    .update(moderationReports)
    .set({ resolvedAt: resolution.at, resolvedBy: resolution.by, resolution: resolution.action })
    .where(
      and(
        eq(moderationReports.communityId, values.communityId),
        eq(moderationReports.targetId, values.targetId),
        isNull(moderationReports.resolvedAt),
      ),
    );
  return row;
}

/** A page of a tribe's queue: open items by latest report, resolved ones by resolution, newest first (keyset). */
export async function queuePage(
  db: Executor,
  communityId: string,
  status: 'open' | 'resolved',
  after: readonly [string, string] | null,
  limit: number,
): Promise<ModerationItem[]> {
  const column = status === 'open' ? moderationItems.lastReportAt : moderationItems.resolvedAt;
  return db
    .select()
    .from(moderationItems)
    .where(
      and(
        eq(moderationItems.communityId, communityId),
        eq(moderationItems.status, status),
        after ? sql`(${column}, ${moderationItems.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(column), desc(moderationItems.id))
    .limit(limit);
}

/**
 * Report counts and reasons of some items in one statement: open reports of open items, and for a resolved item the
 * reports its latest resolution closed.
 */
export async function reportSummaries(
  db: Executor,
  items: readonly ModerationItem[],
): Promise<Map<string, { count: number; reasons: ReportReason[] }>> {
  if (items.length === 0) return new Map();
  const rows = await db
    .select({ itemId: moderationItems.id, reason: moderationReports.reason, n: count() })
    .from(moderationItems)
    .innerJoin(
      moderationReports,
      and(
        eq(moderationReports.communityId, moderationItems.communityId),
        eq(moderationReports.targetId, moderationItems.targetId),
        sql`${moderationReports.resolvedAt} is not distinct from ${moderationItems.resolvedAt}`,
      ),
    )
    .where(inArray(moderationItems.id, items.map((i) => i.id)))
    .groupBy(moderationItems.id, moderationReports.reason);
  const out = new Map<string, { count: number; reasons: ReportReason[] }>();
  for (const r of rows) {
    const s = out.get(r.itemId) ?? { count: 0, reasons: [] };
    s.count += Number(r.n);
    s.reasons.push(r.reason);
    out.set(r.itemId, s);
  }
  for (const s of out.values()) s.reasons.sort();
  return out;
}

export async function insertWarning(db: Executor, values: typeof moderationWarnings.$inferInsert): Promise<ModerationWarning> {
  const [row] = await db.insert(moderationWarnings).values(values).returning();
  return row;
}

/** A user's warnings in a tribe, newest first (at most `limit`). */
export async function warningsOf(db: Executor, communityId: string, userId: string, limit: number): Promise<ModerationWarning[]> {
  return db
    .select()
    .from(moderationWarnings)
    .where(and(eq(moderationWarnings.communityId, communityId), eq(moderationWarnings.userId, userId)))
    .orderBy(desc(moderationWarnings.createdAt), desc(moderationWarnings.id))
    .limit(limit);
}

/** Appends one row to the tribe audit log (the only write the log takes). */
export async function appendAudit(db: Executor, values: typeof moderationAuditLog.$inferInsert): Promise<AuditEntry> {
  const [row] = await db.insert(moderationAuditLog).values(values).returning();
  return row;
}

/** A page of a tribe's audit log, newest first (keyset on created_at, id). */
export async function auditPage(db: Executor, communityId: string, after: readonly [string, string] | null, limit: number): Promise<AuditEntry[]> {
  return db
    .select()
    .from(moderationAuditLog)
    .where(
      and(
        eq(moderationAuditLog.communityId, communityId),
        after ? sql`(${moderationAuditLog.createdAt}, ${moderationAuditLog.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined,
      ),
    )
    .orderBy(desc(moderationAuditLog.createdAt), desc(moderationAuditLog.id))
    .limit(limit);
}
