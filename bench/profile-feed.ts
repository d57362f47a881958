// A CPU profile of the service alone under the communityFeed load of bench/feed.bench.ts (not a benchmark: `npm run
// bench` runs *.bench.ts only): the same seeded data, query and connections, autocannon in a child process. Warms up
// for 3 s, then profiles 10 s and writes the profile:
//
//   NODE_ENV=production node --import tsx bench/profile-feed.ts [/tmp/feed-service.cpuprofile] [community|home]
import { openSession } from '../subgraphs/identity/index.js';
import { BENCH_DATABASE_URL, profileUnderLoad, startBenchService } from './lib.js';
import { seedSocial } from './seed-social.js';

const out = process.argv[2] ?? '/tmp/feed-service.cpuprofile';
const which = process.argv[3] ?? 'community';
const seeded = await seedSocial(BENCH_DATABASE_URL);
const { service, base } = await startBenchService({ DATABASE_POOL_SIZE: '10' });
const cookie = `svc_session=${await openSession(service.deps, seeded.benchUserId)}`;
const tribe = [...seeded.benchTribes].sort((a, b) => b.posts - a.posts)[0];
const query =
  which === 'home'
    ? `query Feed($first: Int) { homeFeed(first: $first) { edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } } pageInfo { hasNextPage endCursor } } }`
    : `query CommunityFeed($communityId: ID!, $first: Int, $after: String) { communityFeed(communityId: $communityId, sort: NEW, first: $first, after: $after) { edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } } pageInfo { hasNextPage endCursor } } }`;
const body = JSON.stringify({ query, variables: { communityId: tribe.id, first: 20 } });
const check = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body });
const json = (await check.json()) as any;
if (check.status !== 200 || json.errors) throw new Error(`feed: ${check.status} ${JSON.stringify(json).slice(0, 300)}`);

await profileUnderLoad(out, ['-m', 'POST', '-H', 'content-type=application/json', '-H', `cookie=${cookie}`, '-b', body, `${base}/graphql`]);
await service.stop();
process.exit(0);
