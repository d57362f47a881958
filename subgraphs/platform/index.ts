export { SCOPES, requireScope } from './api-keys.access.js';
export type { Scope } from './api-keys.access.js';
export {
  API_KEY_PATTERN,
  authenticateApiKey,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  platformMe,
} from './api-keys.service.js';
export type { ApiKeyIdentity, ApiKeyRecord, CreatedApiKey } from './api-keys.service.js';
