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
import { viewerRole } from '../members/index.js';
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

/** An order by id without an access check (batched per request): for services that check access themselves. */
export function orderById(ctx: RequestContext, id: string): Promise<Order | null> {
  const loader = idLoader<Order>(ctx, 'commerce.orderById', (ids) => repo.findOrdersByIds(ctx.app.database.db, ids));
  return loader.load(id);
}

/**
 * The order when the caller may read it, else null: its buyer, or the owner of its tribe (who is paid for it, marks
 * it paid and refunds it). What an entity reference from another subgraph answers (an enrollment's, a registration's
 * or a challenge entry's order), so that nobody else reads an order through a seam.
 */
export async function readableOrder(ctx: RequestContext, id: string): Promise<Order | null> {
  if (!ctx.caller) return null;
  const order = await orderById(ctx, id);
  if (!order) return null;
  if (order.buyerId === ctx.caller.userId) return order;
  return (await viewerRole(ctx, order.communityId)) === 'owner' ? order : null;
}
