// What test/faults/document-memory.test.ts and bench/documents.bench.ts share: the service in a process of its own
// (measured-service.ts), and the attack of issue 29: small anonymous GraphQL documents, each sent once, each one
// distinct (a fresh alias and a literal argument), half answered by one subgraph and half by two.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** What the service process reports: resident and V8 heap bytes, settled after full GCs, and the peak RSS since the last report. */
export interface Memory {
  rss: number;
  heapUsed: number;
  peak: number;
}

export interface MeasuredService {
  base: string;
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The whole service on `databaseUrl` in a child process, in production mode, its GraphQL rate limit by cost raised
 * out of reach (the attack is about memory, not about the budget) and `env` on top.
 */
export async function startMeasuredService(databaseUrl: string, env: Record<string, string> = {}): Promise<MeasuredService> {
  const child = fork(fileURLToPath(new URL('./measured-service.ts', import.meta.url)), [], {
    cwd: ROOT,
    execArgv: ['--expose-gc', '--import', 'tsx'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'silent',
      COOKIE_SECURE: 'false',
      WORKER_ENABLED: 'false',
      GRAPHQL_COST_MAX_ANONYMOUS: '1000000000',
      GRAPHQL_COST_RESTORE_ANONYMOUS: '1000000000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { type: string; port: number }) => (m.type === 'ready' ? resolve(m.port) : reject(new Error(`unexpected ${m.type}`))));
    child.once('exit', (code) => reject(new Error(`the service process exited with ${code}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    base: `http://127.0.0.1:${port}`,
    memory: () =>
      new Promise<Memory>((resolve) => {
        child.once('message', (m: Memory) => resolve(m));
        child.send({ type: 'memory' });
      }),
    async stop() {
      if (child.exitCode === null) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The `i`th distinct document: a fresh alias, and a literal page size that changes with it. */
export const distinctDocument = (i: number): string =>
  i % 2 === 0
    ? `{ t${i}: communities(perPage: ${1 + (i % 5)}) { items { id name } } }`
    : `{ t${i}: communities(perPage: ${1 + (i % 5)}) { items { id handle memberCount } } }`;

/**
 * Sends documents `from` to `from + count - 1` to `/graphql` once each, anonymously, over `connections` concurrent
 * loops; throws on the first answer that is not a 200 without errors. Answers the requests per second.
 */
export async function sendDistinct(base: string, from: number, count: number, connections = 8): Promise<number> {
  let next = from;
  const end = from + count;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < end) {
        const query = distinctDocument(next++);
        const send = () => fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
        // Once more on a connection reset: a keep-alive connection the server closed as it was reused.
        const res = await send().catch(send);
        const body = (await res.json()) as { errors?: unknown };
        if (res.status !== 200 || body.errors) throw new Error(`${query}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}
