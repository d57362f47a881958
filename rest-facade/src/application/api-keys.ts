import { Router, type Request } from 'express';
import type { OperationRunner, OperationVariables, TypedDocumentString } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import type { ApiKeysQuery } from '../generated.js';
import { restDocument } from '../typed-document.js';

const KEY = 'id name keyPrefix scopes lastUsedAt revokedAt createdAt';

/** Fixed GraphQL documents of the API-key control plane. */
export const ApiKeyDocs = {
  create: restDocument(`mutation CreateApiKey($handle: String!, $input: CreateApiKeyInput!) {
    createApiKey(handle: $handle, input: $input) { id name key keyPrefix scopes } }`),
  list: restDocument(`query ApiKeys($handle: String!) { apiKeys(handle: $handle) { keys { ${KEY} } availableScopes } }`),
  revoke: restDocument(`mutation RevokeApiKey($handle: String!, $id: ID!) { revokeApiKey(handle: $handle, id: $id) { id revokedAt } }`),
} as const;

const keyRecord = (k: ApiKeysQuery['apiKeys']['keys'][number]) => ({
  id: k.id,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
  lastUsedAt: k.lastUsedAt ?? null,
  revokedAt: k.revokedAt ?? null,
  createdAt: k.createdAt,
});

/**
 * The body as the service's input, with values of the wrong type made absent: the service then answers with the
 * rule's code (`invalid_name`, `no_scopes`) after its session and role checks, never a type error before them.
 */
function createInput(req: Request) {
  const body = req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return {
    name: typeof body.name === 'string' ? body.name : null,
    scopes: Array.isArray(body.scopes) ? body.scopes.filter((s): s is string => typeof s === 'string') : null,
  };
}

/**
 * The API-key control plane (spec 4.2): session of the tribe's owner or admin; flat errors. A Platform key does
 * not authenticate here (only the session cookie does). The rules live in the platform service, shared with GraphQL.
 */
export function apiKeysRouter(app: AppDeps, run: OperationRunner): Router {
  const r = Router();
  const exec = async <R, V>(req: Request, doc: TypedDocumentString<R, V>, variables: OperationVariables<V>) =>
    unwrap(await run(contextOf(app, req), doc, variables));

  r.post('/communities/:handle/api-keys', handle(async (req, res) => {
    const { createApiKey: k } = await exec(req, ApiKeyDocs.create, { handle: String(req.params.handle), input: createInput(req) });
    res.status(201).json({ ok: true, id: k.id, name: k.name, key: k.key, keyPrefix: k.keyPrefix, scopes: k.scopes });
  }));
  r.get('/communities/:handle/api-keys', handle(async (req, res) => {
    const { apiKeys } = await exec(req, ApiKeyDocs.list, { handle: String(req.params.handle) });
    res.json({ keys: apiKeys.keys.map(keyRecord), availableScopes: apiKeys.availableScopes });
  }));
  r.delete('/communities/:handle/api-keys/:id', handle(async (req, res) => {
    const { revokeApiKey: k } = await exec(req, ApiKeyDocs.revoke, { handle: String(req.params.handle), id: String(req.params.id) });
    res.json({ ok: true, id: k.id, revokedAt: k.revokedAt });
  }));
  return r;
}
