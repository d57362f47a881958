// SIGTERM in the middle of a stream of writes against the real process (`server/main.ts`): requests in flight
// finish (one of them still sending its body when the signal arrives), new connections are refused, the process
// exits 0 within 10 s, and the database holds exactly the posts that were answered 201, each with its outbox event.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { freePort } from '../../scripts/split.js';
import { unique } from '../factory.js';
import { isolatedDatabase, TEST_DATABASE_URL, waitFor } from '../support.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const CREATE_POST = 'mutation($c: ID!, $i: CreatePostInput!){ createPost(communityId: $c, input: $i){ id } }';

/** What one request of the stream got: a status and post id, or a network error; when it was sent and answered. */
interface Outcome {
  status?: number;
  postId?: string;
  error?: string;
  sentAt: number;
  doneAt: number;
}

const describePg = TEST_DATABASE_URL ? describe : describe.skip;

describePg('SIGTERM during load', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let child: ChildProcess;
  let output = '';
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  let base: string;
  let port: number;

  beforeAll(async () => {
    database = await isolatedDatabase();
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        JWT_SECRET: 'sigterm-test-secret-sigterm-test-secret',
        COOKIE_SECURE: 'false',
        WORKER_ENABLED: 'true',
        WORKER_POLL_INTERVAL_MS: '200',
        // The load below posts far faster than a person: the posting limits of issue 13 would refuse it.
        POSTING_RATE_LIMIT_PER_MINUTE: '1000000',
        NEW_MEMBER_POST_LIMIT: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`service exited at start-up:\n${output}`);
        return (await fetch(`${base}/readyz`).catch(() => null))?.status === 200;
      },
      // Generous: in CI the service starts (tsx compiling it) while the processes tier's other files start theirs.
      120_000,
      '/readyz',
    );
  }, 150_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await database?.drop();
  });

  it('lets in-flight requests finish, refuses new ones, exits 0 within 10 s and writes nothing by halves', async () => {
    // A user, a tribe, and both credentials.
    const email = `sig_${unique()}@example.com`;
    const signup = await fetch(`${base}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', username: `sig_${unique()}`, displayName: 'Sig' }),
    });
    expect(signup.status).toBe(201);
    const cookie = signup.headers.get('set-cookie')!.split(';')[0];
    const graphql = (query: string, variables: Record<string, unknown>) =>
      fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify({ query, variables }) });
    const tribe = (await (await graphql('mutation($i: CreateCommunityInput!){ createCommunity(input: $i){ id } }', { i: { name: 'Sig', handle: `sig-${unique()}` } })).json()).data.createCommunity;
    const login = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'correct horse battery' }) });
    const token = (await login.json()).data.access_token as string;
    const resourceBody = (content: string) => JSON.stringify({ content: `<p>${content}</p>` });

    // Eight lanes writing posts as fast as they can, alternating the resource API and GraphQL.
    const outcomes: Outcome[] = [];
    let exited = false;
    const lane = async (i: number) => {
      for (let n = 0; !exited; n += 1) {
        const sentAt = Date.now();
        try {
          if ((i + n) % 2) {
            const res = await fetch(`${base}/v1/communities/${tribe.id}/posts`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: resourceBody(`r ${unique()}`),
            });
            const body = await res.json();
            outcomes.push({ status: res.status, postId: body.data?.id, sentAt, doneAt: Date.now() });
          } else {
            const res = await graphql(CREATE_POST, { c: tribe.id, i: { content: `<p>g ${unique()}</p>` } });
            const body = await res.json();
            outcomes.push({ status: body.errors ? res.status || 500 : res.status, postId: body.data?.createPost?.id, sentAt, doneAt: Date.now() });
          }
        } catch (error) {
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          outcomes.push({ error: cause?.code ?? cause?.message ?? String(error), sentAt, doneAt: Date.now() });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const lanes = Promise.all(Array.from({ length: 8 }, (_, i) => lane(i)));
    await waitFor(() => outcomes.length >= 40, 30_000, 'the stream to get going');

    // A request still sending its body when the signal arrives. `Expect: 100-continue`: the server answers 100 once it
    // has read the headers, so the request is in flight (not a connection still being accepted) before the signal.
    const slowBody = resourceBody(`slow ${unique()}`);
    const slowReq = httpRequest(`${base}/v1/communities/${tribe.id}/posts`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(slowBody), expect: '100-continue' },
    });
    const headersRead = new Promise<void>((resolve) => slowReq.on('continue', () => resolve()));
    const slow = new Promise<{ status: number; body: any; at: number }>((resolve, reject) => {
      slowReq.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), at: Date.now() }));
      });
      slowReq.on('error', reject);
    });
    slowReq.flushHeaders();
    await headersRead;
    slowReq.write(slowBody.slice(0, 10));
    const signalAt = Date.now();
    child.kill('SIGTERM');
    setTimeout(() => slowReq.end(slowBody.slice(10)), 1500);

    const ended = await exit;
    exited = true;
    await lanes;
    const slowAnswer = await slow;

    // Exits 0, within 10 s of the signal.
    expect([ended.code, ended.signal]).toEqual([0, null]);
    expect(ended.at - signalAt).toBeLessThan(10_000);

    // The slow request, half sent at the signal, finished after it with 201.
    expect(slowAnswer.status).toBe(201);
    expect(slowAnswer.at - signalAt).toBeGreaterThanOrEqual(1000);

    // Before the signal every write succeeded; afterwards each one succeeded, got 503, or found no server to talk to.
    const before = outcomes.filter((o) => o.doneAt < signalAt);
    expect(before.length).toBeGreaterThanOrEqual(40);
    expect(before.filter((o) => !(o.status && o.status < 300))).toEqual([]);
    for (const o of outcomes.filter((x) => x.doneAt >= signalAt)) {
      if (o.status !== undefined) expect([201, 200, 503]).toContain(o.status);
      else expect(o.error).toMatch(/ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET|other side closed/);
    }
    const refused = await fetch(`${base}/healthz`).then(() => 'answered', (error) => (error as { cause?: { code?: string } }).cause?.code);
    expect(refused).toBe('ECONNREFUSED');

    // Exactly the posts answered 201 (and the slow one) exist, each with its post.created event, and no other.
    const answered = [...outcomes.flatMap((o) => (o.postId ? [o.postId] : [])), slowAnswer.body.data.id].sort();
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const posts = (await db.query('select id from posts where community_id = $1 order by id', [tribe.id])).rows.map((r) => r.id);
      const events = (await db.query("select data->>'postId' as id from outbox_events where community_id = $1 and type = 'post.created' order by 1", [tribe.id])).rows.map((r) => r.id);
      expect(posts).toEqual(answered);
      expect(events).toEqual(answered);
    } finally {
      await db.end();
    }
    expect(output).not.toMatch(/"level":(50|60)/); // no error logged on the way down
  }, 60_000);
});
