// SQL of the wallet's reads and of payouts (the ledger's writes are in ledger.ts). See docs/wallet.md.
import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/src/index.js';
import type { LedgerAccount, LedgerKind, TribeAccount } from './ledger.js';

async function rows<T>(db: Executor, query: SQL): Promise<T[]> {
  return ((await db.execute(query)) as unknown as { rows: T[] }).rows;
}

const date = (v: string | Date) => new Date(v);
const dateOrNull = (v: string | Date | null) => (v === null ? null : new Date(v));
const num = (v: number | string | null) => (v === null ? null : Number(v));

export interface BalanceRow {
  currency: string;
  account: TribeAccount;
  balance: number;
}

/** The tribe's balances, every currency it ever had one in. */
export async function balancesOf(db: Executor, communityId: string): Promise<BalanceRow[]> {
  const found = await rows<BalanceRow>(db, sql`
    select currency, account, balance from ledger_balances where community_id = ${communityId}::uuid order by currency, account`);
  return found.map((r) => ({ ...r, balance: Number(r.balance) }));
}

export interface LedgerTransactionRow {
  id: string;
  communityId: string;
  kind: LedgerKind;
  currency: string;
  orderId: string | null;
  payoutId: string | null;
  grossAmount: number | null;
  feeAmount: number | null;
  availableAt: Date | null;
  createdAt: Date;
}

interface RawTransaction {
  id: string;
  community_id: string;
  kind: LedgerKind;
  currency: string;
  order_id: string | null;
  payout_id: string | null;
  gross_amount: number | string | null;
  fee_amount: number | string | null;
  available_at: string | Date | null;
  created_at: string | Date;
}

/** A page of the tribe's ledger transactions, newest first (keyset on created_at, id; `limit` rows). */
export async function transactionsPage(db: Executor, communityId: string, after: [string, string] | null, limit: number): Promise<LedgerTransactionRow[]> {
  const keyset = after ? sql`and (created_at, id) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : sql``;
  const found = await rows<RawTransaction>(db, sql`
    select id, community_id, kind, currency, order_id, payout_id, gross_amount, fee_amount, available_at, created_at
      from ledger_transactions where community_id = ${communityId}::uuid ${keyset}
     order by created_at desc, id desc limit ${limit}`);
  return found.map((r) => ({
    id: r.id,
    communityId: r.community_id,
    kind: r.kind,
    currency: r.currency,
    orderId: r.order_id,
    payoutId: r.payout_id,
    grossAmount: num(r.gross_amount),
    feeAmount: num(r.fee_amount),
    availableAt: dateOrNull(r.available_at),
    createdAt: date(r.created_at),
  }));
}

export interface EntryRow {
  transactionId: string;
  account: LedgerAccount;
  amount: number;
}

/** The entries of the given transactions (one statement). */
export async function entriesOf(db: Executor, transactionIds: readonly string[]): Promise<EntryRow[]> {
  if (transactionIds.length === 0) return [];
  const found = await rows<{ transaction_id: string; account: LedgerAccount; amount: number | string }>(db, sql`
    select transaction_id, account, amount from ledger_entries
     where transaction_id = any(${`{${transactionIds.join(',')}}`}::uuid[]) order by id`);
  return found.map((r) => ({ transactionId: r.transaction_id, account: r.account, amount: Number(r.amount) }));
}

export type PayoutStatus = 'requested' | 'paid' | 'rejected';

export interface Payout {
  id: string;
  communityId: string;
  currency: string;
  amount: number;
  status: PayoutStatus;
  requestedBy: string | null;
  decidedBy: string | null;
  reason: string | null;
  createdAt: Date;
  decidedAt: Date | null;
}

interface RawPayout {
  id: string;
  community_id: string;
  currency: string;
  amount: number | string;
  status: PayoutStatus;
  requested_by: string | null;
  decided_by: string | null;
  reason: string | null;
  created_at: string | Date;
  decided_at: string | Date | null;
}

const PAYOUT_COLUMNS = sql`id, community_id, currency, amount, status, requested_by, decided_by, reason, created_at, decided_at`;

const toPayout = (r: RawPayout): Payout => ({
  id: r.id,
  communityId: r.community_id,
  currency: r.currency,
  amount: Number(r.amount),
  status: r.status,
  requestedBy: r.requested_by,
  decidedBy: r.decided_by,
  reason: r.reason,
  createdAt: date(r.created_at),
  decidedAt: dateOrNull(r.decided_at),
});

export async function insertPayout(tx: Executor, values: { communityId: string; currency: string; amount: number; requestedBy: string; at: Date }): Promise<Payout> {
  const [row] = await rows<RawPayout>(tx, sql`
    insert into payouts (community_id, currency, amount, requested_by, created_at)
    values (${values.communityId}::uuid, ${values.currency}, ${values.amount}::bigint, ${values.requestedBy}::uuid, ${values.at.toISOString()}::timestamptz)
    returning ${PAYOUT_COLUMNS}`);
  return toPayout(row);
}

/** The tribe's open (requested) payout in a currency, if any. */
export async function openPayout(db: Executor, communityId: string, currency: string): Promise<Payout | undefined> {
  const [row] = await rows<RawPayout>(db, sql`
    select ${PAYOUT_COLUMNS} from payouts where community_id = ${communityId}::uuid and currency = ${currency} and status = 'requested'`);
  return row ? toPayout(row) : undefined;
}

/** The tribe's open payouts, every currency. */
export async function openPayouts(db: Executor, communityId: string): Promise<Payout[]> {
  const found = await rows<RawPayout>(db, sql`
    select ${PAYOUT_COLUMNS} from payouts where community_id = ${communityId}::uuid and status = 'requested' order by currency`);
  return found.map(toPayout);
}

export async function findPayout(db: Executor, id: string, lock = false): Promise<Payout | undefined> {
  const [row] = await rows<RawPayout>(db, sql`select ${PAYOUT_COLUMNS} from payouts where id = ${id}::uuid ${lock ? sql`for update` : sql``}`);
  return row ? toPayout(row) : undefined;
}

export async function decidePayout(tx: Executor, id: string, values: { status: 'paid' | 'rejected'; decidedBy: string; reason: string | null; at: Date }): Promise<Payout> {
  const [row] = await rows<RawPayout>(tx, sql`
    update payouts set status = ${values.status}, decided_by = ${values.decidedBy}::uuid, reason = ${values.reason}, decided_at = ${values.at.toISOString()}::timestamptz
     where id = ${id}::uuid returning ${PAYOUT_COLUMNS}`);
  return toPayout(row);
}

/** A page of payouts, newest first, of one status or all (keyset on created_at, id; `limit` rows). */
export async function payoutsPage(db: Executor, status: PayoutStatus | null, after: [string, string] | null, limit: number): Promise<Payout[]> {
  const conditions = [
    status ? sql`status = ${status}` : sql`true`,
    after ? sql`(created_at, id) < (${after[0]}::timestamptz, ${after[1]}::uuid)` : sql`true`,
  ];
  const found = await rows<RawPayout>(db, sql`
    select ${PAYOUT_COLUMNS} from payouts where ${sql.join(conditions, sql` and `)} order by created_at desc, id desc limit ${limit}`);
  return found.map(toPayout);
}

export async function payoutsByIds(db: Executor, ids: readonly string[]): Promise<Payout[]> {
  if (ids.length === 0) return [];
  const found = await rows<RawPayout>(db, sql`select ${PAYOUT_COLUMNS} from payouts where id = any(${`{${ids.join(',')}}`}::uuid[])`);
  return found.map(toPayout);
}
