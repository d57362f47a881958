-- Issue 29: abuse limits of webhooks and support tickets (their numbers: README, "Abuse limits").
-- A tribe's test pings of the last minute, counted before a ping is sent (subgraphs/webhooks/webhooks.service.ts,
-- WEBHOOK_TEST_PINGS_PER_MINUTE) under the tribe's lock; rows older than the window are deleted as new ones come.
create table webhook_test_pings (
  community_id uuid not null references communities (id) on delete cascade,
  sent_at timestamptz not null
);
create index webhook_test_pings_community_sent_idx on webhook_test_pings (community_id, sent_at);

-- The open-ticket cap counts a user's tickets not yet resolved or closed.
create index support_tickets_user_open_idx on support_tickets (user_id) where status in ('open', 'pending');
