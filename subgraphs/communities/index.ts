export {
  findCommunity,
  findCommunityWith,
  getCommunity,
  getCommunityByHandle,
  listCommunities,
  createCommunity,
  updateCommunity,
  deleteCommunity,
} from './communities.service.js';
export type { Community } from './communities.service.js';
