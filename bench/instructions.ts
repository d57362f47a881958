// Instructions the service executes per request on the posts list or the leaderboard, counted by valgrind's callgrind
// (not a benchmark: `npm run bench` runs *.bench.ts only). On a shared machine a request's CPU time moves by a third
// from run to run, which hides a change of a few percent; the count of instructions moves by about 1% (the JIT and the
// collector still vary a little). The service runs in this process under callgrind with instrumentation off and its
// job queue off (its polls would be counted with the requests), is seeded like bench/posts.bench.ts or
// bench/leaderboard.bench.ts, warmed up by 2,000 requests (autocannon in a child process, 8 connections, not
// instrumented), then the instructions of every thread are counted over 500 requests:
//
//   NODE_ENV=production valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.out \
//     node --import tsx bench/instructions.ts [posts|leaderboard] [service|anchor]
//
// `anchor` counts the bench's anchor instead (its bare node:http handler, in this process too): user-space
// instructions only, as for the service, so their quotient leaves out the kernel's share (socket writes and reads),
// which is the same work on both sides.
//
// valgrind prints the count at exit (`Collected : N`); divide by 500. About two minutes a run. Compare two commits
// (a worktree each) or two sets of node flags, a run of each in turn.
import pg from 'pg';
import { execFileSync } from 'node:child_process';
import { autocannonChild, BENCH_DATABASE_URL, leaderboardAnchor, postsAnchor, seedLeaderboard, seedPostsList, startBenchService } from './lib.js';

const REQUESTS = 500;
const which = process.argv[2] === 'posts' ? 'posts' : 'leaderboard';
const subject = process.argv[3] === 'anchor' ? 'anchor' : 'service';
const { service, base } = await startBenchService({ WORKER_ENABLED: 'false' }); // the job queue's polls are no request's work
const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: subject === 'anchor' ? 10 : 2 }); // the anchor's pool as its bench has it

/** The URL to load and its authorization header, seeded as the bench of the same name. */
async function target(): Promise<{ url: string; authorization: string }> {
  if (which === 'posts') {
    const { token, url, communityId } = await seedPostsList(base, pool);
    return { url: subject === 'anchor' ? `${(await postsAnchor(pool)).base}/?c=${communityId}` : url, authorization: `Bearer ${token}` };
  }
  const { headers, url, challengeId } = await seedLeaderboard(base, pool, 10_000);
  return { url: subject === 'anchor' ? `${(await leaderboardAnchor(pool)).base}/?c=${challengeId}` : url, authorization: headers.authorization };
}
const { url, authorization } = await target();
const cannon = (amount: number) => autocannonChild(['-c', '8', '-a', String(amount), '-H', `authorization=${authorization}`, url]);
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
