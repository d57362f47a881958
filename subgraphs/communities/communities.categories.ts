/**
 * The fixed list of tribe categories (`Community.category`, the `category` of spec 4.5's create), in the order
 * `communityCategories` lists them. A tribe's category is one of these or null; anything else is refused with
 * `invalid_input` naming `category` (GraphQL and `POST`/`PATCH /v1/communities` share the rule). Adding one is a code
 * change here, in the schema's description and in docs/search-and-discover.md.
 */
export const CATEGORIES = [
  'business',
  'tech',
  'education',
  'health',
  'fitness',
  'finance',
  'art',
  'music',
  'books',
  'gaming',
  'sports',
  'lifestyle',
  'spirituality',
  'other',
] as const;

export type Category = (typeof CATEGORIES)[number];

/** True for a category of the list (exact, lowercase). */
export const isCategory = (value: unknown): value is Category => typeof value === 'string' && (CATEGORIES as readonly string[]).includes(value);
