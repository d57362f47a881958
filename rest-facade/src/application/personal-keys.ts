import { Router, type Request } from 'express';
import type { OperationRunner, OperationVariables, TypedDocumentString } from '../../../gateway/src/graph.js';
import type { AppDeps } from '../../../subgraphs/kernel/index.js';
import { present, unwrap } from '../errors.js';
import { contextOf, handle } from '../http.js';
import type { PersonalApiKeysQuery } from '../generated.js';
import { restDocument } from '../typed-document.js';

const KEY = 'id name keyPrefix scopes lastUsedAt revokedAt createdAt';

/** Fixed GraphQL documents of the personal API keys' routes (the console's account settings). */
export const PersonalKeyDocs = {
  create: restDocument(`mutation CreatePersonalApiKey($input: CreatePersonalApiKeyInput!) {
    createPersonalApiKey(input: $input) { id name key keyPrefix scopes createdAt } }`),
  list: restDocument(`query PersonalApiKeys { me { id personalApiKeys { ${KEY} } } personalApiKeyScopes { name description } }`),
  revoke: restDocument(`mutation RevokePersonalApiKey($id: ID!) { revokePersonalApiKey(id: $id) { id revokedAt } }`),
} as const;

const keyRecord = (k: NonNullable<NonNullable<PersonalApiKeysQuery['me']>['personalApiKeys']>[number]) => ({
  id: k.id,
  name: k.name,
  keyPrefix: k.keyPrefix,
  scopes: k.scopes,
  lastUsedAt: k.lastUsedAt ?? null,
  revokedAt: k.revokedAt ?? null,
  createdAt: k.createdAt,
});

/** The body as the service's input; `scopes` absent or null means every scope (values of a wrong type are refused there). */
function createInput(req: Request) {
  const body = req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return {
    name: typeof body.name === 'string' ? body.name : null,
    scopes: Array.isArray(body.scopes) ? body.scopes.map((s) => (typeof s === 'string' ? s : JSON.stringify(s))) : body.scopes === undefined || body.scopes === null ? null : [],
  };
}

/**
 * The signed-in user's personal API keys of the resource API (spec 5.3), for the console's account settings:
 * `GET|POST /account/api-keys`, `DELETE /account/api-keys/{id}` (mounted there, after the session check). Session cookie only (a bearer credential does not
 * authenticate here, so a key cannot mint keys); flat errors. The rules live in the identity service, shared with GraphQL.
 */
export function personalKeysRouter(app: AppDeps, run: OperationRunner): Router {
  const r = Router();
  const exec = async <R, V>(req: Request, doc: TypedDocumentString<R, V>, variables: OperationVariables<V>) =>
    unwrap(await run(contextOf(app, req), doc, variables));

  r.post('/', handle(async (req, res) => {
    const { createPersonalApiKey: k } = await exec(req, PersonalKeyDocs.create, { input: createInput(req) });
    res.status(201).json({ ok: true, id: k.id, name: k.name, key: k.key, keyPrefix: k.keyPrefix, scopes: k.scopes, createdAt: k.createdAt });
  }));
  r.get('/', handle(async (req, res) => {
    const data = await exec(req, PersonalKeyDocs.list, {});
    const keys = present(present(data.me).personalApiKeys);
    res.json({ keys: keys.map(keyRecord), availableScopes: data.personalApiKeyScopes });
  }));
  r.delete('/:id', handle(async (req, res) => {
    const { revokePersonalApiKey: k } = await exec(req, PersonalKeyDocs.revoke, { id: String(req.params.id) });
    res.json({ ok: true, id: k.id, revokedAt: k.revokedAt });
  }));
  return r;
}
