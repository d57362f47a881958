export { findCommunity, findCommunityWith, getCommunity, getCommunityByHandle } from '../tribes/index.js';
export {
  listCommunities,
  createCommunity,
  updateCommunity,
  deleteCommunity,
  discoverCommunities,
  communityCategories,
  CATEGORIES,
} from './communities.service.js';
export type { Category, DiscoverSort } from './communities.service.js';
export type { Community } from './communities.service.js';
