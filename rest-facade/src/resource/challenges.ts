/**
 * Resource API routes of challenges (spec 4.5): fixed GraphQL documents through the gateway, snake_case records in
 * `{data}` / `{data, pagination}`. Money is the spec's number in major units (49.9).
 */
import type { Router } from 'express';
import { fromCents } from '../../../subgraphs/commerce/index.js';
import type { ChallengeProgressQuery, CheckInMutation, EnrollChallengeMutation, GetChallengeQuery, LeaderboardQuery, ListChallengesQuery } from '../generated.js';
import { HttpError, present } from '../errors.js';
import { handle } from '../http.js';
import { restDocument, type RequestRunner } from '../typed-document.js';
import { ORDER, PAGE } from './documents.js';
import { objectBody, pageParams, pick } from './params.js';
import { accessResponse, listBody } from './shapes.js';

/** A challenge as listed and created, or with the viewer's enrollment as a single challenge is read. */
type Challenge = ListChallengesQuery['challenges']['items'][number] | NonNullable<GetChallengeQuery['challenge']>;
type ChallengeEnrollment = NonNullable<EnrollChallengeMutation['enrollChallenge']['enrollment']>;
type ChallengeProgress = ChallengeProgressQuery['challengeProgress'];
type Checkin = CheckInMutation['checkIn']['checkin'];
type LeaderboardEntry = LeaderboardQuery['challengeLeaderboard']['items'][number];

// ---- documents ----

const CHALLENGE =
  'id community { id } title description durationDays challengeType accessType priceCents currency xpReward createdBy { id } createdAt updatedAt';
const CHALLENGE_ENROLLMENT = 'id challenge { id } user { id } status startedAt completedAt';
const CHALLENGE_PROGRESS = `enrollment { ${CHALLENGE_ENROLLMENT} } totalDays completedDays progressPercent currentStreak lastCheckinAt currentDay xpEarned`;
const CHECKIN = 'id challenge { id } user { id } dayNumber content tags xpAwarded createdAt';
const ENTRY = 'rank user { id username displayName } completedDays currentStreak xpEarned lastCheckinAt status';

export const ChallengeDocs = {
  listChallenges: restDocument(`query ListChallenges($communityId: ID!, $page: Int, $perPage: Int) {
    challenges(communityId: $communityId, page: $page, perPage: $perPage) { items { ${CHALLENGE} } ${PAGE} } }`),
  getChallenge: restDocument(`query GetChallenge($id: ID!, $communityId: ID) {
    challenge(id: $id, communityId: $communityId) { ${CHALLENGE} viewerEnrollment { id status } } }`),
  createChallenge: restDocument(`mutation CreateChallenge($communityId: ID!, $input: CreateChallengeInput!) {
    createChallenge(communityId: $communityId, input: $input) { ${CHALLENGE} } }`),
  enrollChallenge: restDocument(`mutation EnrollChallenge($challengeId: ID!, $communityId: ID) {
    enrollChallenge(challengeId: $challengeId, communityId: $communityId) { status created enrollment { ${CHALLENGE_ENROLLMENT} } ${ORDER} } }`),
  challengeProgress: restDocument(`query ChallengeProgress($challengeId: ID!, $communityId: ID) {
    challengeProgress(challengeId: $challengeId, communityId: $communityId) { ${CHALLENGE_PROGRESS} } }`),
  checkIn: restDocument(`mutation CheckIn($challengeId: ID!, $communityId: ID, $input: CheckinInput!) {
    checkIn(challengeId: $challengeId, communityId: $communityId, input: $input) { checkin { ${CHECKIN} } progress { ${CHALLENGE_PROGRESS} } } }`),
  leaderboard: restDocument(`query Leaderboard($challengeId: ID!, $communityId: ID, $page: Int, $perPage: Int) {
    challengeLeaderboard(challengeId: $challengeId, communityId: $communityId, page: $page, perPage: $perPage) { items { ${ENTRY} } ${PAGE} } }`),
} as const;

// ---- shapes ----

export const challengeRecord = (c: Challenge) => ({
  id: c.id,
  community_id: c.community.id,
  title: c.title,
  description: c.description,
  duration_days: c.durationDays,
  challenge_type: c.challengeType,
  access_type: c.accessType,
  price: fromCents(c.priceCents),
  currency: c.currency,
  xp_reward: c.xpReward,
  created_by: c.createdBy?.id ?? null,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  ...('viewerEnrollment' in c ? { viewer_enrollment: c.viewerEnrollment } : {}),
});

