// docs/quickstart.md, executed: every ```sh block of the page, in order, in one bash session (as a reader pastes them
// into one terminal), against a fresh service started with the settings of the page's server block, so the page
// cannot drift from the service. The verifier is installed from the service's own URL into an empty folder with no
// registry reachable, and the receiver the page writes verifies real signed deliveries (a ping and a post.created)
// over HTTPS with the test CA (NODE_EXTRA_CA_CERTS, as the page sets it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/split.js';
import { isolatedDatabase, startService, type TestService } from './support.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PAGE = readFileSync(join(ROOT, 'docs/quickstart.md'), 'utf8');
const SERVER_MARK = '<!-- quickstart:server';

/** The page's ```sh blocks in order; `server` is the one after the server marker (the test starts the service itself). */
function blocks(markdown: string): Array<{ code: string; server: boolean }> {
  return [...markdown.matchAll(/^(<!-- quickstart:server[^\n]*\n)?```sh\n([\s\S]*?)^```$/gm)].map((m) => ({ code: m[2]!, server: Boolean(m[1]) }));
}

/** `NAME=value` settings of the server block (one a line, ending with a backslash). */
function serverSettings(code: string): Record<string, string> {
  return Object.fromEntries([...code.matchAll(/^([A-Z][A-Z0-9_]*)=(\S+?)\s*\\?$/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('docs/quickstart.md', () => {
  let t: TestService;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  let home: string;
  let bash: ChildProcess | undefined;
  const all = blocks(PAGE);
  const server = all.filter((b) => b.server);

  beforeAll(async () => {
    const pack = spawnSync(process.execPath, ['scripts/pack-verifier.mjs'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    if (pack.status !== 0) throw new Error(`scripts/pack-verifier.mjs failed: ${pack.stderr}`);
    db = await isolatedDatabase(); // the worker drains every due delivery of its database
    const { NODE_EXTRA_CA_CERTS: _ca, ...settings } = serverSettings(server[0]!.code);
    t = await startService({
      ...settings,
      ...(db.url ? { DATABASE_URL: db.url } : {}),
      NODE_ENV: 'production', // as npm start
      COOKIE_SECURE: 'true', // the default: the page's cookie jar must work with a Secure cookie over plain HTTP
      WORKER_ENABLED: 'true',
      WORKER_POLL_INTERVAL_MS: '200',
      WORKER_LOCK_LIFETIME_MS: '20000',
    });
    home = mkdtempSync(join(tmpdir(), 'quickstart-home-'));
  }, 180_000);

  afterAll(async () => {
    if (bash?.pid) {
      try {
        process.kill(-bash.pid, 'SIGKILL'); // the session and the receiver it started
      } catch {
        // already gone
      }
    }
    await t?.stop();
    await db?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('has one server block, which starts the service with npm, and the settings the test uses', () => {
    expect(server).toHaveLength(1);
    const code = server[0]!.code;
    expect(code).toMatch(/^npm ci$/m);
    expect(code).toMatch(/^npm start$/m);
    const settings = serverSettings(code);
    expect(Object.keys(settings).sort()).toEqual(['NODE_EXTRA_CA_CERTS', 'WEBHOOK_ALLOWED_PRIVATE_HOSTS', 'WEBHOOK_DRAIN_INTERVAL_MS']);
    // This process trusts the same CA (npm test sets it): the service in it dials the receiver as npm start would.
    expect(realpathSync(resolve(ROOT, settings.NODE_EXTRA_CA_CERTS!))).toBe(realpathSync(process.env.NODE_EXTRA_CA_CERTS!));
    expect(all.filter((b) => !b.server).length).toBeGreaterThan(5);
  });

  it('runs every other sh block in order: a tribe, a verified ping and post.created, a key and a Platform API call, the GraphQL path', async () => {
    const port = await t.listen(0, '127.0.0.1');
    const receiverPort = await freePort();
    const script = all
      .filter((b) => !b.server)
      .map((b, i) => `echo "### block ${i + 1}" >&2\n${b.code}`)
      .join('\n')
      .replaceAll('http://localhost:4000', `http://localhost:${port}`)
      .replaceAll('4443', String(receiverPort));
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      bash = spawn('bash', ['-eo', 'pipefail'], {
        cwd: ROOT,
        detached: true,
        env: {
          PATH: process.env.PATH,
          HOME: home,
          NODE_OPTIONS: '',
          // No registry: the verifier must install from the service's URL alone.
          npm_config_registry: 'http://127.0.0.1:9/',
          npm_config_update_notifier: 'false',
          npm_config_cache: join(home, '.npm'),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      bash.stdout!.on('data', (c: Buffer) => (stdout += c));
      bash.stderr!.on('data', (c: Buffer) => (stderr += c));
      const timer = setTimeout(() => process.kill(-bash!.pid!, 'SIGKILL'), 240_000);
      bash.on('exit', (code) => {
        clearTimeout(timer);
        done({ code, stdout, stderr });
      });
      bash.stdin!.end(script);
    });
    const lastBlock = [...run.stderr.matchAll(/### block (\d+)/g)].pop()?.[1];
    expect({ code: run.code, lastBlock, stderr: run.code === 0 ? '' : run.stderr.slice(-3000) }).toEqual({ code: 0, lastBlock: String(all.length - 1), stderr: '' });

    const out = run.stdout;
    expect(out).toMatch(/"username": "owner"/);
    expect(out).toMatch(/^tribe [0-9a-f-]{36}$/m);
    // The ping, answered 200 by the receiver, and both deliveries verified with the installed package.
    expect(out).toMatch(/"ok": true,\s*"statusCode": 200/);
    expect(out).toMatch(/^verified ping \S+ /m);
    const created = /^verified post\.created \S+ (\{.*\})$/m.exec(out);
    expect(JSON.parse(created?.[1] ?? 'null')).toEqual({ postId: expect.any(String), authorId: expect.any(String), handle: 'quick-start' });
    expect(out).not.toContain('rejected');
    expect(JSON.parse(readFileSync(join(home, 'tribes-quickstart/node_modules/@svc/webhook-verifier/package.json'), 'utf8')).version).toBe(
      JSON.parse(readFileSync(join(ROOT, 'verifier/package.json'), 'utf8')).version,
    );
    // The Platform API over the REST path's key: the post.
    expect(out).toContain('"body": "<p>Hello, tribe!</p>"');
    // The GraphQL path: the tribe, the join, the post, the key's Platform API call.
    expect(out).toMatch(/"handle": "graphql-tribe",\s*"isPublic": true/);
    expect(out).toMatch(/"joinCommunity": \{\s*"id": "[^"]+",\s*"role": "member"/);
    expect(out).toMatch(/"body": "<p>Hello from GraphQL<\/p>",\s*"author": "member"/);
  }, 300_000);
});
