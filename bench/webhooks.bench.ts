// Issue 4: (1) deliveries per second one worker sends (drain cycles, batch size raised) to a local HTTPS receiver
// that verifies each one, beside that same receiver answering autocannon alone in the same run, twice: the receiver
// in the bench's process (the worker and the receiver share one event loop: issue 4's figure), then (issue 15) in a
// process of its own, as a real receiver is. Issue 32: the anchor is a bare sender doing what a delivery needs with
// nothing of ours around it (`bareSend`: the drain's claim statement, HMAC signing, an undici request to the same
// receiver, the drain's record statement), alternated with the worker; the receiver alone stays as information;
// (2) the verifier
// package's verifications per second for a 1 KB body beside a bare createHmac + timingSafeEqual loop, as a ratio:
// verifySignature() against that loop, and verify(), which also parses the body, against the loop plus JSON.parse.
// The service trusts the receiver's test certificate through NODE_EXTRA_CA_CERTS, which Node reads only at start:
// without it this file runs itself again in a child process that has it.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { Agent, request } from 'undici';
import { drain, fanOut, signatureHeader } from '../subgraphs/webhooks/index.js';
import { PER_ORIGIN_CONCURRENCY } from '../subgraphs/webhooks/runtime.js';
import { generateTestHeaders, verify, verifySignature } from '../verifier/src/index.js';
import { BENCH_DATABASE_URL, startBenchService, type LoadResult } from './lib.js';

const CA = fileURLToPath(new URL('../test/fixtures/tls/ca.pem', import.meta.url));
const tls = (name: string) => readFileSync(new URL(`../test/fixtures/tls/${name}`, import.meta.url));
const DELIVERIES = 10_000;
const BATCH = 500;
const SECONDS = 6;
/** autocannon on the receiver before each drain (see `round`). */
const WARM_UP_SECONDS = 2;

/** A 1 KB delivery body (the size the verifier figure is quoted for). */
function body(id: string, bytes = 1024): string {
  const base = { id, type: 'member.joined', created: Math.floor(Date.now() / 1000), data: { userId: randomUUID(), handle: 'bench', note: '' } };
  const pad = bytes - JSON.stringify(base).length;
  return JSON.stringify({ ...base, data: { ...base.data, note: 'x'.repeat(Math.max(0, pad)) } });
}

/** What a receiver answered so far, and (in its own process) the CPU time that process used. */
interface Counts {
  verified: number;
  rejected: number;
  cpu?: { user: number; system: number };
}

