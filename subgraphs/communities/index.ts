export { findCommunity, findCommunityWith, getCommunity, getCommunityByHandle } from '../tribes/index.js';
export {
  listCommunities,
  createCommunity,
  updateCommunity,
  deleteCommunity,
  discoverCommunities,
  communityCategories,
  CATEGORIES,
  communitySettings,
} from './communities.service.js';
export { METADATA_KEY, METADATA_LIMITS } from './communities.metadata.js';
export type { Category, CommunitySettings, DiscoverSort } from './communities.service.js';
export type { Community } from './communities.service.js';
