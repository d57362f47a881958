-- The wallet (issue 14): a double-entry ledger of every money movement, the tribes' balances it keeps, and payouts.
-- See docs/wallet.md. Amounts are integers in the currency's smallest unit (cents), as on orders.

-- One money movement. `kind` and `source_id` together are unique: recording the same movement twice (a webhook
-- delivered again, a retried transaction) adds nothing. No foreign key to communities or orders: a tribe's deletion
-- (which deletes its orders) keeps its ledger, which is append-only.
create table ledger_transactions (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null,
  kind text not null check (kind in ('order_paid', 'release', 'refund', 'payout_requested', 'payout_paid', 'payout_rejected')),
  -- The order id (order_paid, release), the refund id (refund) or the payout id (payout_*), as text.
  source_id text not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  order_id uuid,
  payout_id uuid,
  -- order_paid: the price and the platform fee taken from it; refund: the amount refunded and the fee reversed.
  gross_amount bigint,
  fee_amount bigint,
  -- order_paid: when its funds leave the hold (paid_at + PAYOUT_HOLD_DAYS).
  available_at timestamptz,
  created_at timestamptz not null default now(),
  constraint ledger_transactions_source_key unique (kind, source_id)
);
-- walletTransactions: a tribe's transactions newest first, keyset on (created_at, id).
create index ledger_transactions_page_idx on ledger_transactions (community_id, created_at desc, id desc);
create index ledger_transactions_order_idx on ledger_transactions (order_id) where order_id is not null;
-- Releases due: order_paid transactions by the end of their hold.
create index ledger_transactions_hold_idx on ledger_transactions (community_id, available_at) where kind = 'order_paid';

-- The entries of a transaction. A positive amount adds to the account's balance, a negative one takes from it; the
-- entries of a transaction sum to zero per currency (checked at commit by ledger_entries_balanced). Accounts:
--   tribe_pending, tribe_available, tribe_payout_requested, tribe_paid_out: the tribe's (community_id) balances;
--   platform_fees: the platform's fee income from that tribe; platform_clearing: the outside world (money paid in by
--   buyers, refunded to them). Only platform_clearing goes below zero.
create table ledger_entries (
  id bigint generated always as identity primary key,
  transaction_id uuid not null references ledger_transactions (id),
  community_id uuid not null,
  account text not null check (account in ('tribe_pending', 'tribe_available', 'tribe_payout_requested', 'tribe_paid_out', 'platform_fees', 'platform_clearing')),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  amount bigint not null check (amount <> 0),
  created_at timestamptz not null default now()
);
create index ledger_entries_transaction_idx on ledger_entries (transaction_id);
create index ledger_entries_account_idx on ledger_entries (community_id, currency, account);

-- The tribe accounts' balances, kept by the trigger below in the transaction that inserts the entries, so that a
-- balance is one row: the row the wallet locks (select ... for update) before it moves money, and the row whose check
-- refuses any balance below zero, whatever code wrote the entry.
create table ledger_balances (
  community_id uuid not null,
  currency text not null,
  account text not null check (account in ('tribe_pending', 'tribe_available', 'tribe_payout_requested', 'tribe_paid_out')),
  balance bigint not null default 0,
  constraint ledger_balances_not_negative check (balance >= 0),
  primary key (community_id, currency, account)
);

create function ledger_entries_apply() returns trigger language plpgsql as $$
begin
  if new.account like 'tribe\_%' then
    -- Update first: an upsert would check its would-be row (the amount alone) against the check, and refuse a debit.
    update ledger_balances set balance = balance + new.amount
     where community_id = new.community_id and currency = new.currency and account = new.account;
    if not found then
      insert into ledger_balances as b (community_id, currency, account, balance)
        values (new.community_id, new.currency, new.account, new.amount)
        on conflict (community_id, currency, account) do update set balance = b.balance + excluded.balance;
    end if;
  end if;
  return null;
