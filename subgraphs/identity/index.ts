export {
  signup,
  checkPassword,
  openSession,
  resolveSession,
  closeSession,
  me,
  findUsersByIds,
  searchUserIds,
  findUserByUsername,
  issueTokens,
  loginWithTokens,
  refreshTokensFor,
  verifyAccessToken,
  resolveIdpToken,
  getUser,
  ACCESS_TOKEN_TTL_SECONDS,
} from './identity.service.js';
export type { User, TokenPair } from './identity.service.js';
