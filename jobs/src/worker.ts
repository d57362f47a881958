import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda, type Job } from 'agenda';
import { AGENDA_JOBS_TABLE } from '../../db/src/code-migrations.js';
import type { AppDeps } from '../../subgraphs/kernel/index.js';
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
  const track = (name: string, run: () => Promise<unknown>) => async (_job: Job) => {
    const p = run();
    running.add(p);
    try {
      const result = await p;
      log.debug({ job: name, result }, 'job done');
    } catch (error) {
      log.error({ err: error, job: name }, 'job failed');
      throw error;
    } finally {
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

  await agenda.start();
  await agenda.every(config.webhooks.fanoutIntervalMs, JOB_WEBHOOKS_FANOUT);
  await agenda.every(config.webhooks.drainIntervalMs, JOB_WEBHOOKS_DRAIN);
  await agenda.every(config.notifications.consumeIntervalMs, JOB_NOTIFICATIONS_CONSUME);
  await agenda.every(config.notifications.reminderIntervalMs, JOB_EVENT_REMINDERS);
  await agenda.every(config.mail.sendIntervalMs, JOB_MAIL_SEND);
  await agenda.every(config.mail.digestIntervalMs, JOB_MAIL_DIGEST);
  await agenda.every(config.video.intervalMs, JOB_MEDIA_TRANSCODE);
  if (!config.mail.smtpUrl) log.warn('SMTP_URL is not set: mail is logged (subject and recipient) and kept in mail_outbox, not sent');
  log.info(
    { drainIntervalMs: config.webhooks.drainIntervalMs, fanoutIntervalMs: config.webhooks.fanoutIntervalMs, batchSize: config.webhooks.batchSize },
    'worker started',
  );

  return {
    agenda,
    async stop() {
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
