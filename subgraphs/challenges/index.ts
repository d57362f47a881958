export {
  getChallenge,
  listChallenges,
  createChallenge,
  enroll,
  progress,
  checkIn,
  leaderboard,
  challengeById,
  CHECKIN_XP,
  CHALLENGE_CHECKIN,
  CHALLENGE_COMPLETED,
  fulfilChallengeOrder,
  revokeChallengeOrder,
} from './challenges.service.js';
export type {
  Challenge,
  ChallengeCheckin,
  ChallengeEnrollment,
  ChallengeProgress,
  CheckinResult,
  EnrollResult,
  LeaderboardEntry,
} from './challenges.service.js';
export { currentStreak, dayAt, runEndingAtHighest } from './challenges.streak.js';
