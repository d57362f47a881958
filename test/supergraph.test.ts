import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { composeSupergraph } from '../gateway/src/compose.js';

describe('supergraph contract', () => {
  it('matches the committed gateway/supergraph.graphql (run `npm run supergraph` after a schema change)', () => {
    const committed = readFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), 'utf8');
    expect(composeSupergraph()).toBe(committed);
  });
});
