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
  resolveIdpToken,
  idpKeySource,
  getUser,
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
export type { User, TokenPair, SignupInput, WithNewUser, IdpKeySource } from './identity.service.js';
