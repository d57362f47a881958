import { and, desc, eq, sql } from 'drizzle-orm';
import { preparedOnce, type Executor } from '../../db/src/index.js';
import { platformAuditLog, platformStaff, type PlatformAuditRow } from './admin.tables.js';

/** Grants staff; false when the user was staff already. */
export async function insertStaff(db: Executor, userId: string, grantedBy: string, now: Date): Promise<boolean> {
  const rows = await db.insert(platformStaff).values({ userId, grantedBy, grantedAt: now }).onConflictDoNothing().returning({ userId: platformStaff.userId });
  return rows.length === 1;
}

/** Revokes staff; false when the user was not staff. */
export async function deleteStaff(db: Executor, userId: string): Promise<boolean> {
  const rows = await db.delete(platformStaff).where(eq(platformStaff.userId, userId)).returning({ userId: platformStaff.userId });
  return rows.length === 1;
}

const staffById = preparedOnce((db) =>
  db
    .select({ userId: platformStaff.userId })
    .from(platformStaff)
    .where(sql`${platformStaff.userId} = any(${sql.placeholder('ids')}::uuid[])`)
    .prepare('platform_staff_by_ids'),
);

/** Which of `userIds` are platform staff (one statement). */
export async function staffAmong(db: Executor, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  return new Set((await staffById(db).execute({ ids: [...userIds] })).map((r) => r.userId));
}

/** True when the audit log records a `staff.revoke` of the user (staff taken away by the operator). */
export async function wasRevoked(db: Executor, userId: string): Promise<boolean> {
  const rows = await db
    .select({ id: platformAuditLog.id })
    .from(platformAuditLog)
    .where(and(eq(platformAuditLog.action, 'staff.revoke'), eq(platformAuditLog.targetType, 'user'), eq(platformAuditLog.targetId, userId)))
    .limit(1);
  return rows.length === 1;
}

export async function appendAudit(db: Executor, values: typeof platformAuditLog.$inferInsert): Promise<PlatformAuditRow> {
  const [row] = await db.insert(platformAuditLog).values(values).returning();
  return row;
}

/** A page of the audit log, newest first (keyset on created_at, id; `limit` rows). */
export async function auditPage(db: Executor, after: [string, string] | null, limit: number): Promise<PlatformAuditRow[]> {
  return db
    .select()
    .from(platformAuditLog)
    .where(after ? sql`(${platformAuditLog.createdAt}, ${platformAuditLog.id}) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : undefined)
    .orderBy(desc(platformAuditLog.createdAt), desc(platformAuditLog.id))
    .limit(limit);
}

/** Audit rows about one target, newest first (tests and support screens). */
export async function auditOfTarget(db: Executor, targetId: string): Promise<PlatformAuditRow[]> {
  return db.select().from(platformAuditLog).where(and(eq(platformAuditLog.targetId, targetId))).orderBy(desc(platformAuditLog.createdAt));
}
