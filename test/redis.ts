import { Redis } from 'ioredis';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../scripts/split.js';

/**
 * A Redis for the tests of limits shared between processes: TEST_REDIS_URL, or a private redis-server on a free port
 * (null when neither is available: the caller skips).
 */
export async function startRedis(): Promise<{ url: string; stop(): Promise<void> } | null> {
  if (process.env.TEST_REDIS_URL) return { url: process.env.TEST_REDIS_URL, stop: async () => undefined };
  if (spawnSync('redis-server', ['--version']).status !== 0) return null;
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  for (let i = 0; i < 50; i += 1) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  probe.disconnect();
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
