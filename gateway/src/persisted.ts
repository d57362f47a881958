import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { getOperationAST, parse } from 'graphql';
import type { GraphqlConfig } from '../../subgraphs/kernel/config.js';

/** One operation of the manifest, in Apollo's persisted-query manifest format. */
export interface PersistedOperation {
  /** sha256 (hex) of `body`, exactly as sent. */
  id: string;
  name: string;
  type: 'query' | 'mutation' | 'subscription';
  body: string;
}

/** `gateway/persisted-operations.json`, written by `npm run persisted`. */
export interface PersistedManifest {
  format: 'apollo-persisted-query-manifest';
  version: 1;
  operations: PersistedOperation[];
}

/** Where the committed manifest lives (beside the compiled code too: `npm run build` copies JSON files). */
export const MANIFEST_URL = new URL('../persisted-operations.json', import.meta.url);

/** The error code of a refused operation in persisted-only mode. */
export const PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';

/** The hash a persisted operation is known by: sha256 hex of its exact text (Apollo's APQ hash). */
export const operationHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The manifest of the given documents, sorted by operation name (stable output for a committed file). */
export function buildManifest(documents: Iterable<string>): PersistedManifest {
  const byId = new Map<string, PersistedOperation>();
  for (const body of documents) {
    const operation = getOperationAST(parse(body));
    if (!operation?.name) throw new Error(`a persisted document needs exactly one named operation:\n${body}`);
    byId.set(operationHash(body), { id: operationHash(body), name: operation.name.value, type: operation.operation, body });
  }
  const operations = [...byId.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  return { format: 'apollo-persisted-query-manifest', version: 1, operations };
}

/** The manifest as committed, as a map from hash to operation text. */
export function loadManifest(url: URL = MANIFEST_URL): ReadonlyMap<string, string> {
  const manifest = JSON.parse(readFileSync(url, 'utf8')) as PersistedManifest;
  return new Map(manifest.operations.map((o) => [o.id, o.body]));
}

const refusal = (message: string) => ({ errors: [{ message, extensions: { code: PERSISTED_QUERY_NOT_FOUND, status: 400 } }] });

/**
 * `/graphql` middleware, after the JSON body parser and before Apollo: with `persistedOnly`, only operations of
 * the manifest run. A client sends the operation's full text (its sha256 must be in the manifest), or, over POST,
 * only `extensions.persistedQuery.sha256Hash` (Apollo's protocol) and the text is taken from the manifest. Anything
 * else is answered 400 `PERSISTED_QUERY_NOT_FOUND` before it is parsed. Without `persistedOnly` it passes through.
 */
export function persistedOperations(config: GraphqlConfig, manifest?: ReadonlyMap<string, string>): RequestHandler {
  if (!config.persistedOnly) return (_req, _res, next) => next();
  const known = manifest ?? loadManifest();
  return (req, res, next) => {
    const params: unknown = req.method === 'GET' ? req.query : req.body;
    const { query, extensions } = (params && typeof params === 'object' && !Array.isArray(params) ? params : {}) as Record<string, unknown>;
    if (typeof query === 'string') {
      if (known.has(operationHash(query))) return next();
      return res.status(400).json(refusal('Only persisted operations run on this server, and this operation is not one of them.'));
    }
    const hash = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery?.sha256Hash;
    const body = typeof hash === 'string' ? known.get(hash) : undefined;
    if (body !== undefined && req.method === 'POST') {
      req.body.query = body;
      return next();
    }
    return res.status(400).json(refusal('Only persisted operations run on this server: send a manifest operation or its sha256Hash.'));
  };
}
