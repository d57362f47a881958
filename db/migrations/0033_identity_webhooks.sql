-- Issue 31: inbound identity-provider webhooks (POST /webhooks/identity, subgraphs/identity/idp-webhooks.service.ts).

-- Messages already processed, by the provider's message id (`webhook-id` / `svix-id`): a replay finds its id here and
-- changes nothing. Recorded in the transaction of the message's effect, so a message that failed is tried again.
create table idp_webhook_messages (
  message_id text primary key,
  event_type text not null,
  -- The provider's user id the message named (`data.id`), when it named one.
  subject text,
  received_at timestamptz not null
);

-- A deleted account (the provider's `user.deleted`, subgraphs/identity/account-deletion.ts): its personal data is erased,
-- its row stays (under the placeholder name "Deleted user") so that its posts, comments and orders keep an author.
alter table users add column deleted_at timestamptz;
