import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { createTribe, join, registerEndpoint, signupUser } from './factory.js';
import { Receiver, sqlRows, startWebhookService, waitFor, type TestService } from './support.js';

/** `npm start` without DATABASE_URL: Agenda runs on the embedded PGlite through the pool adapter. */
describe('webhook worker on PGlite', () => {
  let t: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startWebhookService({
      env: {
        DATABASE_URL: '',
        WORKER_ENABLED: 'true',
        WORKER_POLL_INTERVAL_MS: '100',
        WORKER_LOCK_LIFETIME_MS: '10000',
        WEBHOOK_TIMEOUT_MS: '5000', // PGlite's queries hold this process's event loop: an answer can be read late
        WEBHOOK_FANOUT_INTERVAL_MS: '200',
        WEBHOOK_DRAIN_INTERVAL_MS: '300',
      },
    });
    receiver = await new Receiver().start();
  }, 120_000); // PGlite start-up and migrations are CPU-bound: slow on a loaded 2-core machine
  afterAll(async () => {
    await receiver?.stop();
    await t?.stop();
  });

  it('delivers member.joined with {userId, handle} when someone joins a tribe', async () => {
    expect(t.deps.database.kind).toBe('pglite');
    const owner = await signupUser(t);
    const tribe = await createTribe(t, owner);
    await registerEndpoint(t, owner, tribe.handle, { url: receiver.url(), events: ['member.joined'] }, receiver);
    const user = await signupUser(t);
    await join(t, user, tribe.handle);
    // The fan-out, then the drain, each a PGlite transaction in this process, beside three other Jest workers in CI:
    // once took more than 15 s (the file 74 s instead of 37 s).
    await waitFor(() => receiver.events.length >= 1, 45_000, 'member.joined');
    expect(receiver.events).toEqual([
      { id: expect.any(String), type: 'member.joined', created: expect.any(Number), data: { userId: user.id, handle: tribe.handle } },
    ]);
    expect(receiver.rejected).toEqual([]);
    const jobs = await sqlRows(t, sql`select name from agenda_jobs where name like 'webhooks.%' order by name`);
    expect(jobs.map((j) => j.name)).toEqual(['webhooks.drain', 'webhooks.fanout']);
  }, 90_000);
});
