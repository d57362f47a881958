// Instructions the service executes per request on the posts list, the leaderboard or `communityFeed`, counted by
// valgrind's callgrind (not a benchmark: `npm run bench` runs *.bench.ts only). On a shared machine a request's CPU time moves by a third
// from run to run, which hides a change of a few percent; the count of instructions moves by about 1% (the JIT and the
// collector still vary a little). The service runs in this process under callgrind with instrumentation off and its
// job queue off (its polls would be counted with the requests), is seeded like bench/posts.bench.ts or
// bench/leaderboard.bench.ts (`community`: bench/feed.bench.ts's social data set and communityFeed query, the service
// only), warmed up by 2,000 requests (autocannon in a child process, 8 connections, not instrumented), then the instructions of every thread are counted over 500 requests:
//
//   NODE_ENV=production valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node --import tsx bench/instructions.ts [posts|leaderboard|community] [service|anchor]
//
// `anchor` counts the bench's anchor instead (its bare node:http handler, in this process too): user-space
// instructions only, as for the service, so their quotient leaves out the kernel's share (socket writes and reads),
// which is the same work on both sides.
//
// valgrind prints the count at exit (`Collected : N`); divide by 500. About two minutes a run. Compare two commits
// (a worktree each) or two sets of node flags, a run of each in turn.
import pg from 'pg';
import { execFileSync } from 'node:child_process';
import { openSession } from '../subgraphs/identity/index.js';
import { autocannonChild, BENCH_DATABASE_URL, leaderboardAnchor, postsAnchor, seedLeaderboard, seedPostsList, startBenchService } from './lib.js';
import { seedSocial } from './seed-social.js';

const REQUESTS = 500;
/** bench/feed.bench.ts's communityFeed page. */
const COMMUNITY_FEED = `query CommunityFeed($communityId: ID!, $first: Int, $after: String) {
  communityFeed(communityId: $communityId, sort: NEW, first: $first, after: $after) {
    edges { cursor node { id body author { username } community { name } reactions { total viewerReaction } commentCount } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const which = process.argv[2] === 'posts' || process.argv[2] === 'community' ? process.argv[2] : 'leaderboard';
const subject = process.argv[3] === 'anchor' ? 'anchor' : 'service';
const { service, base } = await startBenchService({ WORKER_ENABLED: 'false' }); // the job queue's polls are no request's work
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: subject === 'anchor' ? 10 : 2 }); // the anchor's pool as its bench has it

/** The URL to load and its headers (autocannon's `-H`, `-m`, `-b` arguments), seeded as the bench of the same name. */
async function target(): Promise<{ url: string; args: string[] }> {
  if (which === 'community') {
    if (subject === 'anchor') throw new Error('community: the service only (its anchor runs statements captured by bench/feed.bench.ts)');
    const seeded = await seedSocial(BENCH_DATABASE_URL);
    const cookie = `svc_session=${await openSession(service.deps, seeded.benchUserId)}`;
    const tribe = [...seeded.benchTribes].sort((a, b) => b.posts - a.posts)[0]!;
    const body = JSON.stringify({ query: COMMUNITY_FEED, variables: { communityId: tribe.id, first: 20 } });
    return { url: `${base}/graphql`, args: ['-m', 'POST', '-H', 'content-type=application/json', '-H', `cookie=${cookie}`, '-b', body] };
  }
  if (which === 'posts') {
    const { token, url, communityId } = await seedPostsList(base, pool);
    return { url: subject === 'anchor' ? `${(await postsAnchor(pool)).base}/?c=${communityId}` : url, args: ['-H', `authorization=Bearer ${token}`] };
  }
  const { headers, url, challengeId } = await seedLeaderboard(base, pool, 10_000);
  return { url: subject === 'anchor' ? `${(await leaderboardAnchor(pool)).base}/?c=${challengeId}` : url, args: ['-H', `authorization=${headers.authorization}`] };
}
const { url, args } = await target();
const cannon = (amount: number) => autocannonChild(['-c', '8', '-a', String(amount), ...args, url]);
const callgrind = (...args: string[]) => execFileSync('callgrind_control', [...args, String(process.pid)]);

await cannon(Number(process.env.WARMUP ?? 2000));
callgrind('-i', 'on');
const summary = await cannon(REQUESTS);
callgrind('-i', 'off');
console.log(summary.split('\n').filter((line) => /requests in|non-2xx/.test(line)).join('\n'));
console.log(`${which} ${subject}: instructions of ${REQUESTS} requests in valgrind's "Collected" line below`);
await pool.end();
await service.stop();
process.exit(0);
