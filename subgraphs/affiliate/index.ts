export { myAffiliateCode, trackClick, AFFILIATE_CODE } from './affiliate.service.js';
export type { AffiliateCode } from './affiliate.service.js';
