/**
 * The split deployment on one machine (`npm run split`): two gateway+REST processes, every subgraph in its own
 * process, two job workers, Redis for the shared rate limit, one PostgreSQL. The Procfile names the same processes.
 *
 * `startSplit` is also what `test/split.test.ts` uses: it starts every process, waits until each answers, and returns
 * handles to kill, signal and restart a named process and to stop them all.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SUBGRAPH_NAMES } from '../subgraphs/index.js';

/** What a process of the split deployment is. */
export type SplitKind = 'gateway' | 'subgraph' | 'worker';

/** One running (or stopped) process of the split deployment. */
export interface SplitProcess {
  /** `gateway1`, `gateway2`, the subgraph's name (`events`), `worker1`, `worker2`. */
  name: string;
  kind: SplitKind;
  /** The HTTP port (gateways and subgraphs); undefined for workers. */
  port?: number;
  /** Base URL of a gateway or subgraph. */
  url?: string;
  /** The current child (replaced by `restart`). */
  child: ChildProcess;
  /** The last output lines (stdout and stderr), for diagnostics. */
  logs: string[];
}

/** Options of `startSplit`. Every port left out is a free one picked at start. */
export interface SplitOptions {
  /** `postgres://...`: required, the split shape needs a server every process reaches. */
  databaseUrl: string;
  /** `redis://...` for the shared rate-limit counter; unset: each gateway counts alone. */
  redisUrl?: string;
  /** Gateway ports (two gateways: one port each). */
  gatewayPorts?: number[];
  /** Subgraph ports by name. */
  subgraphPorts?: Partial<Record<string, number>>;
  /** How many job workers (default 2). */
  workers?: number;
  /** Extra environment for every process (on top of this process's environment). */
  env?: Record<string, string>;
  /** Run the TypeScript sources with `node --import tsx` (tests) instead of the built `dist/` files. Default: what this file is. */
  source?: boolean;
  /** Print each child's output prefixed with its name (`npm run split`), or only keep it in `logs` (tests). */
  print?: boolean;
  /** Processes starting at once (start-up is CPU-bound: a few at a time is faster on a small machine). Default 4. */
  concurrency?: number;
  /** How long one process may take to answer (default 60 s). */
  readyTimeoutMs?: number;
}

/** The running split deployment. */
export interface Split {
  processes: Map<string, SplitProcess>;
  /** Base URLs of the gateways, in order. */
  gatewayUrls: string[];
  /** Sends `signal` (default SIGKILL) to the named process's group and resolves when it has exited. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Sends a signal without waiting (SIGSTOP / SIGCONT to freeze and thaw a process). */
  signal(name: string, signal: NodeJS.Signals): void;
  /** Starts the named process again on the same port and waits until it answers. */
  restart(name: string): Promise<void>;
  /** SIGTERM to every process, SIGKILL to those still running after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
  /** A table of processes, pids and ports. */
  table(): string;
}

/** `scripts/` of the sources or `dist/scripts/` of the build: the entry files are one level up, with the same extension. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IS_SOURCE = import.meta.url.endsWith('.ts');

/** A free TCP port on 127.0.0.1 (the OS picks it; it is released before use). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port;
}

/** The first port of the kernel's ephemeral range (what `listen(0)` and outgoing connections take), 32768 by default. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * `n` distinct free TCP ports on 127.0.0.1, for processes started later: picked at random below the ephemeral range,
 * so that no outgoing connection or `listen(0)` of another process takes one before its process binds it (an
 * ephemeral port handed out here could be). All are held open until every one is picked, then released.
 */
