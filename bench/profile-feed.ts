// A CPU profile of the service alone under the communityFeed load of bench/feed.bench.ts (not a benchmark: `npm run
// bench` runs *.bench.ts only): the same seeded data, query and connections, autocannon in a child process. Warms up
// for 3 s, then profiles 10 s and writes the profile:
//
//   NODE_ENV=production node --import tsx bench/profile-feed.ts [/tmp/feed-service.cpuprofile] [community|home]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { openSession } from '../subgraphs/identity/index.js';
import { BENCH_DATABASE_URL, startBenchService } from './lib.js';
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

const cannon = (seconds: number) =>
  new Promise<string>((resolve) => {
    const args = ['-c', '16', '-d', String(seconds), '-m', 'POST', '-H', 'content-type=application/json', '-H', `cookie=${cookie}`, '-b', body, `${base}/graphql`];
    const child = spawn('node_modules/.bin/autocannon', args);
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('close', () => resolve(text));
  });

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await cannon(3);
await session.post('Profiler.start');
const cpu = process.cpuUsage();
const summary = await cannon(10);
const used = process.cpuUsage(cpu);
const { profile } = await session.post('Profiler.stop');
writeFileSync(out, JSON.stringify(profile));
console.log(summary.split('\n').filter((line) => /Req\/Sec|requests in|non-2xx/.test(line)).join('\n'));
console.log(`service CPU ${((used.user + used.system) / 1e6).toFixed(2)} s over 10 s; profile written to ${out}`);
await service.stop();
process.exit(0);
