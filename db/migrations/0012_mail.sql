-- Email (issue 12): the mail outbox and its sender, email verification and password reset tokens, the daily digest.

-- The mail outbox (subgraphs/mail/, the only code that touches it). A mail is queued in the transaction of the change
-- that causes it and sent by the `mail.send` job: pending → sent, or failed after its last retry; with SMTP_URL unset
-- it becomes `logged` (subject and recipient logged, the row kept for inspection). Bodies are erased once a mail is
-- sent or failed for good: a queued mail may hold a one-time link, which must not outlive its purpose here.
create table mail_outbox (
  id uuid primary key default gen_random_uuid(),
  -- What the mail is: verification, password_reset, digest (not a notification kind).
  kind text not null,
  to_address text not null,
  subject text not null,
  text_body text,
  html_body text,
  -- Extra headers (List-Unsubscribe, List-Unsubscribe-Post), as a JSON object of strings.
  headers jsonb not null default '{}'::jsonb,
  -- At most one mail per key (a user's digest of one day); null for mails that are never deduplicated.
  dedupe_key text unique,
  status text not null default 'pending' check (status in ('pending', 'sent', 'logged', 'failed')),
  attempts integer not null default 0,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  -- A sender's claim on the current attempt: only the claimer records its outcome.
  claim_id uuid,
  claimed_until timestamptz,
  sent_at timestamptz,
  created_at timestamptz not null default now()
);
create index mail_outbox_due_idx on mail_outbox (next_attempt_at, id) where status = 'pending';
create index mail_outbox_to_idx on mail_outbox (lower(to_address), created_at desc);

-- Identity: when the user proved their email address (null: never), and one-time tokens by SHA-256 only.
alter table users add column email_verified_at timestamptz;
create table email_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  token_hash text not null unique,
  -- The address the token was sent to: a verification proves this address only.
  email text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null
);
create index email_tokens_user_purpose_idx on email_tokens (user_id, purpose, created_at desc);

-- The daily digest (subgraphs/digest/): per user, the notifications up to `sent_through` were in a digest already.
create table digest_state (
  user_id uuid primary key references users (id) on delete cascade,
  sent_through timestamptz not null,
  updated_at timestamptz not null default now()
);
