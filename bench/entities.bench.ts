// Issue 15, seventh pass: the second fetch of the leaderboard's and the members list's plans, the identity
// subgraph's `_entities` for a page of users, measured alone in this process (no HTTP, no load generator): its
// fetch document as the local plan runs it (`LocalSubgraphSource.fetchFast`, graphql-jit once the document has come
// back) for 50 users the service remembers, beside
//   - the anchor: the same 50 users' fields picked from a Map of rows read beforehand (nothing of ours around it),
//   - for information, the same fetch on the schema `buildSubgraphSchema` builds alone (@apollo/subgraph's
//     `_entities` resolver: an `async` step, a `__typename` definition and a DataLoader `load` per entity).
// Mean time per fetch over alternating rounds; ratio = anchor / subject.
import { buildSubgraphSchema } from '@apollo/subgraph';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { LocalSubgraphSource } from '../gateway/src/local-source.js';
import { buildSubgraph, SUBGRAPHS } from '../subgraphs/index.js';
import { BENCH_DATABASE_URL, startBenchService } from './lib.js';

const USERS = 50;
const RUNS = 5_000;
const ROUNDS = 3;
const QUERY = 'query Leaderboard__identity__1($representations:[_Any!]!){_entities(representations:$representations){...on User{username displayName}}}';

export default async function entitiesBench(): Promise<void> {
  const { service } = await startBenchService();
  const pool = new pg.Pool({ connectionString: BENCH_DATABASE_URL, max: 2 });
  try {
    const tag = randomBytes(4).toString('hex');
    const { rows } = await pool.query<{ id: string; username: string; display_name: string }>(
      `insert into users (email, username, display_name)
       select 'ent_' || $1 || '_' || g || '@example.com', 'ent_' || $1 || '_' || g, 'Entity ' || g from generate_series(1, $2::int) g
       returning id, username, display_name`,
      [tag, USERS],
    );
    const ids = rows.map((r) => r.id);
    const context = () => ({ app: service.deps, caller: null, requestId: 'bench' });
    const representations = () => ids.map((id) => ({ __typename: 'User', id }));
    const ours = new LocalSubgraphSource(buildSubgraph('identity'));
    const apollos = new LocalSubgraphSource(buildSubgraphSchema([{ typeDefs: SUBGRAPHS.identity.typeDefs, resolvers: SUBGRAPHS.identity.resolvers }]));
    const byId = new Map(rows.map((r) => [r.id, r]));

    const subjects = {
      subject: () => ours.fetchFast(QUERY, undefined, { representations: representations() }, context()),
      apollo: () => apollos.fetchFast(QUERY, undefined, { representations: representations() }, context()),
      anchor: async () => ({
        _entities: representations().map((r) => {
          const row = byId.get(r.id);
          return row ? { username: row.username, displayName: row.display_name } : null;
        }),
      }),
    };
    const expected = JSON.stringify(await subjects.anchor());
    for (const [name, run] of Object.entries(subjects)) {
      const answer = JSON.stringify(await run());
      if (answer !== expected) throw new Error(`${name} answered ${answer.slice(0, 200)}`);
    }

    const micros: Record<keyof typeof subjects, number[]> = { subject: [], apollo: [], anchor: [] };
    for (let round = 0; round < ROUNDS + 1; round += 1) {
      for (const [name, run] of Object.entries(subjects) as Array<[keyof typeof subjects, () => Promise<unknown>]>) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < RUNS; i += 1) await run();
        if (round > 0) micros[name].push(Number(process.hrtime.bigint() - started) / RUNS / 1000); // round 0 warms up
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const [subject, apollo, anchor] = [mean(micros.subject), mean(micros.apollo), mean(micros.anchor)];
    console.log(`identity _entities for ${USERS} remembered users, in process (fetchFast), mean of ${ROUNDS} rounds of ${RUNS}`);
    console.log(`  subject: ${subject.toFixed(1)} µs per fetch (cheaperEntities, byIdReference.many, shared remembered rows)`);
    console.log(`  anchor : ${anchor.toFixed(1)} µs per fetch (the same fields picked from a Map of the rows)`);
    console.log(`  ratio  : ${(anchor / subject).toFixed(3)} (anchor / subject)`);
    console.log(`  (information) @apollo/subgraph's own _entities on the same rows: ${apollo.toFixed(1)} µs per fetch, ${(apollo / subject).toFixed(2)}x the subject`);
  } finally {
    await pool.end();
    await service.stop();
  }
}
