import type { Logger } from 'pino';
import { migrate, openDatabase } from '../db/src/index.js';
import { fulfilChallengeOrder, revokeChallengeOrder } from '../subgraphs/challenges/index.js';
import { manualCheckout } from '../subgraphs/commerce/index.js';
import { fulfilCourseOrder, lessonVideoRule, revokeCourseOrder } from '../subgraphs/courses/index.js';
import { heldContentQueue } from '../subgraphs/engagement/index.js';
import { fulfilEventOrder, revokeEventOrder } from '../subgraphs/events/index.js';
import { idpKeySource } from '../subgraphs/identity/index.js';
import { type AppConfig, type AppDeps, type Clock, systemClock } from '../subgraphs/kernel/index.js';
import { watchPool } from '../subgraphs/kernel/metrics.js';
import { createLogger } from '../subgraphs/kernel/logging.js';
import { LocalDiskStorage, avatarMedia } from '../subgraphs/media/index.js';
import { grantConfiguredStaff, requireStaff } from '../subgraphs/platform/index.js';
import { closeWebhooks, createWebhookRuntime, type WebhookRuntimeOptions } from '../subgraphs/webhooks/index.js';

/** What tests and benchmarks may inject into the dependencies; every process of `npm start` takes the defaults. */
export interface DepsOptions {
  clock?: Clock;
  log?: Logger;
  /** Webhook delivery options (tests inject a DNS resolver). */
  webhooks?: WebhookRuntimeOptions;
}

/** The application's dependencies, and how to release what they hold (the webhook HTTP client, the database). */
export interface OpenDeps {
  deps: AppDeps;
  close(): Promise<void>;
}

/**
 * The composition root: opens the database, applies the migrations and builds the one `AppDeps` of this process.
 * Every entry point (the whole service, the web process, the worker, a subgraph alone) starts here.
 */
export async function openDeps(config: AppConfig, options: DepsOptions = {}): Promise<OpenDeps> {
  const log = options.log ?? createLogger(config.logLevel);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
  if (database.pool) watchPool(database.pool); // svc_db_pool_*, svc_db_statement_duration_seconds
  try {
    const applied = await migrate(database);
    if (applied.length) log.info({ applied }, 'migrations applied');
    const deps: AppDeps = {
      database,
      config,
      clock: options.clock ?? systemClock,
      log,
      checkout: manualCheckout,
      fulfilments: { course: fulfilCourseOrder, challenge: fulfilChallengeOrder, event: fulfilEventOrder },
      requirePlatformStaff: requireStaff,
      revocations: { course: revokeCourseOrder, challenge: revokeChallengeOrder, event: revokeEventOrder },
      idpKey: idpKeySource(config.idp),
      apiKeyUses: new Map(),
      webhooks: createWebhookRuntime(config, options.webhooks),
      heldContentQueue,
      mediaStorage: new LocalDiskStorage(config.media.dir),
      profileMedia: avatarMedia,
      lessonVideoAccess: lessonVideoRule,
    };
    // PLATFORM_ADMIN_EMAILS: idempotent, so every process may run it (one of them writes each grant).
    await grantConfiguredStaff(deps);
    return {
      deps,
      async close() {
        await closeWebhooks(deps);
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
