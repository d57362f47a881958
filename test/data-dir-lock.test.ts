import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/split.js';
import { waitFor } from './support.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

interface Proc {
  child: ChildProcess;
  port: number;
  logs: string[];
  exited: Promise<number | null>;
}

/** `server/main.ts` on the embedded database in `dataDir` (DATABASE_URL unset), with its worker. */
async function serviceOn(dataDir: string): Promise<Proc> {
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NODE_OPTIONS: '', DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', WORKER_ENABLED: 'true' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => logs.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, logs, exited };
}

async function ready(p: Proc): Promise<void> {
  await waitFor(
    async () => {
      if (p.child.exitCode !== null) throw new Error(`exited ${p.child.exitCode}:\n${p.logs.join('\n')}`);
      try {
        return (await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return false;
      }
    },
    90_000,
    'the service to be ready',
  );
}

describe('one process per embedded data directory', () => {
  let dir: string;
  const procs: Proc[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-data-'));
  });
  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  // One embedded start is tens of seconds of CPU on CI (PGlite and the migrations): one start shows both rules.
  it('a lock left by a process that is gone is stale: the next start takes it; a second process on the same DATA_DIR then refuses at once, naming the first one, before migrations or the worker', async () => {
    // A pid no process has (a SIGKILL or a crash left its lock): the highest pid Linux hands out is below 2^22.
    writeFileSync(join(dir, 'service.lock'), '4194304\n');
    const first = await serviceOn(dir);
    procs.push(first);
    await ready(first);
    expect(readFileSync(join(dir, 'service.lock'), 'utf8').trim()).toBe(String(first.child.pid));

    const second = await serviceOn(dir);
    procs.push(second);
    expect(await second.exited).toBe(1);
    const out = second.logs.join('\n');
    expect(out).toContain(`DATA_DIR ${dir} is in use by process ${first.child.pid} (lock file ${join(dir, 'service.lock')})`);
    expect(out).not.toContain('migrations applied');
    expect(out).not.toContain('worker started');
    expect(out).not.toMatch(/^\s+at /m); // the message, not a stack trace

    // The first is untouched and still answers; stopping it removes the lock.
    expect((await fetch(`http://127.0.0.1:${first.port}/readyz`)).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(dir, 'service.lock'))).toBe(false);
  }, 180_000);
});
