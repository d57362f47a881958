import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CATEGORIES, isCategory } from './communities.categories.js';

describe('CATEGORIES', () => {
  it('is the list the schema documents, in the same order', () => {
    const schema = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');
    const documented = /One of the fixed list \(see communityCategories\): ([a-z, -]+); or null\./.exec(schema)?.[1];
    expect(documented?.split(', ')).toEqual([...CATEGORIES]);
  });

  it('keeps the categories existing tribes and fixtures use', () => {
    for (const c of ['tech', 'fitness', 'art', 'music', 'books']) expect(isCategory(c)).toBe(true);
    expect(isCategory('Music')).toBe(false);
    expect(isCategory(undefined)).toBe(false);
  });
});
