import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { generate } from '../scripts/codegen.js';

describe('generated GraphQL types', () => {
  it('match the committed files (run `npm run codegen` after changing a schema or a REST-facade document)', async () => {
    const files = await generate();
    expect(files.size).toBeGreaterThanOrEqual(13);
    for (const [path, text] of files) {
      const committed = readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
      expect({ path, upToDate: committed === text }).toEqual({ path, upToDate: true });
    }
  });
});
