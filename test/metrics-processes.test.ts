// The Prometheus endpoint of the process kinds that test/metrics.test.ts does not start in process: a worker
// (server/worker.ts) and a subgraph alone (server/subgraph.ts), each a real process on its own METRICS_PORT.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { freePorts } from '../scripts/split.js';
import { isolatedDatabase, TEST_DATABASE_URL, waitFor } from './support.js';

/** One scrape, parsed; histograms read as untyped so that each `_count` series keeps its labels (see metrics.test.ts). */
async function scrape(port: number): Promise<MetricFamily[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheusTextFormat((await res.text()).replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'));
}

const value = (families: MetricFamily[], name: string, labels: Record<string, string> = {}): number =>
  families
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v))
    .reduce((sum, s) => sum + Number(s.value ?? 0), 0);

const answers = async (port: number): Promise<boolean> => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/metrics`)).ok;
  } catch {
    return false;
  }
};

if (!TEST_DATABASE_URL) console.warn('metrics-processes.test.ts is skipped: a worker and a subgraph process need a PostgreSQL server');
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('metrics of the worker and subgraph processes', () => {
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  const children: ChildProcess[] = [];
  const secret = randomBytes(32).toString('base64url');
  let ports: number[];

  const start = (entry: string, args: string[], env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      env: { ...process.env, DATABASE_URL: database.url!, JWT_SECRET: secret, INTERNAL_SECRET: secret, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    database = await isolatedDatabase();
    ports = await freePorts(3);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((resolve) => c.once('exit', resolve).kill('SIGTERM')) : undefined)),
    );
    await database?.drop();
  }, 30_000);

  describe('worker', () => {
    it('serves its job metrics on METRICS_PORT, its only listener', async () => {
      const [metricsPort] = ports;
      start('server/worker.ts', [], { METRICS_PORT: String(metricsPort), WORKER_POLL_INTERVAL_MS: '100', WEBHOOK_FANOUT_INTERVAL_MS: '200' });
      let families: MetricFamily[] = [];
      await waitFor(async () => (await answers(metricsPort)) && value((families = await scrape(metricsPort)), 'svc_job_runs_total', { job: 'webhooks.fanout' }) >= 1, 45_000, 'a fan-out run');
      expect(value(families, 'svc_job_duration_seconds_count', { job: 'webhooks.fanout' })).toBeGreaterThanOrEqual(1);
      expect(families.some((f) => f.name === 'svc_outbox_events_waiting')).toBe(true);
      expect(value(families, 'svc_db_statement_duration_seconds_count')).toBeGreaterThan(0);
      expect(value(families, 'svc_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    }, 60_000);
  });

  describe('subgraph', () => {
    it('serves its HTTP metrics on METRICS_PORT, not on its public port', async () => {
      const [, metricsPort, port] = ports;
      start('server/subgraph.ts', ['members'], { PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), WORKER_ENABLED: 'false' });
      await waitFor(() => answers(metricsPort), 45_000, 'the subgraph metrics endpoint');
      const before = await scrape(metricsPort);
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-internal-secret': secret },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(res.status).toBe(200);
      const after = await scrape(metricsPort);
      const labels = { surface: 'graphql', route: '/graphql', method: 'POST', status_class: '2xx' };
      const name = 'svc_http_request_duration_seconds_count';
      expect(value(after, name, labels) - value(before, name, labels)).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      // That 404 came from Express's final handler, outside every router: counted as `unmatched`, and the process
      // still answers (observing it once threw in the response's `finish` event and ended the process).
      const later = await scrape(metricsPort);
      expect(value(later, name, { surface: 'application', route: 'unmatched', method: 'GET', status_class: '4xx' })).toBe(1);
      const again = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-internal-secret': secret },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(again.status).toBe(200);
    }, 60_000);
  });
});
