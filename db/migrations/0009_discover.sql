-- Discover (issue 11): public tribes by category, newest first, and the fixed list of categories.

-- NEWEST: public tribes by creation time (keyset on created_at, id).
create index communities_public_created_idx on communities (created_at desc, id desc) where is_public;
-- communityCategories and the category filter: public tribes per category.
create index communities_public_category_idx on communities (category) where is_public;

-- Categories were free text until now: a stored value that is one of the fixed list in another case or with spaces
-- becomes that category, and any other value becomes 'other' (subgraphs/communities/communities.categories.ts). Nothing
-- is lost: the value as it was is kept in settings.legacyCategory.
update communities set category = lower(btrim(category))
  where category is not null and lower(btrim(category)) in
    ('business', 'tech', 'education', 'health', 'fitness', 'finance', 'art', 'music', 'books', 'gaming', 'sports',
     'lifestyle', 'spirituality', 'other');
update communities set settings = settings || jsonb_build_object('legacyCategory', category)
  where category is not null and category not in
    ('business', 'tech', 'education', 'health', 'fitness', 'finance', 'art', 'music', 'books', 'gaming', 'sports',
     'lifestyle', 'spirituality', 'other');
update communities set category = 'other'
  where category is not null and category not in
    ('business', 'tech', 'education', 'health', 'fitness', 'finance', 'art', 'music', 'books', 'gaming', 'sports',
     'lifestyle', 'spirituality', 'other');
