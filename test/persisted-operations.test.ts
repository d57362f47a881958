import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { buildManifest, MANIFEST_URL } from '../gateway/src/persisted.js';
import { REST_DOCUMENTS } from '../rest-facade/src/documents.js';

describe('persisted-operation manifest', () => {
  it('matches the committed gateway/persisted-operations.json (run `npm run persisted` after changing a REST-facade document)', () => {
    const committed = readFileSync(MANIFEST_URL, 'utf8');
    expect(`${JSON.stringify(buildManifest(Object.values(REST_DOCUMENTS)), null, 2)}\n`).toBe(committed);
  });
});
