import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { composeFresh, composeSupergraph, supergraphCacheFile } from '../gateway/src/compose.js';

describe('supergraph contract', () => {
  it('matches the committed gateway/supergraph.graphql (run `npm run supergraph` after a schema change)', () => {
    const committed = readFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), 'utf8');
    expect(composeFresh()).toBe(committed);
  });

  it('is what a process starts with: the composition of the subgraphs as they are, kept in node_modules/.cache/svc under the hash of its inputs', () => {
    const fresh = composeFresh();
    expect(composeSupergraph()).toBe(fresh);
    expect(supergraphCacheFile()).toMatch(/node_modules\/\.cache\/svc\/supergraph-[0-9a-f]{32}\.graphql$/);
    expect(readFileSync(supergraphCacheFile(), 'utf8')).toBe(fresh);
  });
});
