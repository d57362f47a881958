-- Issue 32, live notifications in under a second: a statement that adds outbox events NOTIFYs `svc_outbox` (once per
-- statement; PostgreSQL delivers a transaction's identical notifications once, at commit, and none if it rolls back).
-- The worker LISTENs on it and runs the notifications consumer at once (jobs/src/worker.ts); the consumer's polled
-- job stays, for events written while no worker listened.
create function svc_outbox_signal() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_outbox', '');
  return null;
end
$$;
create trigger outbox_events_signal after insert on outbox_events for each statement execute function svc_outbox_signal();
