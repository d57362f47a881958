import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { createService, type Service } from '../server/service.js';
import { isolatedDatabase, testConfig, TEST_DATABASE_URL, waitFor } from './support.js';

interface DrainRow {
  repeat_interval: string;
  next_run_at: Date;
  last_run_at: Date | null;
}

/** The worker on its own database, at a drain interval; resolves with it and the log lines it wrote. */
async function workerWith(url: string, drainIntervalMs: number): Promise<{ service: Service; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = testConfig({
    DATABASE_URL: url,
    WORKER_ENABLED: 'true',
    WORKER_POLL_INTERVAL_MS: '200',
    WEBHOOK_DRAIN_INTERVAL_MS: String(drainIntervalMs),
  });
  const service = await createService(config, { log: pino({ level: 'info' }, stream) });
  return { service, lines };
}

/**
 * A changed WEBHOOK_DRAIN_INTERVAL_MS takes effect at the next start: Agenda's `every` alone kept the next run the old
 * interval computed (ten minutes away), so a shortened interval waited for it.
 */
(TEST_DATABASE_URL ? describe : describe.skip)('the worker schedule follows the configuration at each start', () => {
  let database: { url: string | undefined; drop(): Promise<void> };
  let client: pg.Client;
  const started: Service[] = [];
  const drainRow = async (): Promise<DrainRow | undefined> =>
    (await client.query<DrainRow>(`select repeat_interval, next_run_at, last_run_at from agenda_jobs where name = 'webhooks.drain'`)).rows[0];

  beforeAll(async () => {
    database = await isolatedDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    for (const s of started) await s.stop().catch(() => undefined);
    await client?.end();
    await database?.drop();
  });

  it('a start with a shorter drain interval runs the drain at once, then every new interval, and logs the schedule', async () => {
    const a = await workerWith(database.url!, 600_000);
    started.push(a.service);
    // Interval A: after its first run, the next one is ten minutes away.
    await waitFor(async () => {
      const row = await drainRow();
      return !!row?.last_run_at && row.next_run_at.getTime() > Date.now() + 500_000;
    }, 20_000, 'the first drain under interval A');
    expect(a.lines).toContainEqual(expect.objectContaining({ msg: 'job scheduled', job: 'webhooks.drain', everyMs: 600_000 }));
    await a.service.stop();
    const before = (await drainRow())!;

    const b = await workerWith(database.url!, 2_000);
    started.push(b.service);
    const row = (await drainRow())!;
    expect(row.repeat_interval).toBe('2000');
    expect(row.next_run_at.getTime()).toBeLessThanOrEqual(Date.now() + 2_000);
    const logged = b.lines.find((l) => l.msg === 'job scheduled' && l.job === 'webhooks.drain');
    expect(logged).toMatchObject({ everyMs: 2_000 });
    expect(new Date(logged!.nextRunAt as string).getTime()).toBeLessThanOrEqual(Date.now() + 2_000);
    // Each job of the worker has its line: the whole schedule is in the log.
    expect(b.lines.filter((l) => l.msg === 'job scheduled').map((l) => l.job)).toEqual(
      expect.arrayContaining(['webhooks.fanout', 'webhooks.drain', 'notifications.consume', 'mail.send', 'mail.digest', 'media.transcode']),
    );
    // It runs under B: twice within a few seconds, not ten minutes later.
    await waitFor(async () => ((await drainRow())!.last_run_at?.getTime() ?? 0) > before.last_run_at!.getTime(), 10_000, 'a drain under interval B');
    const firstUnderB = (await drainRow())!.last_run_at!.getTime();
    await waitFor(async () => ((await drainRow())!.last_run_at?.getTime() ?? 0) > firstUnderB, 10_000, 'a second drain under interval B');
    const next = (await drainRow())!;
    expect(next.next_run_at.getTime() - next.last_run_at!.getTime()).toBeLessThanOrEqual(2_500);
  }, 90_000);
});
