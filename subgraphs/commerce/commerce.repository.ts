import { desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { orders, type Order } from './commerce.tables.js';

export async function findOrdersByIds(db: Executor, ids: readonly string[]): Promise<Order[]> {
  if (ids.length === 0) return [];
  return db.select().from(orders).where(inArray(orders.id, [...ids]));
}

/** Orders of a tribe, newest first. */
export async function listOrders(db: Executor, communityId: string, limit: number, offset: number): Promise<Order[]> {
  return db
    .select()
    .from(orders)
    .where(eq(orders.communityId, communityId))
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(limit)
    .offset(offset);
}
