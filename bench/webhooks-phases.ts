// A diagnostic of the webhook worker, not a benchmark (docs/performance.md, Webhooks): the drain loop of
// bench/webhooks.bench.ts re-enacted from its parts (fan-out check, claimDue, the attempts, recordAttempts) with the
// time of each phase, for 10,000 deliveries of 1 KB to an HTTPS receiver in this process, in a scratch database.
// Run: NODE_ENV=production NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem node --import tsx bench/webhooks-phases.ts
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { fanOut } from '../subgraphs/webhooks/index.js';
import { attempt } from '../subgraphs/webhooks/attempt.js';
import { afterAttempt } from '../subgraphs/webhooks/retry.js';
import * as repo from '../subgraphs/webhooks/webhooks.repository.js';
import { verify } from '../verifier/src/index.js';
import { BENCH_DATABASE_URL, startBenchService } from './lib.js';
const tls = (n: string) => readFileSync(`/work/main/test/fixtures/tls/${n}`);
const name = `bench_webhooks_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
await admin.connect(); await admin.query(`create database "${name}"`);
const scratchUrl = new URL(BENCH_DATABASE_URL);
scratchUrl.pathname = `/${name}`;
const url = scratchUrl.toString();
const { service, base } = await startBenchService({ DATABASE_URL: url, WORKER_ENABLED: 'false', WEBHOOK_BATCH_SIZE: '500', WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1', DATABASE_POOL_SIZE: '20' });
const pool = new pg.Pool({ connectionString: url, max: 4 });
const state = { secret: '' };
const server = createServer({ key: tls('server-key.pem'), cert: tls('server.pem') }, (req, res) => {
  const chunks: Buffer[] = []; req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => { try { verify({ payload: Buffer.concat(chunks), headers: req.headers, secret: state.secret }); res.writeHead(204).end(); } catch { res.writeHead(400).end(); } });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const rurl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
const tag = randomBytes(4).toString('hex');
const signup = await fetch(`${base}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `wh_${tag}@example.com`, password: 'bench-password-1', username: `wh_${tag}`, displayName: 'Bench' }) });
const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
const tribe = (await (await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ query: `mutation { createCommunity(input: {name: "W ${tag}", handle: "wh-${tag}"}) { id handle } }` }) })).json()) as any;
const { id: communityId, handle } = tribe.data.createCommunity;
const created = (await (await fetch(`${base}/communities/${handle}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ url: rurl, events: ['member.joined'] }) })).json()) as any;
state.secret = created.secret;
await pool.query(`insert into outbox_events (community_id, type, data) select $1, 'member.joined', jsonb_build_object('userId', gen_random_uuid(), 'handle', $2::text, 'note', repeat('x', 900)) from generate_series(1, 10000)`, [communityId, handle]);
await fanOut(service.deps);
const app = service.deps;
const t = { fan: 0, claim: 0, send: 0, record: 0 };
const t0 = performance.now();
for (;;) {
  let s = performance.now(); await fanOut(app); t.fan += performance.now() - s;
  s = performance.now();
  const claimId = randomUUID();
  const claimed = await repo.claimDue(app.database.db, app.clock(), new Date(Date.now() + 60000), 500, claimId);
  t.claim += performance.now() - s;
  if (claimed.length === 0) break;
  s = performance.now();
  const outcomes = await Promise.all(claimed.map(async (d) => ({ d, outcome: await attempt(app, { endpointId: d.endpointId, url: d.url, secret: d.secret }, d) })));
  t.send += performance.now() - s;
  s = performance.now();
  await repo.recordAttempts(app.database.db, claimId, outcomes.map((o) => ({ id: o.d.id, record: afterAttempt(o.d.attempts, o.outcome, app.clock()) })));
  t.record += performance.now() - s;
}
const total = performance.now() - t0;
console.log(`total ${total.toFixed(0)} ms = ${(10000 / total * 1000).toFixed(0)}/s`, Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.toFixed(0)])));
server.closeAllConnections(); server.close();
await pool.end(); await service.stop();
await admin.query(`drop database "${name}" with (force)`); await admin.end();
process.exit(0);
