// `npm run supergraph`: writes the composed supergraph SDL to gateway/supergraph.graphql (the committed contract).
import { writeFileSync } from 'node:fs';
import { composeSupergraph } from '../gateway/src/compose.js';

writeFileSync(new URL('../gateway/supergraph.graphql', import.meta.url), composeSupergraph());
console.log('wrote gateway/supergraph.graphql');