/** An HTTPS receiver that verifies every request with the verifier package and answers 204. */
async function receiver() {
  const state = { secret: '' };
  let verified = 0;
  let rejected = 0;
  const server = createServer({ key: tls('server-key.pem'), cert: tls('server.pem') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        verify({ payload: Buffer.concat(chunks), headers: req.headers, secret: state.secret });
        verified += 1;
        res.writeHead(204).end();
      } catch {
        rejected += 1;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    counts: () => ({ verified, rejected }),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same receiver in a process of its own (bench/webhooks-receiver.ts). */
async function receiverProcess(secret: string) {
  const child: ChildProcess = fork(fileURLToPath(new URL('./webhooks-receiver.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const ask = <T>(message: Record<string, unknown>, type: string) =>
    new Promise<T>((resolve) => {
      const on = (m: any) => {
        if (m.type !== type) return;
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
      if (Object.keys(message).length) child.send(message);
    });
  const { port } = await ask<{ port: number }>({}, 'ready');
  await ask({ type: 'secret', secret }, 'secret');
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    counts: () => ask<Counts>({ type: 'counts' }, 'counts'),
    close: async () => {
      child.send({ type: 'stop' });
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** A database of its own on the bench server: a drain takes every due delivery in its database. */
async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_webhooks_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BENCH_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: BENCH_DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

async function deliveryThroughput(): Promise<void> {
  const scratch = await scratchDatabase();
  const { service, base } = await startBenchService({
    DATABASE_URL: scratch.url,
    WORKER_ENABLED: 'false',
    WEBHOOK_BATCH_SIZE: String(BATCH),
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    DATABASE_POOL_SIZE: '20',
  });
  const pool = new pg.Pool({ connectionString: scratch.url, max: 4 });
  // The bare sender's own pool, as large as the service's.
  const bareDatabase = new pg.Pool({ connectionString: scratch.url, max: 20 });
  let rcv: Awaited<ReturnType<typeof receiver>> | undefined;
  let external: Awaited<ReturnType<typeof receiverProcess>> | undefined;
  try {
    const tag = randomBytes(4).toString('hex');
    const signup = await fetch(`${base}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `wh_${tag}@example.com`, password: 'bench-password-1', username: `wh_${tag}`, displayName: 'Bench' }),
    });
    const cookie = String(signup.headers.get('set-cookie')).split(';')[0];
    const tribe = (await (
      await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ query: `mutation { createCommunity(input: {name: "Webhooks ${tag}", handle: "wh-${tag}"}) { id handle } }` }),
      })
    ).json()) as any;
    const { id: communityId, handle } = tribe.data.createCommunity;

    rcv = await receiver();
    const created = (await (
      await fetch(`${base}/communities/${handle}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ url: rcv.url, events: ['member.joined'] }),
      })
    ).json()) as any;
    rcv.state.secret = created.secret;

    /** DELIVERIES outbox events (900 bytes of data each) for the tribe's endpoint, not fanned out yet. */
    const queueEvents = () =>
      pool.query(
        `insert into outbox_events (community_id, type, data)
         select $1, 'member.joined', jsonb_build_object('userId', gen_random_uuid(), 'handle', $2::text, 'note', repeat('x', 900))
         from generate_series(1, $3::int)`,
        [communityId, handle, DELIVERIES],
      );

    /** One round: DELIVERIES events fanned out and drained to `target`, then `target` alone under autocannon. */
    const round = async (title: string, target: { url: string; counts(): Counts | Promise<Counts> }) => {
      await pool.query('update webhook_endpoints set url = $1 where community_id = $2', [target.url, communityId]);
      // Fan-out: DELIVERIES outbox events become deliveries.
      await queueEvents();
      let started = performance.now();
      const fanned = await fanOut(service.deps);
      const fanoutSeconds = (performance.now() - started) / 1000;

      // The anchor below meets a receiver warmed by this round's deliveries; warm it the same way before the drain
      // (its JIT and TLS code, as a long-running receiver is), so the drain is not charged the receiver's start-up.
      const signed = () => {
        const payload = body(randomUUID());
        const headers = {
          'content-type': 'application/json',
          ...generateTestHeaders({ payload, secret: created.secret, timestamp: Math.floor(Date.now() / 1000) }),
        };
        return { payload, headers };
      };
      const warmUp = signed();
      await loadPost(target.url, warmUp.payload, warmUp.headers, PER_ORIGIN_CONCURRENCY, WARM_UP_SECONDS);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the warm-up's last answers, not counted below

      // Drain: one worker, cycles of BATCH concurrent attempts, until nothing is due.
      const before = await target.counts();
      const profiler = await startProfile();
      const load = loadavg()[0]!;
      const cpu = process.cpuUsage();
      started = performance.now();
      let sent = 0;
      let cycles = 0;
      for (;;) {
        const r = await drain(service.deps);
        if (r.attempted === 0) break;
        sent += r.succeeded;
        cycles += 1;
      }
      const drainSeconds = (performance.now() - started) / 1000;
      const workerCpu = process.cpuUsage(cpu);
      await profiler?.stop();
      const after = await target.counts();
      const cpuPerDelivery = (c: { user: number; system: number }) => `${((c.user + c.system) / 1000 / Math.max(1, sent)).toFixed(3)} ms`;

      // Anchor (issue 32): the bare sender on the same number of deliveries, fanned out the same way (not timed),
      // alternated with the worker: worker, bare, worker, bare; each side's rate is its deliveries over its seconds.
      const drainAgain = async () => {
        await queueEvents();
        await fanOut(service.deps);
        const began = performance.now();
        let delivered = 0;
        for (;;) {
          const r = await drain(service.deps);
          if (r.attempted === 0) break;
          delivered += r.succeeded;
        }
        return { sent: delivered, seconds: (performance.now() - began) / 1000 };
      };
      const bareAgain = async () => {
        await queueEvents();
        await fanOut(service.deps);
        return bareSend(bareDatabase);
      };
      const bareBefore = await target.counts();
      const bare1 = await bareAgain();
      const worker2 = await drainAgain();
      const bare2 = await bareAgain();
      const bareAfter = await target.counts();
      const bare = { sent: bare1.sent + bare2.sent, seconds: bare1.seconds + bare2.seconds };
      const bareRate = bare.sent / bare.seconds;
      const workerRate = (sent + worker2.sent) / (drainSeconds + worker2.seconds);

      // The same receiver answering autocannon alone (same body size, freshly signed headers): information.
      const { payload, headers } = signed();
      const anchor = await loadPost(target.url, payload, headers);
      // The receiver at the worker's own concurrency (PER_ORIGIN_CONCURRENCY connections): what it takes from a
      // client that keeps as few requests in flight as the worker does.
      const anchorAtWorkerConcurrency = await loadPost(target.url, payload, headers, PER_ORIGIN_CONCURRENCY);

      const rate = sent / drainSeconds;
      console.log(`Webhook deliveries, one worker, to a local HTTPS receiver verifying each (batch ${BATCH}), ${title}`);
      console.log(`  fan-out : ${fanned} deliveries from ${DELIVERIES} events in ${fanoutSeconds.toFixed(2)} s = ${(fanned / fanoutSeconds).toFixed(0)}/s`);
      console.log(
        `  subject : ${sent} delivered in ${drainSeconds.toFixed(2)} s over ${cycles} drain cycles = ${rate.toFixed(0)} deliveries/s (receiver verified ${after.verified - before.verified}, rejected ${after.rejected - before.rejected})`,
      );
      console.log(
        `  cpu     : this process ${cpuPerDelivery(workerCpu)} a delivery` +
          (before.cpu && after.cpu ? `, the receiver's process ${cpuPerDelivery({ user: after.cpu.user - before.cpu.user, system: after.cpu.system - before.cpu.system })}` : '') +
          `; load average ${load.toFixed(2)} at the start of the drain, ${loadavg()[0]!.toFixed(2)} at the end of the round`,
      );
      console.log(
        `  worker 2: ${worker2.sent} delivered in ${worker2.seconds.toFixed(2)} s = ${(worker2.sent / worker2.seconds).toFixed(0)} deliveries/s (after the first bare run)`,
      );
      console.log(
        `  anchor  : bare sender (the same claim and record statements, createHmac, undici request, ${PER_ORIGIN_CONCURRENCY} in flight), two runs alternated with the worker's: ` +
          `${(bare1.sent / bare1.seconds).toFixed(0)} and ${(bare2.sent / bare2.seconds).toFixed(0)} deliveries/s, ${bareRate.toFixed(0)}/s over both (receiver verified ${bareAfter.verified - bareBefore.verified - worker2.sent}, rejected ${bareAfter.rejected - bareBefore.rejected})`,
      );
      console.log(`  ratio   : ${(workerRate / bareRate).toFixed(3)} (the worker's ${workerRate.toFixed(0)}/s over both its runs)${title.includes('own process') ? ' (goal >= 0.8)' : ''}`);
      console.log(`  receiver alone under autocannon (50 connections, information): ${anchor.rps.toFixed(0)} req/s, p99 ${anchor.p99} ms (errors ${anchor.errors}, non-2xx ${anchor.non2xx}); worker / receiver alone ${(rate / anchor.rps).toFixed(3)}`);
      console.log(
        `  anchor at ${PER_ORIGIN_CONCURRENCY} connections (the worker's per-origin limit): ${anchorAtWorkerConcurrency.rps.toFixed(0)} req/s, p99 ${anchorAtWorkerConcurrency.p99} ms; ratio ${(rate / anchorAtWorkerConcurrency.rps).toFixed(3)}`,
      );
    };

    await round('receiver in the bench process (shares the event loop with the worker)', rcv);
    external = await receiverProcess(created.secret);
    await round('receiver in its own process', external);
  } finally {
    await rcv?.close();
    await external?.close();
    await pool.end();
    await bareDatabase.end();
    await service.stop();
    await scratch.drop();
  }
}

/** The drain's claim statement (subgraphs/webhooks/webhooks.repository.ts, `claimDue`), as it is sent. */
const CLAIM = `
      update webhook_deliveries d
         set claim_id = $1::uuid, claimed_until = $2::timestamptz
        from webhook_endpoints e
       where e.id = d.endpoint_id
         and d.id in (
           select d2.id from webhook_deliveries d2
            where d2.status = 'pending'
              and d2.next_attempt_at <= $3::timestamptz
              and (d2.claimed_until is null or d2.claimed_until <= $3::timestamptz)
              and (select e2.enabled from webhook_endpoints e2 where e2.id = d2.endpoint_id)
            order by d2.next_attempt_at, d2.id
            limit $4
            for update of d2 skip locked)
      returning d.id, d.endpoint_id, d.event, d.payload, d.attempts, e.url, e.secret, d.trace_context, d.created_at`;

/** The drain's record statement (`recordAttempts`), as it is sent. */
const RECORD = `
    update webhook_deliveries d
       set status = v.status, attempts = v.attempts, response_status = v.response_status,
           response_time_ms = v.response_time_ms, last_error = v.last_error, next_attempt_at = v.next_attempt_at,
           delivered_at = v.delivered_at, claim_id = null, claimed_until = null
      from unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::timestamptz[], $8::timestamptz[])
           as v(id, status, attempts, response_status, response_time_ms, last_error, next_attempt_at, delivered_at)
     where d.id = v.id and d.claim_id = $9::uuid
    returning d.id`;

/**
 * The anchor of the delivery rate (issue 32): what a delivery needs with nothing of ours around it. Claims BATCH due
 * deliveries with the drain's statement, sends them PER_ORIGIN_CONCURRENCY at a time (the worker's limit per receiver)
 * with an `x-svc-signature` made by createHmac and undici's `request` on a keep-alive Agent, records the outcomes 50 at
 * a time with the drain's statement, until none is due. No SSRF policy, timeout, retry schedule, metrics or logs.
 */
async function bareSend(pool: pg.Pool): Promise<{ sent: number; seconds: number }> {
  const agent = new Agent({ connections: PER_ORIGIN_CONCURRENCY, keepAliveTimeout: 4_000 });
  const started = performance.now();
  let sent = 0;
  try {
    for (;;) {
      const claimId = randomUUID();
      const now = new Date();
      const client = await pool.connect();
      let rows: Array<{ id: string; event: string; payload: string; attempts: number; url: string; secret: string }>;
      try {
        await client.query('begin');
        await client.query('set local enable_bitmapscan = off');
        rows = (await client.query(CLAIM, [claimId, new Date(now.getTime() + 120_000).toISOString(), now.toISOString(), BATCH])).rows;
        await client.query('commit');
      } finally {
        client.release();
      }
      if (rows.length === 0) break;
      const finished: Array<{ id: string; attempts: number; status: number; ms: number }> = [];
      const records: Array<Promise<unknown>> = [];
      const record = (done: typeof finished) => {
        const at = new Date().toISOString();
        return pool.query(RECORD, [
          done.map((f) => f.id),
          done.map((f) => (f.status >= 200 && f.status < 300 ? 'success' : 'pending')),
          done.map((f) => f.attempts + 1),
          done.map((f) => f.status),
          done.map((f) => Math.round(f.ms)),
          done.map(() => null),
          done.map(() => null),
          done.map(() => at),
          claimId,
        ]);
      };
      let next = 0;
      const sender = async () => {
        while (next < rows.length) {
          const d = rows[next++]!;
          const began = performance.now();
          const t = Math.floor(Date.now() / 1000);
          const mac = createHmac('sha256', d.secret).update(`${t}.`).update(d.payload).digest('hex');
          const res = await request(d.url, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', 'user-agent': 'bare-sender', 'x-svc-delivery': d.id, 'x-svc-event': d.event, 'x-svc-signature': `t=${t},v1=${mac}` },
            body: d.payload,
          });
          await res.body.dump();
          finished.push({ id: d.id, attempts: d.attempts, status: res.statusCode, ms: performance.now() - began });
          if (finished.length >= 50) records.push(record(finished.splice(0)));
        }
      };
      await Promise.all(Array.from({ length: PER_ORIGIN_CONCURRENCY }, sender));
      if (finished.length > 0) records.push(record(finished.splice(0)));
      await Promise.all(records);
      sent += rows.length;
    }
  } finally {
    await agent.close();
  }
  return { sent, seconds: (performance.now() - started) / 1000 };
}

/**
 * BENCH_CPU_PROF=<dir>: a CPU profile of the drain alone (not the setup, fan-out or anchor), written to
 * `<dir>/webhooks-drain-<time>.cpuprofile` (open it in Chrome DevTools or speedscope).
 */
async function startProfile(): Promise<{ stop(): Promise<void> } | undefined> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return undefined;
  const { Session } = await import('node:inspector/promises');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(dir, { recursive: true });
      const file = `${dir}/webhooks-drain-${Date.now()}.cpuprofile`;
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
      console.log(`  profile : ${file}`);
    },
  };
}

