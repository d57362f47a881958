import { composeServices } from '@apollo/composition';
import { SUBGRAPHS, SUBGRAPH_NAMES } from '../../subgraphs/index.js';

/** Composes the supergraph SDL from the subgraphs' own type definitions (no network needed). */
export function composeSupergraph(): string {
  const result = composeServices(
    SUBGRAPH_NAMES.map((name) => ({ name, url: `local://${name}`, typeDefs: SUBGRAPHS[name].typeDefs })),
  );
  if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.supergraphSdl;
}
