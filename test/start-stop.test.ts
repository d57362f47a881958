import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/split.js';
import { isolatedDatabase, TEST_DATABASE_URL, waitFor } from './support.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Started {
  child: ChildProcess;
  port: number;
  logs: string[];
  /** Milliseconds from spawn to the first 200 of /readyz. */
  readyMs: number;
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => done(true));
  });
}

/** `npm start` in its own process group (as a terminal runs it), waiting until /readyz answers 200. */
async function npmStart(databaseUrl: string, readyTimeoutMs: number): Promise<Started> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', JWT_SECRET: 'start-stop-secret-start-stop-secret-0123' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => logs.push(line));
  await waitFor(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}):\n${logs.slice(-30).join('\n')}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
        return res.status === 200;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200)); // building or loading: no need to ask 40 times a second
        return false;
      }
    },
    readyTimeoutMs,
    `npm start ready on port ${port}`,
  );
  return { child, port, logs, readyMs: Date.now() - started };
}

/** Sends `signal` to `target` and resolves with the exit of `npm start`. */
async function stopWith(s: Started, signal: NodeJS.Signals, target: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => s.child.once('exit', (code, sig) => resolve({ code, signal: sig })));
  process.kill(target, signal);
  const timer = setTimeout(() => process.kill(-s.child.pid!, 'SIGKILL'), 30_000);
  const result = await exited;
  clearTimeout(timer);
  return result;
}

/**
 * `npm start` as an operator runs it: the pid it is started as receives SIGTERM or SIGINT and the service drains and
 * exits 0, with nothing left listening; a second start with no source change skips the build.
 */
(TEST_DATABASE_URL ? describe : describe.skip)('npm start and its signals', () => {
  let database: { url: string | undefined; drop(): Promise<void> };
  const running: Started[] = [];

  beforeAll(async () => {
    database = await isolatedDatabase();
  });
  afterAll(async () => {
    for (const s of running) {
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await database?.drop();
  });

  it('SIGTERM to the npm start pid stops the service: exit 0, the port closed', async () => {
    // The first start builds unless dist/ is current already (an earlier `npm run build`): at most one build.
    const s = await npmStart(database.url!, 400_000);
    running.push(s);
    const result = await stopWith(s, 'SIGTERM', s.child.pid!);
    expect(result).toEqual({ code: 0, signal: null });
    expect(s.logs.join('\n')).toContain('"msg":"stopped"');
    expect(await listening(s.port)).toBe(false);
  }, 420_000);

  it('a second start with no change skips the build; SIGINT to its pid stops it: exit 0, the port closed', async () => {
    const s = await npmStart(database.url!, 60_000);
    running.push(s);
    expect(s.logs.join('\n')).toContain('the build is current (dist/.build-stamp matches the sources): skipping npm run build');
    expect(s.logs.join('\n')).not.toContain('running npm run build');
    // Ready in seconds: no compilation, only loading the service (a loaded 2-core machine: under 30 s).
    expect(s.readyMs).toBeLessThan(30_000);
    const result = await stopWith(s, 'SIGINT', s.child.pid!);
    expect(result).toEqual({ code: 0, signal: null });
    expect(await listening(s.port)).toBe(false);
  }, 90_000);

  it("a terminal's Ctrl-C (SIGINT to the whole process group) is one stop: exit 0, the port closed", async () => {
    const s = await npmStart(database.url!, 60_000);
    running.push(s);
    const result = await stopWith(s, 'SIGINT', -s.child.pid!);
    expect(result).toEqual({ code: 0, signal: null });
    expect(s.logs.join('\n')).not.toContain('second signal');
    expect(await listening(s.port)).toBe(false);
  }, 90_000);
});
