export { RANK, requireActiveMember, requireOutranks, requireRole, requireTribeAdmin, requireView, requireVisible, requireWritable, viewerRole, viewerTribes, visibleOrNull } from './members.access.js';
export type { TribeCaller, TribeRef } from './members.access.js';
export {
  addOwner,
  joinByInvite,
  joinCommunity,
  leaveCommunity,
  listMembers,
  getMember,
  updateMemberRole,
  removeMember,
  createInvite,
  memberCount,
  memberById,
  recordActivity,
  memberIdsByUsernames,
  shareATribe,
  memberUserIdsAmong,
  ownerUserIds,
  memberUserIdsPage,
  sanctionOf,
  muteMember,
  unmuteMember,
  banMember,
  unbanMember,
} from './members.service.js';
export type { Member, Role } from './members.service.js';
export { ROLES } from './members.tables.js';
export { memberCountExpr } from './members.repository.js';
export { awardXp, levelFor, xpForLevel } from './members.xp.js';
export type { XpAward } from './members.xp.js';
// Platform statistics (platform-admin's platformStats): one set-based statement.
export { activeUsers } from './stats.repository.js';