export const challengeEnrollmentRecord = (e: ChallengeEnrollment) => ({
  id: e.id,
  challenge_id: e.challenge.id,
  user_id: e.user.id,
  status: e.status,
  started_at: e.startedAt,
  completed_at: e.completedAt,
});

export const challengeProgressRecord = (p: ChallengeProgress) => ({
  challenge_id: p.enrollment.challenge.id,
  enrollment_id: p.enrollment.id,
  status: p.enrollment.status,
  total_days: p.totalDays,
  completed_days: p.completedDays,
  progress_percent: p.progressPercent,
  current_streak: p.currentStreak,
  last_checkin_at: p.lastCheckinAt,
  current_day: p.currentDay,
  xp_earned: p.xpEarned,
});

const checkinRecord = (c: Checkin) => ({
  id: c.id,
  challenge_id: c.challenge.id,
  user_id: c.user.id,
  day_number: c.dayNumber,
  content: c.content,
  tags: c.tags,
  xp_awarded: c.xpAwarded,
  created_at: c.createdAt,
});

const leaderboardRecord = (e: LeaderboardEntry) => ({
  rank: e.rank,
  user_id: e.user.id,
  username: e.user.username,
  display_name: e.user.displayName,
  completed_days: e.completedDays,
  current_streak: e.currentStreak,
  xp_earned: e.xpEarned,
  last_checkin_at: e.lastCheckinAt,
});

// ---- routes ----

/** Mounts the challenge routes on the `/v1/communities` router (`:cid` is the tribe id). */
export function mountChallenges(c: Router, exec: RequestRunner): void {
  c.get('/:cid/challenges', handle(async (req, res) => {
    const data = await exec(req, ChallengeDocs.listChallenges, { communityId: String(req.params.cid), ...pageParams(req) });
    res.json(listBody(data.challenges, challengeRecord));
  }));
  c.post('/:cid/challenges', handle(async (req, res) => {
    const input = pick(objectBody(req), {
      title: 'title',
      description: 'description',
      duration_days: 'durationDays',
      challenge_type: 'challengeType',
      access_type: 'accessType',
      xp_reward: 'xpReward',
      price: 'price',
      currency: 'currency',
    });
    const data = await exec(req, ChallengeDocs.createChallenge, { communityId: String(req.params.cid), input });
    res.status(201).json({ data: challengeRecord(data.createChallenge) });
  }));
  c.get('/:cid/challenges/:id', handle(async (req, res) => {
    const data = await exec(req, ChallengeDocs.getChallenge, { id: String(req.params.id), communityId: String(req.params.cid) });
    res.json({ data: challengeRecord(present(data.challenge)) });
  }));
  c.post('/:cid/challenges/:id/enroll', handle(async (req, res) => {
    const data = await exec(req, ChallengeDocs.enrollChallenge, { challengeId: String(req.params.id), communityId: String(req.params.cid) });
    const out = accessResponse(data.enrollChallenge, (r) => challengeEnrollmentRecord(present(r.enrollment)));
    res.status(out.status).json(out.body);
  }));
  c.get('/:cid/challenges/:id/progress', handle(async (req, res) => {
    const data = await exec(req, ChallengeDocs.challengeProgress, { challengeId: String(req.params.id), communityId: String(req.params.cid) });
    res.json({ data: challengeProgressRecord(data.challengeProgress) });
  }));
  c.post('/:cid/challenges/:id/checkins', handle(async (req, res) => {
    const body = objectBody(req);
    // GraphQL would quietly turn a lone string into a one-item list; the contract says array.
    if (body.tags != null && !Array.isArray(body.tags)) {
      throw new HttpError(400, 'invalid_input', 'tags: must be an array of strings.', [{ field: 'tags', message: 'must be an array of strings' }]);
    }
    const input = pick(body, { content: 'content', day_number: 'dayNumber', tags: 'tags' });
    const data = await exec(req, ChallengeDocs.checkIn, { challengeId: String(req.params.id), communityId: String(req.params.cid), input });
    const { checkin, progress } = data.checkIn;
    res.status(201).json({ data: { ...checkinRecord(checkin), progress: challengeProgressRecord(progress) } });
  }));
  c.get('/:cid/challenges/:id/leaderboard', handle(async (req, res) => {
    const vars = { challengeId: String(req.params.id), communityId: String(req.params.cid), ...pageParams(req) };
    res.json(listBody((await exec(req, ChallengeDocs.leaderboard, vars)).challengeLeaderboard, leaderboardRecord));
  }));
}
