// The wallet's double-entry ledger (docs/wallet.md): every money movement is one ledger transaction whose entries sum
// to zero per currency, in integer minor units. Every function here runs inside the caller's transaction (`tx`), so a
// movement is recorded exactly when the change that causes it commits; each is idempotent on its source (the unique
// key (kind, source_id) of ledger_transactions). The database keeps the tribe balances (ledger_balances, by trigger),
// refuses a negative one, checks that every transaction balances at commit and refuses any UPDATE or DELETE of the
// ledger (db/migrations/0018_wallet_ledger.sql).
import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import { conflict, invalid } from '../kernel/index.js';

export type TribeAccount = 'tribe_pending' | 'tribe_available' | 'tribe_payout_requested' | 'tribe_paid_out';
export type LedgerAccount = TribeAccount | 'platform_fees' | 'platform_clearing';
export type LedgerKind = 'order_paid' | 'release' | 'refund' | 'payout_requested' | 'payout_paid' | 'payout_rejected';

/** The tribe accounts in the order they are locked (always this order: no deadlock between two lockers). */
export const TRIBE_ACCOUNTS: readonly TribeAccount[] = ['tribe_available', 'tribe_paid_out', 'tribe_payout_requested', 'tribe_pending'];

/** The fee and hold of newly paid orders (`PLATFORM_FEE_BPS`, `PAYOUT_HOLD_DAYS`). */
export interface LedgerPolicy {
  feeBps: number;
  holdDays: number;
}
export const DEFAULT_POLICY: LedgerPolicy = { feeBps: 500, holdDays: 7 };

/** The platform fee of a price: `amount × bps / 10000` rounded half up (a 5% fee of 1,010 cents is 51, of 1,009 is 50). */
export function feeOf(amount: number, bps: number): number {
  return Math.floor((amount * bps + 5000) / 10000);
}

/**
 * The part of an order's fee reversed by refunds totalling `refunded` of its `gross`: `fee × refunded / gross`
 * rounded half up. A refund reverses `feeReversed(before + amount) − feeReversed(before)`, so partial refunds adding up
 * to the whole price reverse exactly the whole fee: the totals never drift, whatever the rounding of each step.
 */
export function feeReversed(fee: number, gross: number, refunded: number): number {
  if (refunded >= gross) return fee;
  return Math.floor((2 * fee * refunded + gross) / (2 * gross));
}

/** What recording a movement did: the ledger transaction, and whether this call wrote it (false: it was there). */
export interface Recorded {
  transactionId: string;
  created: boolean;
}

interface EntryInput {
  account: LedgerAccount;
  amount: number;
}

type Rows<T> = { rows: T[] };
async function rows<T>(db: Executor, query: ReturnType<typeof sql>): Promise<T[]> {
  return ((await db.execute(query)) as unknown as Rows<T>).rows;
}

const iso = (d: Date) => d.toISOString();

/**
 * Locks the tribe's balances in one currency (creating the rows at zero when missing) and returns them: every movement
 * that takes money from a tribe balance runs after this, so two of them on the same tribe and currency run one after
 * the other and each sees what the other left.
 */
export async function lockBalances(tx: Executor, communityId: string, currency: string): Promise<Record<TribeAccount, number>> {
  await tx.execute(sql`
    insert into ledger_balances (community_id, currency, account)
    select ${communityId}::uuid, ${currency}, a from unnest(array['tribe_available', 'tribe_paid_out', 'tribe_payout_requested', 'tribe_pending']) as a
    on conflict do nothing`);
  const locked = await rows<{ account: TribeAccount; balance: number }>(tx, sql`
    select account, balance from ledger_balances
     where community_id = ${communityId}::uuid and currency = ${currency}
     order by account for update`);
  const out = { tribe_available: 0, tribe_paid_out: 0, tribe_payout_requested: 0, tribe_pending: 0 };
  for (const r of locked) out[r.account] = Number(r.balance);
  return out;
}

