export { getWin, listWins, postWin, approveWin, winById, WIN_XP, WIN_APPROVED } from './wins.service.js';
export type { Win } from './wins.service.js';
