-- Refunds (issue 14): orders gain partially_refunded (and use refunded), the amount refunded so far, the provider that
-- took the payment and the ids it gave it, a refund request for the owner (the refund_required registration), and
-- one row per refund (a Stripe refund id, or one made by the owner on the manual provider). See
-- docs/events-and-payments.md, Refunds.

alter table orders drop constraint orders_status_check;
alter table orders add constraint orders_status_check check (status in ('pending', 'paid', 'failed', 'partially_refunded', 'refunded'));

-- refunded_cents only grows, and never beyond the order's amount.
alter table orders add column refunded_cents integer not null default 0;
alter table orders add constraint orders_refunded_cents_check check (refunded_cents >= 0 and refunded_cents <= amount_cents);
-- Who took the payment: 'manual' (marked paid by the owner) or 'stripe' (the inbound webhook); null until paid.
alter table orders add column payment_provider text check (payment_provider ~ '^[a-z0-9_]{1,32}$');
alter table orders add column refunded_at timestamptz;
-- A refund the owner must make (a paid event registration that got no seat): set when it is asked for, cleared
-- when the order is fully refunded.
alter table orders add column refund_requested_at timestamptz;
alter table orders add column refund_request_reason text check (char_length(refund_request_reason) <= 500);

-- Orders paid before this migration: by the webhook when a provider event named them, else by hand.
update orders o set payment_provider = case
    when exists (select 1 from payment_provider_events e where e.order_id = o.id) then 'stripe' else 'manual' end
  where o.status in ('paid', 'refunded');

-- The owner's list of refunds to make.
create index orders_refund_requested_idx on orders (community_id, refund_requested_at, id) where refund_requested_at is not null;

-- The provider's ids of an order's payment (Stripe: the checkout session, the payment intent, the charge), recorded
-- when it is paid: a refund event names the payment, not our order.
create table order_payment_refs (
  provider text not null check (provider ~ '^[a-z0-9_]{1,32}$'),
  ref text not null check (char_length(ref) between 1 and 255),
  order_id uuid not null references orders (id) on delete cascade,
  primary key (provider, ref)
);
create index order_payment_refs_order_idx on order_payment_refs (order_id);

-- One refund of an order: by its provider id (Stripe's re_..., or our own id for the manual provider), so the same
-- refund told twice (refund.created, refund.updated, charge.refunded) is counted once. Only succeeded ones count.
create table order_refunds (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null references orders (id) on delete cascade,
  community_id uuid not null references communities (id) on delete cascade,
  provider text not null check (provider ~ '^[a-z0-9_]{1,32}$'),
  refund_id text not null check (char_length(refund_id) between 1 and 255),
  amount_cents integer not null check (amount_cents > 0),
  status text not null check (status in ('pending', 'succeeded', 'failed', 'canceled')),
  reason text check (char_length(reason) <= 500),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (provider, refund_id)
);
create index order_refunds_order_idx on order_refunds (order_id, created_at, id);

-- The owner hears of a refund to make: a notification kind refund_required.
alter table notifications drop constraint notifications_kind_check;
alter table notifications add constraint notifications_kind_check check (kind in ('reply', 'mention', 'reaction',
  'event_created', 'event_reminder', 'role_changed', 'win_approved', 'course_completed', 'message', 'moderation_warning',
  'refund_required'));