interface TransactionInput {
  communityId: string;
  kind: LedgerKind;
  sourceId: string;
  currency: string;
  orderId?: string | null;
  payoutId?: string | null;
  grossAmount?: number | null;
  feeAmount?: number | null;
  availableAt?: Date | null;
  at: Date;
  entries: EntryInput[];
}

/** Writes one transaction and its entries, unless its source is recorded already (then returns that one). */
async function writeTransaction(tx: Executor, input: TransactionInput): Promise<Recorded> {
  const entries = input.entries.filter((e) => e.amount !== 0);
  const [inserted] = await rows<{ id: string }>(tx, sql`
    insert into ledger_transactions (community_id, kind, source_id, currency, order_id, payout_id, gross_amount, fee_amount, available_at, created_at)
    values (${input.communityId}::uuid, ${input.kind}, ${input.sourceId}, ${input.currency}, ${input.orderId ?? null}::uuid,
            ${input.payoutId ?? null}::uuid, ${input.grossAmount ?? null}::bigint, ${input.feeAmount ?? null}::bigint,
            ${input.availableAt ? iso(input.availableAt) : null}::timestamptz, ${iso(input.at)}::timestamptz)
    on conflict (kind, source_id) do nothing
    returning id`);
  if (!inserted) {
    const existing = await findTransaction(tx, input.kind, input.sourceId);
    if (!existing) throw new Error(`ledger: ${input.kind} ${input.sourceId} conflicted but is not found`);
    return { transactionId: existing.id, created: false };
  }
  for (const e of entries) {
    await tx.execute(sql`
      insert into ledger_entries (transaction_id, community_id, account, currency, amount, created_at)
      values (${inserted.id}::uuid, ${input.communityId}::uuid, ${e.account}, ${input.currency}, ${e.amount}::bigint, ${iso(input.at)}::timestamptz)`);
  }
  return { transactionId: inserted.id, created: true };
}

interface TransactionRow {
  id: string;
  community_id: string;
  currency: string;
  order_id: string | null;
  gross_amount: number | null;
  fee_amount: number | null;
  available_at: string | Date | null;
}

async function findTransaction(db: Executor, kind: LedgerKind, sourceId: string): Promise<TransactionRow | undefined> {
  const [row] = await rows<TransactionRow>(db, sql`
    select id, community_id, currency, order_id, gross_amount::bigint as gross_amount, fee_amount::bigint as fee_amount, available_at
      from ledger_transactions where kind = ${kind} and source_id = ${sourceId}`);
  return row ? { ...row, gross_amount: row.gross_amount === null ? null : Number(row.gross_amount), fee_amount: row.fee_amount === null ? null : Number(row.fee_amount) } : undefined;
}

/**
 * Records a paid order (call it in the transaction that marks the order paid): the buyer's money comes in
 * (platform_clearing −price), the tribe's pending balance gets the price less the platform fee and platform_fees gets
 * the fee; the funds become available `holdDays` after the order's `paid_at`. Idempotent per order. An order of 0
 * (nothing moved) records nothing and returns null. The order must be paid.
 */
export async function recordOrderPaid(tx: Executor, input: { orderId: string }, policy: LedgerPolicy = DEFAULT_POLICY): Promise<Recorded | null> {
  const [order] = await rows<{ id: string; community_id: string; amount_cents: number; currency: string; status: string; paid_at: string | Date | null }>(tx, sql`
    select id, community_id, amount_cents, currency, status, paid_at from orders where id = ${input.orderId}::uuid`);
  if (!order) throw new Error(`ledger: order ${input.orderId} not found`);
  if (order.status !== 'paid' && order.status !== 'refunded' && order.status !== 'partially_refunded') {
    throw new Error(`ledger: order ${input.orderId} is ${order.status}, not paid`);
  }
  const gross = Number(order.amount_cents);
  if (gross <= 0) return null;
  const paidAt = order.paid_at ? new Date(order.paid_at) : new Date();
  const fee = feeOf(gross, policy.feeBps);
  return writeTransaction(tx, {
    communityId: order.community_id,
    kind: 'order_paid',
    sourceId: order.id,
    currency: order.currency,
    orderId: order.id,
    grossAmount: gross,
    feeAmount: fee,
    availableAt: new Date(paidAt.getTime() + policy.holdDays * 86_400_000),
    at: paidAt,
    entries: [
      { account: 'platform_clearing', amount: -gross },
      { account: 'tribe_pending', amount: gross - fee },
      { account: 'platform_fees', amount: fee },
    ],
  });
}

