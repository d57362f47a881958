// `npm run persisted`: writes the persisted-operation manifest (every fixed document of the REST facade) to
// gateway/persisted-operations.json, the committed list that GRAPHQL_PERSISTED_ONLY=true lets through.
import { writeFileSync } from 'node:fs';
import { buildManifest, MANIFEST_URL } from '../gateway/src/persisted.js';
import { REST_DOCUMENTS } from '../rest-facade/src/documents.js';

const manifest = buildManifest(Object.values(REST_DOCUMENTS));
writeFileSync(MANIFEST_URL, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`wrote gateway/persisted-operations.json (${manifest.operations.length} operations)`);
