// The tribe record (the `communities` table) and its lookups, below the communities and members domains: both
// use it, and only communities (create, update, delete: it needs the members' roles) writes through it.
export { countCommunities, findCommunity, findCommunityWith, getCommunity, getCommunityByHandle, refreshCommunity, setCommunityPlatformState } from './tribes.service.js';
export type { Community } from './tribes.service.js';
export * as tribeRecords from './tribes.repository.js';