/** What a refund took back: the amount refunded, the fee reversed, and from which tribe balance the rest. */
export interface RecordedRefund extends Recorded {
  amount: number;
  feeAmount: number;
  tribeAmount: number;
  from: 'tribe_pending' | 'tribe_available';
}

/**
 * Records a refund of `amount` (minor units) of a paid order, in the refund's transaction: the money goes back out
 * (platform_clearing +amount), platform_fees gives back its proportional share (see `feeReversed`) and the tribe the
 * rest, from its pending balance while the order's funds are still held, else from its available balance. Idempotent
 * per `refundId` (a second call returns the first's result, whatever its amount).
 *
 * Refused (DomainError, nothing written): `amount` not a positive integer (`invalid_amount`), refunds of the order
 * beyond its price (`refund_exceeds_order`, conflict), a tribe whose available balance cannot cover its share because
 * it was requested or paid out (`insufficient_funds`, conflict). Runs after the tribe's balances are locked, so it
 * never races a payout request into a negative balance.
 */
export async function recordOrderRefund(
  tx: Executor,
  input: { orderId: string; refundId: string; amount: number },
  at: Date = new Date(),
): Promise<RecordedRefund> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw invalid('invalid_amount', 'amount must be a positive integer in minor units.');
  const describe = async (id: string, created: boolean): Promise<RecordedRefund> => {
    const es = await rows<{ account: LedgerAccount; amount: number }>(tx, sql`select account, amount from ledger_entries where transaction_id = ${id}::uuid`);
    const of = (a: LedgerAccount) => -Number(es.find((e) => e.account === a)?.amount ?? 0);
    const fromAvailable = es.some((e) => e.account === 'tribe_available');
    return {
      transactionId: id,
      created,
      amount: -of('platform_clearing'),
      feeAmount: of('platform_fees'),
      tribeAmount: of(fromAvailable ? 'tribe_available' : 'tribe_pending'),
      from: fromAvailable ? 'tribe_available' : 'tribe_pending',
    };
  };
  const already = await findTransaction(tx, 'refund', input.refundId);
  if (already) return describe(already.id, false);
  const paid = await findTransaction(tx, 'order_paid', input.orderId);
  if (!paid) throw new Error(`ledger: order ${input.orderId} has no order_paid transaction`);
  const balances = await lockBalances(tx, paid.community_id, paid.currency);
  // Under the lock: a refund with the same id recorded meanwhile is found now.
  const raced = await findTransaction(tx, 'refund', input.refundId);
  if (raced) return describe(raced.id, false);
  const [state] = await rows<{ refunded: number; released: boolean }>(tx, sql`
    select coalesce(sum(gross_amount) filter (where kind = 'refund'), 0)::bigint as refunded,
           bool_or(kind = 'release') as released
      from ledger_transactions where order_id = ${input.orderId}::uuid`);
  const gross = paid.gross_amount ?? 0;
  const fee = paid.fee_amount ?? 0;
  const before = Number(state?.refunded ?? 0);
  if (before + input.amount > gross) {
    throw conflict('refund_exceeds_order', `The refunds of this order would exceed its price (${gross}; refunded so far ${before}).`);
  }
  const feeAmount = feeReversed(fee, gross, before + input.amount) - feeReversed(fee, gross, before);
  const tribeAmount = input.amount - feeAmount;
  const from = state?.released ? 'tribe_available' : 'tribe_pending';
  if (balances[from] < tribeAmount) {
    throw conflict('insufficient_funds', `The tribe's ${from === 'tribe_available' ? 'available' : 'pending'} balance (${balances[from]}) cannot cover this refund's share (${tribeAmount}).`);
  }
  const recorded = await writeTransaction(tx, {
    communityId: paid.community_id,
    kind: 'refund',
    sourceId: input.refundId,
    currency: paid.currency,
    orderId: input.orderId,
    grossAmount: input.amount,
    feeAmount,
    at,
    entries: [
      { account: 'platform_clearing', amount: input.amount },
      { account: from, amount: -tribeAmount },
      { account: 'platform_fees', amount: -feeAmount },
    ],
  });
  return { ...recorded, amount: input.amount, feeAmount, tribeAmount, from };
}

