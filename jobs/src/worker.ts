import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda, type Job } from 'agenda';
import { AGENDA_JOBS_TABLE } from '../../db/src/code-migrations.js';
import { listenOnChannel } from '../../db/src/index.js';
import type { AppDeps } from '../../subgraphs/kernel/index.js';
import { jobDuration, jobRuns, watchOutbox } from '../../subgraphs/kernel/metrics.js';
import { OUTBOX_CHANNEL, outboxBacklog } from '../../subgraphs/outbox/index.js';
import { drain, fanOut, interruptAttempts } from '../../subgraphs/webhooks/index.js';
import { consumeNotifications, sendEventReminders } from '../../subgraphs/engagement/index.js';
import { sendQueuedMail } from '../../subgraphs/mail/index.js';
import { sendDigests } from '../../subgraphs/digest/index.js';
import { JOB_MEDIA_TRANSCODE, transcodePending, transcodeRuntime } from '../../subgraphs/media/index.js';
import { pgliteAsPool } from './pglite-pool.js';

export const JOB_WEBHOOKS_FANOUT = 'webhooks.fanout';
export const JOB_WEBHOOKS_DRAIN = 'webhooks.drain';
/** Outbox events to notifications, then pending tribe-wide fan-outs. */
export const JOB_NOTIFICATIONS_CONSUME = 'notifications.consume';
/** Reminders 24 hours before an event, to its registrants. */
export const JOB_EVENT_REMINDERS = 'notifications.event_reminders';
/** Sends due mail of the outbox (or logs and keeps it without SMTP_URL). */
export const JOB_MAIL_SEND = 'mail.send';
/** Queues each user's daily digest of unread notifications (email-enabled kinds). */
export const JOB_MAIL_DIGEST = 'mail.digest';

/** Transcodes uploaded lesson videos into HLS (subgraphs/media/transcode.ts), one at a time under a renewed lease. */
export { JOB_MEDIA_TRANSCODE };

/** A running background worker. */
export interface Worker {
  agenda: Agenda;
  /**
   * Stops taking jobs (freeing the locks of those not started), interrupts webhook attempts in flight (a
   * later cycle sends them again), and waits for the running jobs to record what they finished.
   */
  stop(): Promise<void>;
}

/**
 * Starts the Agenda worker of this process on the app's database: `webhooks.fanout` (outbox events to
 * deliveries) and `webhooks.drain` (send due deliveries) at their configured intervals. Agenda's table
 * comes from the migrations (`ensureSchema: false`). Several workers may run against one database:
 * Agenda locks each job run, and deliveries are claimed row by row.
 */
