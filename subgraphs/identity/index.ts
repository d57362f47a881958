export {
  createAccount,
  checkPassword,
  openSession,
  resolveSession,
  closeSession,
  me,
  findUsersByIds,
  searchUserIds,
  findUserByUsername,
  userIdsByUsernames,
  issueTokens,
  loginWithTokens,
  refreshTokensFor,
  verifyAccessToken,
  accessTokenCaller,
  credentialOf,
  announceSignedOut,
  resolveIdpToken,
  idpKeySource,
  getUser,
  isSuspended,
  suspendAccount,
  unsuspendAccount,
  findUserByEmail,
  userCounts,
  ACCESS_TOKEN_TTL_SECONDS,
} from './identity.service.js';
export {
  requestEmailVerification,
  verifyEmail,
  requestPasswordReset,
  resetPassword,
  VERIFY_TOKEN_TTL_MS,
  RESET_TOKEN_TTL_MS,
} from './email-tokens.service.js';
export { PASSWORD_LIMITS, PROFILE_LIMITS } from './identity.profile.js';
export { receiveIdentityEvent, IDP_USER_EVENTS } from './idp-webhooks.service.js';
export type { IdentityWebhookReceipt } from './idp-webhooks.service.js';
export { standardWebhookHeaders, verifyStandardWebhook, STANDARD_WEBHOOK_TOLERANCE_SECONDS } from './standard-webhooks.js';
export { deleteAccount, DELETED_USER_NAME } from './account-deletion.js';
export {
  PERSONAL_API_KEYS_PER_USER,
  PERSONAL_KEY_PATTERN,
  PERSONAL_KEY_SCOPES,
  authenticatePersonalApiKey,
  createPersonalApiKey,
  listPersonalApiKeys,
  personalKeyScopes,
  requirePersonalKeyScope,
  revokeAllPersonalApiKeys,
  revokePersonalApiKey,
  scopeForMethod,
} from './personal-keys.service.js';
export type { CreatedPersonalApiKey, PersonalApiKey, PersonalKeyCaller, PersonalKeyScope } from './personal-keys.service.js';
export type { User, TokenPair, SignupInput, WithNewUser, IdpKeySource } from './identity.service.js';
