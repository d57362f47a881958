-- The transactional outbox is `outbox_events`, so `events` no longer reads as the events domain (issue 10).
alter table events rename to outbox_events;
alter table outbox_events rename constraint events_pkey to outbox_events_pkey;
alter table outbox_events rename constraint events_community_id_fkey to outbox_events_community_id_fkey;
alter index events_unprocessed_idx rename to outbox_events_unprocessed_idx;
alter index events_community_idx rename to outbox_events_community_idx;
