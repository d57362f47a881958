-- Issue 31 (spec 2.6): a tribe's metadata, a small free-form JSON object its owner or admins set for integrations.
-- The service validates it before writing (subgraphs/communities/communities.metadata.ts: an object, at most 50 keys,
-- keys 1 to 40 of A-Z a-z 0-9 _ . : -, nesting at most 3 levels, at most 4096 bytes serialised); the constraint keeps
-- the stored value an object whatever writes it.
alter table communities add column metadata jsonb not null default '{}'::jsonb;
alter table communities add constraint communities_metadata_object check (jsonb_typeof(metadata) = 'object');