end
$$;
create trigger ledger_entries_apply after insert on ledger_entries
  for each row execute function ledger_entries_apply();

-- Every transaction's entries sum to zero per currency, and a transaction has at least two entries: checked when the
-- transaction that wrote them commits (deferred), so that entries may be inserted one by one.
create function ledger_check_balanced() returns trigger language plpgsql as $$
declare
  tid uuid;
  bad record;
begin
  if tg_table_name = 'ledger_transactions' then
    tid := new.id;
  else
    tid := new.transaction_id;
  end if;
  select currency, sum(amount) as total into bad from ledger_entries where transaction_id = tid
    group by currency having sum(amount) <> 0 limit 1;
  if found then
    raise exception 'ledger transaction % does not balance: % %', tid, bad.total, bad.currency using errcode = '23514';
  end if;
  if (select count(*) from ledger_entries where transaction_id = tid) < 2 then
    raise exception 'ledger transaction % has fewer than two entries', tid using errcode = '23514';
  end if;
  return null;
end
$$;
create constraint trigger ledger_entries_balanced after insert on ledger_entries
  deferrable initially deferred for each row execute function ledger_check_balanced();
create constraint trigger ledger_transactions_balanced after insert on ledger_transactions
  deferrable initially deferred for each row execute function ledger_check_balanced();

-- Append-only: the database refuses every UPDATE, DELETE and TRUNCATE of the ledger.
create function ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only', tg_table_name using errcode = '42501';
end
$$;
create trigger ledger_transactions_no_change before update or delete on ledger_transactions
  for each row execute function ledger_append_only();
create trigger ledger_transactions_no_truncate before truncate on ledger_transactions
  for each statement execute function ledger_append_only();
create trigger ledger_entries_no_change before update or delete on ledger_entries
  for each row execute function ledger_append_only();
create trigger ledger_entries_no_truncate before truncate on ledger_entries
  for each statement execute function ledger_append_only();

-- Payout requests: `requested` (its amount moved from available to tribe_payout_requested), then `paid` or `rejected`
-- by platform staff. One open (requested) request per tribe and currency.
create table payouts (
  id uuid primary key default gen_random_uuid(),
  community_id uuid not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  amount bigint not null check (amount > 0),
  status text not null default 'requested' check (status in ('requested', 'paid', 'rejected')),
  requested_by uuid references users (id) on delete set null,
  decided_by uuid references users (id) on delete set null,
  reason text,
  created_at timestamptz not null default now(),
  decided_at timestamptz
);
create unique index payouts_one_open_key on payouts (community_id, currency) where status = 'requested';
-- payouts(status): keyset on (created_at, id) within a status.
create index payouts_status_page_idx on payouts (status, created_at desc, id desc);
create index payouts_page_idx on payouts (created_at desc, id desc);

-- Orders paid before this migration: their order_paid transactions, with the default fee (500 basis points, rounded
-- half up) and the default hold (7 days from paid_at); the configured values apply to orders paid from now on.
insert into ledger_transactions (community_id, kind, source_id, currency, order_id, gross_amount, fee_amount, available_at, created_at)
  select o.community_id, 'order_paid', o.id::text, o.currency, o.id, o.amount_cents, (o.amount_cents::bigint * 500 + 5000) / 10000,
         coalesce(o.paid_at, o.updated_at) + interval '7 days', coalesce(o.paid_at, o.updated_at)
    from orders o where o.status = 'paid' and o.amount_cents > 0;
insert into ledger_entries (transaction_id, community_id, account, currency, amount, created_at)
  select t.id, t.community_id, e.account, t.currency, e.amount, t.created_at
    from ledger_transactions t
    cross join lateral (values
      ('platform_clearing', -t.gross_amount),
      ('tribe_pending', t.gross_amount - t.fee_amount),
      ('platform_fees', t.fee_amount)) as e (account, amount)
   where t.kind = 'order_paid' and e.amount <> 0;