export async function freePorts(n: number): Promise<number[]> {
  const low = 10_000;
  const high = ephemeralLow();
  const held: Array<ReturnType<typeof createServer>> = [];
  while (held.length < n) {
    const port = low + Math.floor(Math.random() * (high - low));
    const server = await new Promise<ReturnType<typeof createServer> | null>((resolve) => {
      const s = createServer()
        .once('error', () => resolve(null))
        .listen(port, '127.0.0.1', () => resolve(s));
    });
    if (server) held.push(server);
  }
  const ports = held.map((s) => (s.address() as { port: number }).port);
  await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** True when something accepts TCP connections on host:port within `timeoutMs`. */
async function tcpAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/** Resolves once `url` gives any HTTP answer with one of `statuses` (or any status when omitted). */
async function httpAnswers(url: string, init: RequestInit, statuses?: number[]): Promise<boolean> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return !statuses || statuses.includes(res.status);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

interface Spec {
  name: string;
  kind: SplitKind;
  port?: number;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Starts the split deployment and resolves when every process answers: subgraphs on `POST /graphql`, gateways
 * on `GET /readyz` (200), workers when they log `worker started`. On any failure, everything started is stopped.
 */
export async function startSplit(options: SplitOptions): Promise<Split> {
  if (!/^postgres(ql)?:\/\//.test(options.databaseUrl ?? '')) throw new Error('DATABASE_URL must be a postgres:// URL: the split deployment needs a PostgreSQL server');
  const source = options.source ?? IS_SOURCE;
  const ext = source ? 'ts' : 'js';
  const nodeArgs = source ? ['--import', 'tsx'] : [];
  const entry = (path: string) => `${ROOT}${path}.${ext}`;
  const base = { ...process.env, ...options.env } as Record<string, string>;
  const shared: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    // One secret for the gateway↔subgraph hop and one JWT key for every process, generated when not given.
    INTERNAL_SECRET: base.INTERNAL_SECRET || randomBytes(32).toString('base64url'),
    JWT_SECRET: base.JWT_SECRET || randomBytes(32).toString('base64url'),
    LOG_LEVEL: base.LOG_LEVEL || 'info',
  };

  const picked = await freePorts(SUBGRAPH_NAMES.length + 2);
  const subgraphPorts: Record<string, number> = {};
  SUBGRAPH_NAMES.forEach((name, i) => (subgraphPorts[name] = options.subgraphPorts?.[name] ?? picked[i]));
  const gatewayPorts = options.gatewayPorts ?? picked.slice(SUBGRAPH_NAMES.length);
  const subgraphUrls = SUBGRAPH_NAMES.map((n) => `${n}=http://127.0.0.1:${subgraphPorts[n]}/graphql`).join(',');

  const specs: Spec[] = [
    ...SUBGRAPH_NAMES.map((name) => ({
      name,
      kind: 'subgraph' as const,
      port: subgraphPorts[name],
      command: process.execPath,
      args: [...nodeArgs, entry('server/subgraph'), name],
      env: { ...shared, PORT: String(subgraphPorts[name]), HOST: '127.0.0.1' },
    })),
    ...gatewayPorts.map((port, i) => ({
      name: `gateway${i + 1}`,
      kind: 'gateway' as const,
      port,
      command: process.execPath,
      args: [...nodeArgs, entry('server/web')],
      env: {
        ...shared,
        PORT: String(port),
        SUBGRAPH_URLS: subgraphUrls,
        ...(options.redisUrl ? { RATE_LIMIT_REDIS_URL: options.redisUrl } : {}),
      },
    })),
    ...Array.from({ length: options.workers ?? 2 }, (_, i) => ({
      name: `worker${i + 1}`,
      kind: 'worker' as const,
      command: process.execPath,
      args: [...nodeArgs, entry('server/worker')],
      env: { ...shared, WORKER_ENABLED: 'true' },
    })),
  ];

  const processes = new Map<string, SplitProcess>();
  const specByName = new Map(specs.map((s) => [s.name, s]));
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const logsInfo = ['info', 'debug', 'trace'].includes(shared.LOG_LEVEL);

  const launch = (spec: Spec): SplitProcess => {
    const child = spawn(spec.command, spec.args, {
      cwd: process.cwd(),
      env: { ...base, ...spec.env },
      // Its own process group: signals reach the process and anything it starts, and a terminal's Ctrl-C reaches
      // only the launcher, which stops the children in order.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc: SplitProcess = {
      name: spec.name,
      kind: spec.kind,
      port: spec.port,
      url: spec.port ? `http://127.0.0.1:${spec.port}` : undefined,
      child,
      logs: [],
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        proc.logs.push(line);
        if (proc.logs.length > 300) proc.logs.shift();
        if (options.print) process.stdout.write(`${spec.name.padEnd(12)}| ${line}\n`);
      });
    }
    processes.set(spec.name, proc);
    return proc;
  };

  const waitReady = async (proc: SplitProcess): Promise<void> => {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (!alive(proc.child)) {
        throw new Error(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}) before answering:\n${proc.logs.slice(-20).join('\n')}`);
      }
      let ready = false;
      if (proc.kind === 'subgraph') ready = await httpAnswers(`${proc.url}/graphql`, { method: 'POST' });
      else if (proc.kind === 'gateway') ready = await httpAnswers(`${proc.url}/readyz`, {}, [200]);
      // A worker has no port: it is ready once it says so (or, when its log level hides that line, once it runs).
      else ready = !logsInfo || proc.logs.some((l) => l.includes('worker started'));
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`${proc.name} did not answer within ${readyTimeoutMs} ms:\n${proc.logs.slice(-20).join('\n')}`);
      await sleep(100);
    }
  };

  const killProcess = async (name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const proc = processes.get(name);
    if (!proc) throw new Error(`no process named ${name}`);
    if (!alive(proc.child)) return;
    const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
    try {
      process.kill(-proc.child.pid!, signal);
    } catch {
      return; // already gone
    }
    await exited;
  };

  const split: Split = {
    processes,
    gatewayUrls: gatewayPorts.map((p) => `http://127.0.0.1:${p}`),
    kill: killProcess,
    signal(name, signal) {
      const proc = processes.get(name);
      if (proc && alive(proc.child)) process.kill(-proc.child.pid!, signal);
    },
    async restart(name) {
      const spec = specByName.get(name);
      if (!spec) throw new Error(`no process named ${name}`);
      await killProcess(name);
      await waitReady(launch(spec));
    },
    async stop(graceMs = 10_000) {
      await Promise.all(
        [...processes.values()].map(async (proc) => {
          if (!alive(proc.child)) return;
          const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
          const kill = (signal: NodeJS.Signals) => {
            try {
              process.kill(-proc.child.pid!, signal);
            } catch {
              // already gone
            }
          };
          kill('SIGCONT'); // a frozen process cannot act on SIGTERM
          kill('SIGTERM');
          const timer = setTimeout(() => kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(timer);
        }),
      );
    },
    table() {
      const rows = [['process', 'kind', 'pid', 'port', 'url'], ...[...processes.values()].map((p) => [
        p.name,
        p.kind,
        String(p.child.pid ?? '-'),
        p.port ? String(p.port) : '-',
        p.kind === 'gateway' ? p.url! : p.kind === 'subgraph' ? `${p.url}/graphql (internal)` : '-',
      ])];
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
    },
  };

  // Should this process end without stop() (a crash, a test runner exiting), take the children with it.
  process.once('exit', () => {
    for (const proc of processes.values()) {
      try {
        if (alive(proc.child)) process.kill(-proc.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  try {
    // Start-up is CPU-bound (loading modules, one migrate() each under an advisory lock): a few at a time.
    const queue = [...specs];
    const concurrency = Math.max(1, options.concurrency ?? 4);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let spec = queue.shift(); spec; spec = queue.shift()) await waitReady(launch(spec));
      }),
    );
  } catch (error) {
    await split.stop(2000);
    throw error;
  }
  return split;
}

/**
 * The ports of `npm run split`: the gateways on `PORT` and `PORT+1` (default 4000, 4001), the subgraphs from
 * `SPLIT_SUBGRAPH_BASE_PORT` (default `PORT+101`) onwards, one each in the order of `SUBGRAPH_NAMES`. The Procfile and the
 * README's table give the defaults (`test/split-ports.test.ts` compares them).
 */
export function splitPorts(env: Record<string, string | undefined>): { gatewayPorts: number[]; subgraphPorts: Record<string, number> } {
  const portOf = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new Error(`${name} must be a TCP port (1-65535), not "${raw}"`);
    return n;
  };
  const port = portOf('PORT', 4000);
  const gatewayPorts = [port, port + 1];
  const base = portOf('SPLIT_SUBGRAPH_BASE_PORT', port + 101);
  const last = base + SUBGRAPH_NAMES.length - 1;
  if (last > 65_535) throw new Error(`SPLIT_SUBGRAPH_BASE_PORT ${base}: ${SUBGRAPH_NAMES.length} subgraphs need ports up to ${last}, above 65535`);
  if (gatewayPorts.some((p) => p >= base && p <= last)) {
    throw new Error(`SPLIT_SUBGRAPH_BASE_PORT ${base}: the subgraphs' ports ${base}-${last} overlap the gateways' (${port}, ${port + 1})`);
  }
  return { gatewayPorts, subgraphPorts: Object.fromEntries(SUBGRAPH_NAMES.map((name, i) => [name, base + i])) };
}

/** `npm run split`: the production shape from the built files, ports from `splitPorts` (PORT, SPLIT_SUBGRAPH_BASE_PORT). */
async function main(): Promise<void> {
  const env = process.env;
  if (!env.DATABASE_URL) {
    console.error('DATABASE_URL is required: the split deployment runs every process against one PostgreSQL (postgres://...).');
    process.exit(1);
  }
  const { gatewayPorts, subgraphPorts } = splitPorts(env);
  let redisUrl = env.RATE_LIMIT_REDIS_URL;
  let redis: ChildProcess | undefined;
  if (!redisUrl) {
    if (await tcpAnswers('127.0.0.1', 6379)) redisUrl = 'redis://127.0.0.1:6379';
    else if (spawnSync('redis-server', ['--version']).status === 0) {
      redis = spawn('redis-server', ['--port', '6379', '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore', detached: true });
      for (let i = 0; i < 50 && !(await tcpAnswers('127.0.0.1', 6379)); i += 1) await sleep(100);
      redisUrl = 'redis://127.0.0.1:6379';
      console.log(`started redis-server (pid ${redis.pid}) on 127.0.0.1:6379`);
    } else {
      console.warn('No Redis on 127.0.0.1:6379 and RATE_LIMIT_REDIS_URL is unset: each gateway counts the rate limit alone.');
    }
  }
  if (!env.INTERNAL_SECRET) console.log('INTERNAL_SECRET is unset: using a random one for this run');
  if (!env.JWT_SECRET) console.log('JWT_SECRET is unset: using a random one for this run (access tokens end with it)');
  let split: Split | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping every process`);
    await split?.stop();
    if (redis) process.kill(-redis.pid!, 'SIGTERM');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  const started = Date.now();
  split = await startSplit({
    databaseUrl: env.DATABASE_URL,
    redisUrl,
    gatewayPorts,
    subgraphPorts,
    print: true,
  });
  console.log(`\nsplit deployment up in ${((Date.now() - started) / 1000).toFixed(1)} s (rate limit counter: ${redisUrl ?? 'per process'})\n${split.table()}\n`);
  for (const proc of split.processes.values()) {
    proc.child.once('exit', (code, signal) => {
      if (!stopping) console.error(`${proc.name} exited (${code ?? signal}); the others keep running. Ctrl-C stops all.`);
    });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
