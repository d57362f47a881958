-- Issue 29: an access token names its refresh-token family (claim `fam`) and is refused once that family is revoked
-- (a reused refresh token, changePassword, resetPassword). The service remembers each family's state across requests
-- (db/src/changes.ts) and forgets it when these triggers announce 'r:<family id>' on svc_changes, in the transaction
-- that revokes it (delivered when it commits); a truncate says '*'.

create function svc_announce_family_row() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_changes', 'r:' || coalesce(new.family_id, old.family_id));
  return null;
end $$;

create function svc_announce_families() returns trigger language plpgsql as $$
begin
  if (select count(*) from changed) > 100 then
    perform pg_notify('svc_changes', '*');
  else
    perform pg_notify('svc_changes', 'r:' || family_id) from (select distinct family_id from changed) c;
  end if;
  return null;
end $$;

create trigger refresh_tokens_revoked_announce after update of revoked_at, family_id, user_id on refresh_tokens
  for each row
  when (old.revoked_at is distinct from new.revoked_at or old.family_id <> new.family_id or old.user_id <> new.user_id)
  execute function svc_announce_family_row();
create trigger refresh_tokens_deleted_announce after delete on refresh_tokens
  referencing old table as changed for each statement execute function svc_announce_families();
create trigger refresh_tokens_truncated_announce after truncate on refresh_tokens for each statement execute function svc_announce_all();
