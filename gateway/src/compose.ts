import { composeServices } from '@apollo/composition';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SUBGRAPHS, SUBGRAPH_NAMES } from '../../subgraphs/index.js';

let composed: string | undefined;

/**
 * The supergraph SDL composed from the subgraphs' own type definitions (no network needed), once per process. Composing
 * costs about a second of CPU, at every start of every process (each test file of the suite too), so the result is
 * kept in `node_modules/.cache/svc/` under the hash of its inputs (each subgraph's name and schema text, and the
 * composition library's version): a process whose subgraph schemas are those of an earlier composition reads it
 * back; a changed schema composes again. A cache that cannot be written is skipped.
 */
export function composeSupergraph(): string {
  composed ??= cachedComposition();
  return composed;
}

/** A composition of the subgraphs now, without the cache (`npm run supergraph`, the contract test). */
export function composeFresh(): string {
  const result = composeServices(
    SUBGRAPH_NAMES.map((name) => ({ name, url: `local://${name}`, typeDefs: SUBGRAPHS[name].typeDefs })),
  );
  if (result.errors) throw new Error(`supergraph composition failed:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.supergraphSdl;
}

const require = createRequire(import.meta.url);
/** `@apollo/composition`'s package.json: its version is part of the cache key; its node_modules holds the cache. */
const COMPOSITION_PACKAGE = require.resolve('@apollo/composition/package.json');
const CACHE_DIR = join(dirname(COMPOSITION_PACKAGE), '..', '..', '.cache', 'svc');

/** The cache file of a composition of the subgraphs as they are now (present once a process composed them). */
export function supergraphCacheFile(): string {
  return join(CACHE_DIR, `supergraph-${inputsHash()}.graphql`);
}

function cachedComposition(): string {
  const file = supergraphCacheFile();
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // not composed yet with these inputs
  }
  const sdl = composeFresh();
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, sdl);
    renameSync(partial, file); // whole or not at all, for a process reading it at the same time
  } catch {
    // a read-only install: compose at each start
  }
  return sdl;
}

function inputsHash(): string {
  const hash = createHash('sha256').update(`@apollo/composition ${compositionVersion()}\n`);
  for (const name of SUBGRAPH_NAMES) {
    const source = SUBGRAPHS[name].typeDefs.loc?.source.body;
    if (source === undefined) throw new Error(`subgraph ${name}: type definitions without their source text`);
    hash.update(`${name}\0${source}\0`);
  }
  return hash.digest('hex').slice(0, 32);
}

function compositionVersion(): string {
  return String((JSON.parse(readFileSync(COMPOSITION_PACKAGE, 'utf8')) as { version: string }).version);
}