export async function startWorker(app: AppDeps): Promise<Worker> {
  const { database, config, log } = app;
  const pglite = database.kind === 'pglite';
  const pool = database.pool ?? pgliteAsPool(database.pglite!);
  const backend = new PostgresBackend({
    pool,
    tableName: AGENDA_JOBS_TABLE,
    ensureSchema: false,
    disableNotifications: pglite,
  });
  // Agenda leaves a timer of half the lock lifetime per job run (its liveness check): tests keep it short.
  const lockLifetime = config.worker.lockLifetimeMs;
  const agenda = new Agenda({
    backend,
    name: `svc-${process.pid}`,
    processEvery: config.worker.pollIntervalMs,
    defaultLockLifetime: lockLifetime,
  });
  agenda.on('error', (error: Error) => log.error({ err: error }, 'agenda error'));
  // The LISTEN connection reconnects by itself when the database comes back; unheard, its errors would crash the process.
  backend.notificationChannel?.on('error', (error: Error) => log.warn({ err: error }, 'agenda notification channel error'));

  const running = new Set<Promise<unknown>>();
  const track = (name: string, run: () => Promise<unknown>) => async (_job?: Job) => {
    const started = process.hrtime.bigint();
    const p = run();
    running.add(p);
    try {
      const result = await p;
      jobRuns.inc({ job: name, outcome: 'succeeded' });
      log.debug({ job: name, result }, 'job done');
    } catch (error) {
      jobRuns.inc({ job: name, outcome: 'failed' });
      log.error({ err: error, job: name }, 'job failed');
      throw error;
    } finally {
      jobDuration.observe({ job: name }, Number(process.hrtime.bigint() - started) / 1e9);
      running.delete(p);
    }
  };
  agenda.define(JOB_WEBHOOKS_FANOUT, track(JOB_WEBHOOKS_FANOUT, () => fanOut(app)), { concurrency: 1, lockLifetime });
  agenda.define(JOB_WEBHOOKS_DRAIN, track(JOB_WEBHOOKS_DRAIN, () => drain(app)), { concurrency: 1, lockLifetime });
  agenda.define(JOB_NOTIFICATIONS_CONSUME, track(JOB_NOTIFICATIONS_CONSUME, () => consumeNotifications(app)), { concurrency: 1, lockLifetime });
  agenda.define(JOB_EVENT_REMINDERS, track(JOB_EVENT_REMINDERS, () => sendEventReminders(app)), { concurrency: 1, lockLifetime });
  agenda.define(JOB_MAIL_SEND, track(JOB_MAIL_SEND, () => sendQueuedMail(app)), { concurrency: 1, lockLifetime });
  agenda.define(JOB_MAIL_DIGEST, track(JOB_MAIL_DIGEST, () => sendDigests(app)), { concurrency: 1, lockLifetime });
  // Video transcoding outlives a lock: the job touches its lock whenever it renews its row's lease, and stopping the
  // worker aborts ffmpeg and gives the video back for the next start.
  const transcoding = new AbortController();
  const video = transcodeRuntime(app);
  agenda.define(
    JOB_MEDIA_TRANSCODE,
    (job: Job) => track(JOB_MEDIA_TRANSCODE, () => transcodePending(app, video, { signal: transcoding.signal, touch: () => job.touch() }))(job),
    { concurrency: 1, lockLifetime },
  );

  // A committed outbox event wakes the notifications consumer at once (migration 0034 NOTIFYs OUTBOX_CHANNEL), so a
  // reply, a mention or a role change reaches an open socket in milliseconds; the polled job catches what was written
  // while nobody listened. This run waits for a consumer already running (the polled job) instead of skipping.
  let stopping = false;
  const consumeNow = coalesced(track(JOB_NOTIFICATIONS_CONSUME, () => consumeNotifications(app, { wait: true })), () => stopping);
  const outboxListener = await listenOnChannel(database, { channel: OUTBOX_CHANNEL, name: 'outbox', log, onReconnect: consumeNow }, consumeNow);
  try {
    await agenda.start();
  } catch (error) {
    await outboxListener.close();
    throw error;
  }
  // The schedule of this start's configuration. Agenda's `every` updates a job's interval but keeps the next run an
  // earlier start computed (from the old interval): one later than now + the new interval is brought forward to now,
  // so a shortened interval takes effect at once (a lengthened one applies from the next run).
  const schedule: Record<string, number> = {
    [JOB_WEBHOOKS_FANOUT]: config.webhooks.fanoutIntervalMs,
    [JOB_WEBHOOKS_DRAIN]: config.webhooks.drainIntervalMs,
    [JOB_NOTIFICATIONS_CONSUME]: config.notifications.consumeIntervalMs,
    [JOB_EVENT_REMINDERS]: config.notifications.reminderIntervalMs,
    [JOB_MAIL_SEND]: config.mail.sendIntervalMs,
    [JOB_MAIL_DIGEST]: config.mail.digestIntervalMs,
    [JOB_MEDIA_TRANSCODE]: config.video.intervalMs,
  };
  const query = (text: string, params: unknown[]) => (pool as { query(t: string, p: unknown[]): Promise<{ rows: any[] }> }).query(text, params);
  for (const [name, everyMs] of Object.entries(schedule)) {
    await agenda.every(everyMs, name);
    await query(
      `update "${AGENDA_JOBS_TABLE}" set next_run_at = now()
        where name = $1 and type = 'single' and next_run_at > now() + ($2::bigint * interval '1 millisecond')`,
      [name, everyMs],
    );
  }
  const next = await query(`select name, next_run_at from "${AGENDA_JOBS_TABLE}" where name = any($1)`, [Object.keys(schedule)]);
  const nextRun = new Map(next.rows.map((r: { name: string; next_run_at: Date | string | null }) => [r.name, r.next_run_at ? new Date(r.next_run_at).toISOString() : null]));
  for (const [name, everyMs] of Object.entries(schedule)) log.info({ job: name, everyMs, nextRunAt: nextRun.get(name) ?? null }, 'job scheduled');
  if (!config.mail.smtpUrl) log.warn('SMTP_URL is not set: mail is logged (subject and recipient) and kept in mail_outbox, not sent');
  log.info(
    { drainIntervalMs: config.webhooks.drainIntervalMs, fanoutIntervalMs: config.webhooks.fanoutIntervalMs, batchSize: config.webhooks.batchSize },
    'worker started',
  );

  // svc_outbox_events_waiting and svc_outbox_oldest_event_age_seconds, read at each scrape of this process.
  const unwatchOutbox = watchOutbox(() => outboxBacklog(database.db));

  return {
    agenda,
    async stop() {
      stopping = true;
      await outboxListener.close();
      unwatchOutbox();
      try {
        await agenda.stop(false);
      } catch (error) {
        log.warn({ err: error }, 'agenda did not stop cleanly (database unavailable?)'); // its job locks lapse by themselves
      }
      interruptAttempts(app);
      transcoding.abort();
      const deadline = new Promise((resolve) => setTimeout(resolve, lockLifetime).unref());
      await Promise.race([Promise.allSettled([...running]), deadline]);
    },
  };
}

/**
 * `run` now, or, when called while it runs, once more after it: never two at once, no call lost, a burst of calls
 * costing one more run. A failed run is logged by `run` itself; `stopped` ends the repeats.
 */
function coalesced(run: () => Promise<unknown>, stopped: () => boolean): () => void {
  let active = false;
  let again = false;
  const loop = async () => {
    active = true;
    do {
      again = false;
      await run().catch(() => undefined);
    } while (again && !stopped());
    active = false;
  };
  return () => {
    if (stopped()) return;
    if (active) again = true;
    else void loop();
  };
}
