export { findCommunity, findCommunityWith, getCommunity, getCommunityByHandle } from '../tribes/index.js';
export {
  listCommunities,
  createCommunity,
  updateCommunity,
  deleteCommunity,
} from './communities.service.js';
export type { Community } from './communities.service.js';
