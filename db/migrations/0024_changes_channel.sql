-- Issue 15: users (the caller's suspension, authors, participants), the tribe, the caller's role in it and the
-- challenge of a leaderboard are read on almost every request of their kind. The service remembers them across
-- requests (db/src/changes.ts) and forgets an entry when one of these triggers announces a change to it on the
-- channel svc_changes, in the transaction that makes the change (delivered when it commits): 'u:<user id>' a user,
-- 'c:<tribe id>' a tribe, 'm:<user id>' a user's memberships, 'h:<challenge id>' a challenge, '*' everything (a
-- truncate, or one statement inserting or deleting more than 100 rows: a bulk load).

create function svc_announce_all() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_changes', '*');
  return null;
end $$;

-- Statement level, the inserted or deleted rows in the transition table `changed`; TG_ARGV[0] is the prefix.
create function svc_announce_ids() returns trigger language plpgsql as $$
begin
  if (select count(*) from changed) > 100 then
    perform pg_notify('svc_changes', '*');
  else
    perform pg_notify('svc_changes', TG_ARGV[0] || ':' || id) from (select distinct id from changed) c;
  end if;
  return null;
end $$;

create function svc_announce_member_users() returns trigger language plpgsql as $$
begin
  if (select count(*) from changed) > 100 then
    perform pg_notify('svc_changes', '*');
  else
    perform pg_notify('svc_changes', 'm:' || user_id) from (select distinct user_id from changed) c;
  end if;
  return null;
end $$;

-- Row level, for updates (a column list cannot have a transition table).
create function svc_announce_row() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_changes', TG_ARGV[0] || ':' || new.id);
  return null;
end $$;

create function svc_announce_member_row() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_changes', 'm:' || old.user_id);
  if new.user_id <> old.user_id then
    perform pg_notify('svc_changes', 'm:' || new.user_id);
  end if;
  return null;
end $$;

create trigger users_inserted_announce after insert on users
  referencing new table as changed for each statement execute function svc_announce_ids('u');
create trigger users_deleted_announce after delete on users
  referencing old table as changed for each statement execute function svc_announce_ids('u');
create trigger users_updated_announce after update on users
  for each row when (old.* is distinct from new.*) execute function svc_announce_row('u');
create trigger users_truncated_announce after truncate on users for each statement execute function svc_announce_all();

create trigger communities_inserted_announce after insert on communities
  referencing new table as changed for each statement execute function svc_announce_ids('c');
create trigger communities_deleted_announce after delete on communities
  referencing old table as changed for each statement execute function svc_announce_ids('c');
create trigger communities_updated_announce after update on communities
  for each row when (old.* is distinct from new.*) execute function svc_announce_row('c');
create trigger communities_truncated_announce after truncate on communities for each statement execute function svc_announce_all();

create trigger members_inserted_announce after insert on members
  referencing new table as changed for each statement execute function svc_announce_member_users();
create trigger members_deleted_announce after delete on members
  referencing old table as changed for each statement execute function svc_announce_member_users();
create trigger members_role_announce after update of role, user_id, community_id on members
  for each row
  when (old.role is distinct from new.role or old.user_id <> new.user_id or old.community_id <> new.community_id)
  execute function svc_announce_member_row();
create trigger members_truncated_announce after truncate on members for each statement execute function svc_announce_all();

create trigger challenges_inserted_announce after insert on challenges
  referencing new table as changed for each statement execute function svc_announce_ids('h');
create trigger challenges_deleted_announce after delete on challenges
  referencing old table as changed for each statement execute function svc_announce_ids('h');
create trigger challenges_updated_announce after update on challenges
  for each row when (old.* is distinct from new.*) execute function svc_announce_row('h');
create trigger challenges_truncated_announce after truncate on challenges for each statement execute function svc_announce_all();
