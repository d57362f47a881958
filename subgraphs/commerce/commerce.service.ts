import {
  type RequestContext,
  platformPaging,
  toPlatformPage,
  type PlatformPage,
  idLoader,
  requireScope,
} from '../kernel/index.js';
import type { Executor } from '../../db/src/index.js';
import { findCommunityWith } from '../communities/index.js';
import * as repo from './commerce.repository.js';
import type { Order } from './commerce.tables.js';

export type { Order, OrderStatus } from './commerce.tables.js';

/** Platform API (`orders:read`): orders of the key's tribe, newest first. */
export async function platformOrders(
  ctx: RequestContext,
  raw: { page?: number | null; pageSize?: number | null },
): Promise<PlatformPage<Order>> {
  const communityId = requireScope(ctx, 'orders:read');
  const p = platformPaging(raw.page, raw.pageSize);
  return toPlatformPage(await repo.listOrders(ctx.app.database.db, communityId, p.pageSize, p.offset), p);
}

/** What every event about an order carries: its identifiers, buyer, product and amount in cents. */
export function orderFields(order: Order): Record<string, unknown> {
  return {
    orderId: order.id,
    userId: order.buyerId,
    amount: order.amountCents,
    currency: order.currency,
    productType: order.productType,
    productId: order.productId,
  };
}

/**
 * The data of the order's webhook events (`order.paid`, and `order.refunded` with its refund fields added): the
 * order's fields and the tribe's handle, read through `tx`.
 */
export async function orderEventData(tx: Executor, order: Order): Promise<Record<string, unknown>> {
  const community = await findCommunityWith(tx, order.communityId);
  return { ...orderFields(order), handle: community?.handle ?? null };
}

/** An order by id without an access check, for entity references from other subgraphs (batched per request). */
export function orderById(ctx: RequestContext, id: string): Promise<Order | null> {
  const loader = idLoader<Order>(ctx, 'commerce.orderById', (ids) => repo.findOrdersByIds(ctx.app.database.db, ids));
  return loader.load(id);
}
