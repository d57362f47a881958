// The wallet (docs/wallet.md): a tribe's balances and ledger for its owner and admins, payout requests by the owner,
// and their decision by platform staff. Money moves only through ledger.ts, inside the transactions below.
import { z } from 'zod';
import {
  type Connection,
  type CursorKey,
  type RequestContext,
  conflict,
  invalid,
  idLoader,
  isTimeAndId,
  isUniqueViolation,
  isUuid,
  notFound,
  pageRequest,
  parseInput,
  text,
  toConnection,
} from '../kernel/index.js';
import { requireRole } from '../members/index.js';
import { lockBalances, recordPayoutDecision, recordPayoutRequested, releaseDue, type LedgerAccount, type TribeAccount } from './ledger.js';
import * as repo from './wallet.repository.js';
import type { LedgerTransactionRow, Payout, PayoutStatus } from './wallet.repository.js';

export type { LedgerTransactionRow, Payout, PayoutStatus } from './wallet.repository.js';

/**
 * The platform-staff gate (platform's `requireStaff`: signed in, else 401; staff, else 403; returns the staff member's
 * id). The platform domain sits above commerce (its statistics read commerce), so commerce gets the gate through
 * `AppDeps`, wired by `server/deps.ts`.
 */
export type StaffGate = (ctx: RequestContext) => Promise<string>;

declare module '../kernel/context.js' {
  interface AppDeps {
    /** Platform staff only: payouts(status), markPayoutPaid, rejectPayout. */
    requirePlatformStaff: StaffGate;
  }
}

/** A tribe's balances in one currency, integer minor units. */
export interface WalletBalance {
  currency: string;
  /** Paid orders still in their hold (PAYOUT_HOLD_DAYS). */
  pending: number;
  /** Free to request as a payout. */
  available: number;
  /** In an open payout request. */
  payoutRequested: number;
  /** Paid out by platform staff, all time. */
  paidOut: number;
}

export interface Wallet {
  communityId: string;
  balances: WalletBalance[];
  openPayouts: Payout[];
}

export interface WalletTransaction extends LedgerTransactionRow {
  entries: Array<{ account: LedgerAccount; amount: number }>;
}

/** The wallet's gate: the tribe's owner or an admin (401, 403; an id that is not a uuid is `not_found`). */
async function requireWalletReader(ctx: RequestContext, communityId: string): Promise<void> {
  if (!isUuid(communityId)) throw notFound('Community');
  await requireRole(ctx, communityId, 'admin');
}

/** Releases the tribe's funds whose hold has ended (by the service's clock), in their own transaction. */
async function settle(ctx: RequestContext, communityId: string): Promise<void> {
  await ctx.app.database.db.transaction((tx) => releaseDue(tx, communityId, ctx.app.clock()));
}

const BALANCE_FIELD: Record<TribeAccount, keyof Omit<WalletBalance, 'currency'>> = {
  tribe_pending: 'pending',
  tribe_available: 'available',
  tribe_payout_requested: 'payoutRequested',
  tribe_paid_out: 'paidOut',
};

/** `wallet(communityId)`: the tribe's pending, available, requested and paid-out balances per currency (owner, admins). */
export async function wallet(ctx: RequestContext, communityId: string): Promise<Wallet> {
  await requireWalletReader(ctx, communityId);
  await settle(ctx, communityId);
  const db = ctx.app.database.db;
  const byCurrency = new Map<string, WalletBalance>();
  for (const row of await repo.balancesOf(db, communityId)) {
    const b = byCurrency.get(row.currency) ?? { currency: row.currency, pending: 0, available: 0, payoutRequested: 0, paidOut: 0 };
    b[BALANCE_FIELD[row.account]] = row.balance;
    byCurrency.set(row.currency, b);
  }
  return { communityId, balances: [...byCurrency.values()], openPayouts: await repo.openPayouts(db, communityId) };
}

/** `walletTransactions`: the tribe's ledger transactions with their entries, newest first, Relay cursors (owner, admins). */
export async function walletTransactions(
  ctx: RequestContext,
  communityId: string,
  args: { first?: number | null; after?: string | null },
): Promise<Connection<WalletTransaction>> {
  await requireWalletReader(ctx, communityId);
  const list = `walletTransactions:${communityId}`;
  const page = pageRequest(ctx, list, args, isTimeAndId);
  await settle(ctx, communityId);
  const db = ctx.app.database.db;
  const found = await repo.transactionsPage(db, communityId, page.after, page.limit + 1);
  const entries = await repo.entriesOf(db, found.slice(0, page.limit).map((t) => t.id));
  const rows = found.map((t) => ({ ...t, entries: entries.filter((e) => e.transactionId === t.id).map(({ account, amount }) => ({ account, amount })) }));
  return toConnection(ctx, list, rows, page.limit, (t): CursorKey => [t.createdAt.toISOString(), t.id]);
}

const payoutInput = z.object({
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in upper case'),
  amount: z.number().int('must be a whole number of minor units').positive('must be above 0').max(Number.MAX_SAFE_INTEGER),
});

/**
 * `requestPayout` (the tribe's owner): moves `amount` of the available balance in `currency` to an open payout request
 * for platform staff. Refusals: BAD_USER_INPUT `invalid_amount` / `invalid_currency`, `amount_exceeds_available`
 * (details.available); CONFLICT `payout_already_open` (one open request per currency). Runs with the tribe's balances
 * locked, so concurrent requests and refunds never take the same money twice.
 */
