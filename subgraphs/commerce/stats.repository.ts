import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';

/**
 * Paid orders and their revenue per currency, all time, in one grouped statement (currencies in alphabetical order). A
 * partially refunded order counts, with what it kept; a fully refunded one does not.
 */
export async function paidOrdersByCurrency(db: Executor): Promise<Array<{ currency: string; orders: number; revenueCents: number }>> {
  const result = await db.execute(sql`
    select currency, count(*)::int as n, sum(amount_cents - refunded_cents)::bigint as cents
    from orders where status in ('paid', 'partially_refunded')
    group by currency order by currency`);
  return (result as unknown as { rows: Array<{ currency: string; n: number; cents: string | number }> }).rows.map((r) => ({
    currency: r.currency,
    orders: Number(r.n),
    revenueCents: Number(r.cents),
  }));
}