/**
 * Moves the funds of the tribe's orders whose hold has ended by `now` from pending to available (one `release`
 * transaction per order, of what refunds left of its share), in every currency or in `currency` only. Runs in `tx`
 * and locks the balances of each currency it releases in. Returns the currencies touched.
 */
export async function releaseDue(tx: Executor, communityId: string, now: Date, currency?: string): Promise<string[]> {
  const due = await rows<{ order_id: string; currency: string; source_id: string }>(tx, sql`
    select t.order_id, t.currency, t.source_id from ledger_transactions t
     where t.community_id = ${communityId}::uuid and t.kind = 'order_paid' and t.available_at <= ${iso(now)}::timestamptz
       ${currency ? sql`and t.currency = ${currency}` : sql``}
       and not exists (select 1 from ledger_transactions r where r.kind = 'release' and r.source_id = t.source_id)
     order by t.currency, t.available_at, t.id`);
  const currencies = [...new Set(due.map((d) => d.currency))];
  for (const cur of currencies) {
    await lockBalances(tx, communityId, cur);
    for (const d of due.filter((x) => x.currency === cur)) {
      const [left] = await rows<{ amount: number }>(tx, sql`
        select coalesce(sum(e.amount), 0)::bigint as amount from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
         where t.order_id = ${d.order_id}::uuid and e.account = 'tribe_pending'`);
      const amount = Number(left?.amount ?? 0);
      // A fully refunded order leaves nothing to release: a release of nothing has no entries, and records nothing.
      if (amount <= 0) continue;
      await writeTransaction(tx, {
        communityId,
        kind: 'release',
        sourceId: d.source_id,
        currency: cur,
        orderId: d.order_id,
        at: now,
        entries: [
          { account: 'tribe_pending', amount: -amount },
          { account: 'tribe_available', amount },
        ],
      });
    }
  }
  return currencies;
}

type PayoutRef = { id: string; communityId: string; currency: string; amount: number };

/** A payout's step: its amount moves from one tribe account to another, once per payout and step. */
const PAYOUT_STEPS = {
  payout_requested: ['tribe_available', 'tribe_payout_requested'],
  payout_paid: ['tribe_payout_requested', 'tribe_paid_out'],
  payout_rejected: ['tribe_payout_requested', 'tribe_available'],
} as const satisfies Record<string, readonly [TribeAccount, TribeAccount]>;

async function recordPayoutStep(tx: Executor, payout: PayoutRef, kind: keyof typeof PAYOUT_STEPS, at: Date): Promise<Recorded> {
  const [from, to] = PAYOUT_STEPS[kind];
  return writeTransaction(tx, {
    communityId: payout.communityId,
    kind,
    sourceId: payout.id,
    currency: payout.currency,
    payoutId: payout.id,
    grossAmount: payout.amount,
    at,
    entries: [
      { account: from, amount: -payout.amount },
      { account: to, amount: payout.amount },
    ],
  });
}

/** Records a payout request: its amount moves from the tribe's available balance to tribe_payout_requested. */
export function recordPayoutRequested(tx: Executor, payout: PayoutRef, at: Date): Promise<Recorded> {
  return recordPayoutStep(tx, payout, 'payout_requested', at);
}

/** Records a payout's outcome: paid (requested → paid out) or rejected (requested → back to available). */
export function recordPayoutDecision(tx: Executor, payout: PayoutRef, outcome: 'paid' | 'rejected', at: Date): Promise<Recorded> {
  return recordPayoutStep(tx, payout, outcome === 'paid' ? 'payout_paid' : 'payout_rejected', at);
}