export async function requestPayout(ctx: RequestContext, raw: { communityId: string; currency: string; amount: number }): Promise<Payout> {
  if (!isUuid(raw.communityId)) throw notFound('Community');
  const caller = await requireRole(ctx, raw.communityId, 'owner');
  const currency = parseInput(payoutInput.pick({ currency: true }), { currency: raw.currency }, 'invalid_currency').currency;
  const amount = parseInput(payoutInput.pick({ amount: true }), { amount: raw.amount }, 'invalid_amount').amount;
  const now = ctx.app.clock();
  try {
    return await ctx.app.database.db.transaction(async (tx) => {
      await releaseDue(tx, raw.communityId, now, currency);
      const balances = await lockBalances(tx, raw.communityId, currency);
      if (await repo.openPayout(tx, raw.communityId, currency)) {
        throw conflict('payout_already_open', `There is an open payout request in ${currency} already: wait until platform staff pay or reject it.`);
      }
      if (amount > balances.tribe_available) {
        throw invalid('amount_exceeds_available', `amount: at most ${balances.tribe_available} is available in ${currency}.`, { available: balances.tribe_available });
      }
      const payout = await repo.insertPayout(tx, { communityId: raw.communityId, currency, amount, requestedBy: caller.userId, at: now });
      await recordPayoutRequested(tx, payout, now);
      return payout;
    });
  } catch (error) {
    // The partial unique index backs the check above (it cannot race: the balances are locked first).
    if (isUniqueViolation(error, 'payouts_one_open_key')) throw conflict('payout_already_open', `There is an open payout request in ${currency} already.`);
    throw error;
  }
}

const STATUS_OF: Record<string, PayoutStatus> = { REQUESTED: 'requested', PAID: 'paid', REJECTED: 'rejected' };

/** `payouts(status)`: payout requests of every tribe, newest first, Relay cursors (platform staff). */
export async function payouts(ctx: RequestContext, args: { status?: string | null; first?: number | null; after?: string | null }): Promise<Connection<Payout>> {
  await ctx.app.requirePlatformStaff(ctx);
  const status = args.status ? STATUS_OF[args.status] : null;
  if (args.status && !status) throw invalid('invalid_status', 'status: must be REQUESTED, PAID or REJECTED.');
  const list = `payouts:${status ?? 'all'}`;
  const page = pageRequest(ctx, list, args, isTimeAndId);
  const rows = await repo.payoutsPage(ctx.app.database.db, status, page.after, page.limit + 1);
  return toConnection(ctx, list, rows, page.limit, (p): CursorKey => [p.createdAt.toISOString(), p.id]);
}

const rejectInput = z.object({ reason: text({ max: 500, min: 1, trim: true, required: 'reason is required', tooShort: 'reason is required' }) });

/**
 * Decides an open payout (platform staff): `paid` moves its amount to the tribe's paid-out balance, `rejected` back to
 * available. NOT_FOUND for an unknown payout; CONFLICT `payout_not_open` when it was decided already.
 */
async function decide(ctx: RequestContext, id: string, outcome: 'paid' | 'rejected', reason: string | null): Promise<Payout> {
  const staffId = await ctx.app.requirePlatformStaff(ctx);
  if (!isUuid(id)) throw notFound('Payout');
  const db = ctx.app.database.db;
  const seen = await repo.findPayout(db, id);
  if (!seen) throw notFound('Payout');
  const now = ctx.app.clock();
  return db.transaction(async (tx) => {
    // The balances first, then the payout: the order requestPayout takes them in, so the two never deadlock.
    await lockBalances(tx, seen.communityId, seen.currency);
    const payout = await repo.findPayout(tx, id, true);
    if (!payout) throw notFound('Payout');
    if (payout.status !== 'requested') throw conflict('payout_not_open', `The payout is ${payout.status} already.`);
    const decided = await repo.decidePayout(tx, id, { status: outcome, decidedBy: staffId, reason, at: now });
    await recordPayoutDecision(tx, decided, outcome, now);
    return decided;
  });
}

/** `markPayoutPaid(id)` (platform staff): the money was sent to the tribe. */
export function markPayoutPaid(ctx: RequestContext, id: string): Promise<Payout> {
  return decide(ctx, id, 'paid', null);
}

/** `rejectPayout(id, reason)` (platform staff): the request is refused, its amount returns to available. */
export async function rejectPayout(ctx: RequestContext, id: string, raw: { reason: unknown }): Promise<Payout> {
  await ctx.app.requirePlatformStaff(ctx);
  const { reason } = parseInput(rejectInput, raw, 'invalid_reason');
  return decide(ctx, id, 'rejected', reason);
}

/** A payout's status as the schema's enum names it. */
export function payoutStatusName(status: PayoutStatus): 'REQUESTED' | 'PAID' | 'REJECTED' {
  return status === 'requested' ? 'REQUESTED' : status === 'paid' ? 'PAID' : 'REJECTED';
}

/** A payout by id without an access check, for a transaction the caller may already see (batched per request). */
export function payoutById(ctx: RequestContext, id: string): Promise<Payout | null> {
  return idLoader<Payout>(ctx, 'commerce.payoutById', (ids) => repo.payoutsByIds(ctx.app.database.db, ids)).load(id);
}