/** autocannon POSTing `payload` with `headers` for `seconds` (SECONDS) on `connections` connections. */
async function loadPost(url: string, payload: string, headers: Record<string, string>, connections = 50, seconds = SECONDS): Promise<LoadResult> {
  const autocannon = (await import('autocannon')).default;
  const result = await autocannon({ url, method: 'POST', body: payload, headers, connections, duration: seconds });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

/**
 * Runs `subject` and `anchor` in alternating slices of `perSlice` calls, so both meet the same
 * machine noise, and returns each one's calls per second and the median of the per-slice ratios.
 */
function paired(subject: () => unknown, anchor: () => unknown, slices = 400, perSlice = 500) {
  for (let i = 0; i < 5000; i += 1) {
    subject();
    anchor();
  }
  const ratios: number[] = [];
  let subjectMs = 0;
  let anchorMs = 0;
  for (let slice = 0; slice < slices; slice += 1) {
    let start = performance.now();
    for (let i = 0; i < perSlice; i += 1) subject();
    const s = performance.now() - start;
    start = performance.now();
    for (let i = 0; i < perSlice; i += 1) anchor();
    const a = performance.now() - start;
    subjectMs += s;
    anchorMs += a;
    ratios.push(a / s);
  }
  ratios.sort((x, y) => x - y);
  const perSecond = (ms: number) => (slices * perSlice) / (ms / 1000);
  return { subject: perSecond(subjectMs), anchor: perSecond(anchorMs), ratio: ratios[slices >> 1]! };
}

function verifierThroughput(): void {
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const payload = body(randomUUID());
  const raw = Buffer.from(payload);
  const t = Math.floor(Date.now() / 1000);
  const header = signatureHeader(secret, payload, t);
  const headers = { 'x-svc-signature': header, 'x-svc-delivery': 'd', 'x-svc-event': 'member.joined' };

  // Like for like: verifySignature() does what the bare loop does (plus parsing the header and the
  // checks); verify() also parses the body, so it stands beside the bare loop plus JSON.parse.
  const checkOnly = () => verifySignature({ payload: raw, headers, secret });
  const bare = () => {
    const sig = Buffer.from(header.slice(header.indexOf('v1=') + 3), 'hex');
    const mac = createHmac('sha256', secret).update(`${t}.`).update(raw).digest();
    if (!timingSafeEqual(mac, sig)) throw new Error('mismatch');
  };
  const parsing = () => verify({ payload: raw, headers, secret });
  const bareParsing = () => {
    bare();
    return JSON.parse(raw.toString('utf8')) as unknown;
  };
  const check = paired(checkOnly, bare);
  const parse = paired(parsing, bareParsing);
  console.log(`Verifier, 1 KB body (${raw.length} bytes), alternating slices of 500 calls, median ratio of 400 slices`);
  console.log(`  subject : verifySignature() from @svc/webhook-verifier: ${check.subject.toFixed(0)} verifications/s`);
  console.log(`  anchor  : bare createHmac + timingSafeEqual loop: ${check.anchor.toFixed(0)} verifications/s`);
  console.log(`  ratio   : ${check.ratio.toFixed(3)} (goal >= 0.8)`);
  console.log(`  subject : verify() (the same checks, then JSON.parse of the body it returns): ${parse.subject.toFixed(0)} verifications/s`);
  console.log(`  anchor  : the bare loop plus JSON.parse of the body: ${parse.anchor.toFixed(0)} verifications/s`);
  console.log(`  ratio   : ${parse.ratio.toFixed(3)} (goal >= 0.8); verify() against the bare loop alone: ${(parse.subject / check.anchor).toFixed(3)}`);
}

/** Both parts, or the one named on the command line (`verifier` or `deliveries`) when run directly. */
async function run(only = process.argv[2]): Promise<void> {
  if (!only || only === 'verifier') verifierThroughput();
  if (!only || only === 'deliveries') await deliveryThroughput();
}

export default async function webhooksBench(): Promise<void> {
  if (process.env.NODE_EXTRA_CA_CERTS === CA) return run('');
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: CA },
  });
  if (child.status !== 0) throw new Error(`webhooks bench failed (exit ${child.status})`);
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  run().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
