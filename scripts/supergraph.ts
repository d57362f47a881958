// `npm run supergraph`: writes the composed supergraph SDL to gateway/supergraph.graphql (the committed contract).
import { writeFileSync } from 'node:fs';
import { composeFresh } from '../gateway/src/compose.js';

writeFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), composeFresh());
console.log('wrote gateway/supergraph.graphql');
