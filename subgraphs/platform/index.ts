export {
  API_KEY_PATTERN,
  authenticateApiKey,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  platformMe,
} from './api-keys.service.js';
export type { ApiKeyIdentity, ApiKeyRecord, ApiKeyUses, CreatedApiKey } from './api-keys.service.js';
export { grantConfiguredStaff, grantStaff, isStaff, revokeStaff, requireStaff, suspendedKeyRefusal } from './admin.service.js';
