// A worker-only child process (`node --import tsx server/worker.ts`) for fault tests: kill it, stop it, measure it.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LOOPBACK_ALLOWED } from '../support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CA = fileURLToPath(new URL('../fixtures/tls/ca.pem', import.meta.url));

/** A running worker process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Its log lines (pino JSON on stdout, anything on stderr). */
  readonly logs: string[];
  /** Resolves when it logged `worker started`. */
  readonly ready: Promise<void>;
  /** Resolves when it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if it still runs, then waits for the exit (for teardown). */
  stop(): Promise<void>;
}

/**
 * Starts `server/worker.ts` on `databaseUrl` with short intervals, the loopback receivers allowed and the test CA
 * trusted; `env` overrides any variable.
 */
export function spawnWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/worker.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'info',
      WORKER_POLL_INTERVAL_MS: '100',
      WEBHOOK_FANOUT_INTERVAL_MS: '200',
      WEBHOOK_DRAIN_INTERVAL_MS: '200',
      WEBHOOK_ALLOWED_PRIVATE_HOSTS: LOOPBACK_ALLOWED,
      NODE_EXTRA_CA_CERTS: CA,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let started: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const collect = (stream: NodeJS.ReadableStream) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        logs.push(line);
        if (line.includes('"worker started"')) started();
      }
    });
  };
  collect(child.stdout!);
  collect(child.stderr!);
  const readyOrDead = Promise.race([
    ready,
    exited.then(({ code, signal }) => {
      throw new Error(`worker exited before it started (code ${code}, signal ${signal}):\n${logs.join('\n')}`);
    }),
  ]);
  readyOrDead.catch(() => undefined); // reported to whoever awaits `ready`, and to no one else
  return {
    child,
    pid: child.pid!,
    logs,
    ready: readyOrDead,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Resident and peak resident memory of a live process, in MiB (Linux `/proc`). */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}
