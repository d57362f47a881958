import { randomBytes } from 'node:crypto';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const subgraphUrls = z
  .string()
  .transform((raw, ctx) => {
    const out: Record<string, string> = {};
    for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
      const [name, url] = part.split('=');
      if (!name || !url || !/^https?:\/\//.test(url)) {
        ctx.addIssue({ code: 'custom', message: `expected name=http(s)://host:port/graphql, got "${part}"` });
        return z.NEVER;
      }
      out[name.trim()] = url.trim();
    }
    return out;
  });

/** Comma-separated host names or IP literals (IPv6 with or without brackets), lower-cased. */
const hostList = z.string().transform((raw, ctx) => {
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1')).filter(Boolean);
  for (const h of hosts) {
    if (!/^[a-z0-9.:_-]{1,253}$/.test(h)) {
      ctx.addIssue({ code: 'custom', message: `expected comma-separated host names or IP addresses, got "${h}"` });
      return z.NEVER;
    }
  }
  return hosts;
});

/**
 * A Standard Webhooks / Svix signing secret: `whsec_` then the key in base64, 24 to 64 bytes (the Standard Webhooks
 * specification's range; Svix's secrets are 24 bytes).
 */
const standardWebhookSecret = z
  .string()
  .trim()
  .refine((v) => {
    const key = v.startsWith('whsec_') ? v.slice(6) : '';
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || key.length % 4 !== 0) return false;
    const bytes = Buffer.from(key, 'base64').length;
    return bytes >= 24 && bytes <= 64;
  }, 'must be whsec_ followed by a base64 key of 24 to 64 bytes (the signing secret the identity provider shows)');

/** Comma-separated email addresses, trimmed and lower-cased, duplicates removed. */
const emailList = z.string().transform((raw, ctx) => {
  const emails = [...new Set(raw.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean))];
  for (const e of emails) {
    if (!z.email().safeParse(e).success) {
      ctx.addIssue({ code: 'custom', message: `expected comma-separated email addresses, got "${e}"` });
      return z.NEVER;
    }
  }
  return emails;
});

/** Argon2id's cost for passwords (subgraphs/identity/passwords.ts), one lane. */
export interface PasswordHashing {
  memoryKib: number;
  iterations: number;
}

/** OWASP's minimum for argon2id (19 MiB, 2 iterations, one lane): the defaults, and production's floor. */
export const OWASP_ARGON2ID: Readonly<PasswordHashing> = { memoryKib: 19_456, iterations: 2 };

const schema = z
  .object({
    PORT: int(0, 65535).default(4000),
    HOST: z.string().min(1).default('0.0.0.0'),
    METRICS_PORT: int(0, 65535).optional(),
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
    // OpenTelemetry traces (kernel/tracing.ts): on when an OTLP endpoint is set. The SDK reads the other standard
    // OTEL_* variables itself (sampler, protocol, batch delays, propagators, resource attributes).
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    OTEL_SERVICE_NAME: z.string().min(1).optional(),
    OTEL_SDK_DISABLED: z.string().optional(),
    OTEL_TRACES_EXPORTER: z.string().optional(),
    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres://').optional(),
    DATA_DIR: z.string().min(1).default('./data'),
    DATABASE_POOL_SIZE: int(1, 200).default(10),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    COOKIE_SECURE: bool.default(true),
    SESSION_TTL_HOURS: int(1, 24 * 365).default(24 * 30),
    JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    JWT_SECRET_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional(),
    REFRESH_TOKEN_TTL_DAYS: int(1, 365).default(30),
    IDP_JWT_PUBLIC_KEY: z.string().includes('BEGIN PUBLIC KEY', { message: 'must be a PEM public key' }).optional(),
    IDP_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
    IDP_ISSUER: z.string().optional(),
    IDP_AUDIENCE: z.string().optional(),
    IDP_WEBHOOK_SECRET: standardWebhookSecret.optional(),
    IDP_WEBHOOK_SECRET_PREVIOUS: standardWebhookSecret.optional(),
    SUBGRAPH_URLS: subgraphUrls.optional(),
    INTERNAL_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    INTERNAL_SECRET_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional(),
    SUBGRAPH_TIMEOUT_MS: int(100, 300_000).default(10_000),
    SUBGRAPH_DEDUPLICATE_INFLIGHT: bool.default(true),
    BODY_LIMIT_BYTES: int(1024, 10 * 1024 * 1024).default(100 * 1024),
    HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000).default(10_000),
    HTTP_REQUEST_TIMEOUT_MS: int(100, 3_600_000).default(30_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100, 3_600_000).default(5_000),
    HTTP_MAX_HEADER_BYTES: int(1024, 1024 * 1024).default(16 * 1024),
    SEARCH_TIMEOUT_MS: int(1, 60_000).default(2_000),
    SEARCH_FALLBACK_CANDIDATES: int(100, 1_000_000).default(5_000),
    SEARCH_FALLBACK_TIMEOUT_MS: int(1, 60_000).default(2_000),
    HTTP_CHECK_INTERVAL_MS: int(50, 60_000).default(1_000),
    SHUTDOWN_GRACE_MS: int(0, 600_000).default(8_000),
    RATE_LIMIT_ENABLED: bool.default(true),
    RATE_LIMIT_PER_MINUTE: int(1, 1_000_000_000).default(120),
    RATE_LIMIT_REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').optional(),
    API_KEYS_PER_TRIBE: int(1, 10_000).default(10),
    GRAPHQL_COST_MAX_USER: int(1, 1_000_000_000).default(20_000),
    GRAPHQL_COST_RESTORE_USER: int(1, 1_000_000_000).default(1_000),
    GRAPHQL_COST_MAX_ANONYMOUS: int(1, 1_000_000_000).default(5_000),
    GRAPHQL_COST_RESTORE_ANONYMOUS: int(1, 1_000_000_000).default(100),
    STRIPE_WEBHOOK_SECRET: z.string().trim().min(16, 'must be the endpoint signing secret (whsec_...)').optional(),
    STRIPE_WEBHOOK_SECRET_PREVIOUS: z.string().trim().min(16, 'must be the endpoint signing secret (whsec_...)').optional(),
    WORKER_ENABLED: bool.default(true),
    WORKER_POLL_INTERVAL_MS: int(50, 3_600_000).default(5000),
    WORKER_LOCK_LIFETIME_MS: int(500, 24 * 3_600_000).default(120_000),
    WEBHOOK_DRAIN_INTERVAL_MS: int(100, 24 * 3_600_000).default(300_000),
    WEBHOOK_FANOUT_INTERVAL_MS: int(100, 24 * 3_600_000).default(10_000),
    WEBHOOK_BATCH_SIZE: int(1, 10_000).default(50),
    WEBHOOK_TIMEOUT_MS: int(100, 60_000).default(10_000),
    WEBHOOK_ALLOWED_PRIVATE_HOSTS: hostList.default([]),
    WEBHOOK_ENDPOINTS_PER_TRIBE: int(1, 10_000).default(16),
    WEBHOOK_TEST_PINGS_PER_MINUTE: int(1, 10_000).default(10),
    NOTIFICATIONS_INTERVAL_MS: int(100, 24 * 3_600_000).default(10_000),
    EVENT_REMINDER_INTERVAL_MS: int(100, 24 * 3_600_000).default(300_000),
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    GRAPHQL_INTROSPECTION: bool.optional(),
    GRAPHQL_PERSISTED_ONLY: bool.default(false),
    GRAPHQL_EXPLORER: bool.optional(),
    SMTP_URL: z.string().regex(/^smtps?:\/\/[^\s]+$/, 'must be smtp://[user:pass@]host[:port] or smtps://...').optional(),
    MAIL_FROM: z.string().trim().min(3).max(320).regex(/@/, 'must contain an address, e.g. "Tribes <no-reply@example.com>"').default('Tribes <no-reply@localhost>'),
    PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
    MAIL_SEND_INTERVAL_MS: int(100, 24 * 3_600_000).default(10_000),
    MAIL_BATCH_SIZE: int(1, 10_000).default(50),
    MAIL_TIMEOUT_MS: int(100, 120_000).default(20_000),
    DIGEST_INTERVAL_MS: int(1_000, 7 * 24 * 3_600_000).default(24 * 3_600_000),
    POSTING_RATE_LIMIT_PER_MINUTE: int(1, 1_000_000).default(30),
    SIGN_IN_WINDOW_SECONDS: int(1, 24 * 3600).default(900),
    SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS: int(1, 1_000_000).default(5),
    SIGN_IN_FAILURES_PER_ACCOUNT: int(1, 1_000_000).default(20),
    SIGN_IN_FAILURES_PER_ADDRESS: int(1, 1_000_000).default(50),
    NEW_MEMBER_POST_LIMIT: int(0, 1_000).default(3),
    PASSWORD_HASH_MEMORY_KIB: int(8, 4_194_304).default(OWASP_ARGON2ID.memoryKib),
    PASSWORD_HASH_ITERATIONS: int(1, 100).default(OWASP_ARGON2ID.iterations),
    SUPPORT_OPEN_TICKETS_PER_USER: int(1, 10_000).default(10),
    SUPPORT_TICKETS_PER_HOUR: int(1, 10_000).default(5),
    PLATFORM_ADMIN_EMAILS: emailList.default([]),
    PLATFORM_FEE_BPS: int(0, 10_000).default(500),
    PAYOUT_HOLD_DAYS: int(0, 365).default(7),
    MEDIA_DIR: z.string().min(1).default('./data/media'),
    MEDIA_MAX_IMAGE_MB: int(1, 1_000).default(10),
    MEDIA_MAX_VIDEO_MB: int(1, 100_000).default(500),
    MEDIA_URL_TTL_SECONDS: int(60, 7 * 24 * 3600).default(3600),
    MEDIA_UPLOADS_PER_MINUTE: int(1, 1_000_000).default(20),
    MEDIA_DAILY_UPLOAD_MB: int(1, 100_000_000).default(2048),
    MEDIA_IMAGE_CONCURRENCY: int(1, 64).default(1),
    MEDIA_VIDEO_CONCURRENCY: int(1, 64).default(1),
    FFMPEG_PATH: z.string().min(1).default('ffmpeg'),
    VIDEO_TRANSCODE_INTERVAL_MS: int(50, 3_600_000).default(5000),
    VIDEO_TRANSCODE_TIMEOUT_MS: int(1000, 24 * 3_600_000).default(3_600_000),
    VIDEO_TRANSCODE_LEASE_MS: int(300, 3_600_000).default(60_000),
    VIDEO_TRANSCODE_MAX_ATTEMPTS: int(1, 100).default(3),
    VIDEO_HLS_SEGMENT_SECONDS: int(1, 60).default(4),
    VIDEO_X264_PRESET: z.enum(['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow']).default('veryfast'),
  })
  .superRefine((c, ctx) => {
    if (c.WORKER_ENABLED && c.WORKER_LOCK_LIFETIME_MS <= c.WEBHOOK_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['WORKER_LOCK_LIFETIME_MS'], message: 'must be longer than WEBHOOK_TIMEOUT_MS (a drain holds its lock while it sends)' });
    }
    if (c.HTTP_HEADERS_TIMEOUT_MS > c.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: 'custom', path: ['HTTP_HEADERS_TIMEOUT_MS'], message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS' });
    }
    if (c.NODE_ENV === 'production' && c.PASSWORD_HASH_MEMORY_KIB < OWASP_ARGON2ID.memoryKib) {
      ctx.addIssue({ code: 'custom', path: ['PASSWORD_HASH_MEMORY_KIB'], message: `must be at least ${OWASP_ARGON2ID.memoryKib} in production (OWASP's minimum for argon2id)` });
    }
    if (c.NODE_ENV === 'production' && c.PASSWORD_HASH_ITERATIONS < OWASP_ARGON2ID.iterations) {
      ctx.addIssue({ code: 'custom', path: ['PASSWORD_HASH_ITERATIONS'], message: `must be at least ${OWASP_ARGON2ID.iterations} in production (OWASP's minimum for argon2id)` });
    }
    if (c.SUBGRAPH_URLS && !c.INTERNAL_SECRET) {
      ctx.addIssue({ code: 'custom', path: ['INTERNAL_SECRET'], message: 'is required when SUBGRAPH_URLS is set' });
    }
  });

type Env = z.output<typeof schema>;

/** The validated, frozen configuration of one process. */
export interface AppConfig {
  port: number;
  host: string;
  /** The Prometheus endpoint `GET /metrics` on its own port: `METRICS_PORT` (unset: none), `METRICS_HOST` (127.0.0.1). */
  metrics: { port?: number; host: string };
  /**
   * OpenTelemetry traces: `enabled` when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set
   * (and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`); `serviceName`: `OTEL_SERVICE_NAME`, else each
   * process kind names itself (`svc`, `svc-web`, `svc-worker`, `svc-subgraph-<name>`).
   */
  tracing: { enabled: boolean; serviceName?: string };
  databaseUrl?: string;
  dataDir: string;
  databasePoolSize: number;
  logLevel: Env['LOG_LEVEL'];
  cookieSecure: boolean;
  sessionTtlHours: number;
  /** Secret for resource-API access tokens (HS256). Random per process when not configured. */
  jwtSecret: string;
  jwtSecretGenerated: boolean;
  /**
   * `JWT_SECRET_PREVIOUS`, during a rotation: what was signed with it (access tokens, media URLs, cursors, unsubscribe
   * links) is still accepted; everything new is signed with `jwtSecret`. See docs/operations.md › Rotating secrets.
   */
  jwtSecretPrevious?: string;
  refreshTokenTtlDays: number;
  /**
   * The identity provider: `__session` tokens (`IDP_JWT_PUBLIC_KEY` or `IDP_JWKS_URL`, `IDP_ISSUER`, `IDP_AUDIENCE`) and
   * its inbound webhooks `POST /webhooks/identity` (`IDP_WEBHOOK_SECRET`, `whsec_...`; unset: 503
   * `identity_webhooks_not_configured`), with `IDP_WEBHOOK_SECRET_PREVIOUS` still accepted during a rotation.
   */
  idp: { publicKeyPem?: string; jwksUrl?: string; issuer?: string; audience?: string; webhookSecret?: string; webhookSecretPrevious?: string };
  subgraphUrls?: Record<string, string>;
  internalSecret?: string;
  /** `INTERNAL_SECRET_PREVIOUS`, during a rotation: a subgraph also accepts it (header and caller-assertion key). */
  internalSecretPrevious?: string;
  /** Limit on one gateway→subgraph call with `SUBGRAPH_URLS` (then `SERVICE_UNAVAILABLE`). */
  subgraphTimeoutMs: number;
  /**
   * `SUBGRAPH_DEDUPLICATE_INFLIGHT` (default true), with `SUBGRAPH_URLS`: an identical query fetch (same subgraph,
   * document and variables) for the same caller (user, session, API key, client address) while one is in flight
   * shares its answer instead of calling the subgraph again; never across callers, never a mutation.
   */
  subgraphDeduplicateInflight: boolean;
  bodyLimitBytes: number;
  http: HttpServerConfig;
  /** How long a SIGTERM waits for in-flight requests before it cuts the remaining connections. */
  shutdownGraceMs: number;
  /**
   * Full-text search: a ranked search that runs longer than `timeoutMs` (a word found in a large share of the posts)
   * is run again over at most `fallbackCandidates` matching posts and as many comments, so its cost stays bounded.
   */
  search: { timeoutMs: number; fallbackCandidates: number; fallbackTimeoutMs: number };
  worker: WorkerConfig;
  webhooks: WebhookConfig;
  /** In-app notifications (subgraphs/engagement/notifications.jobs.ts): how often their jobs run. */
  notifications: { consumeIntervalMs: number; reminderIntervalMs: number };
  /**
   * Platform API rate limit per key, in a fixed 60-second window. `enabled: false` exists for benchmarks
   * only (it measures the limiter's cost); `redisUrl` shares one counter across processes. `keysPerTribe`
   * (`API_KEYS_PER_TRIBE`, 10): live keys one tribe may hold, so that it cannot multiply its budget by minting keys.
   */
  rateLimit: { enabled: boolean; perMinute: number; redisUrl?: string; keysPerTribe: number };
  /**
   * GraphQL rate limit by cost (gateway/src/cost-limit.ts): a bucket per signed-in user (`GRAPHQL_COST_MAX_USER`
   * 20,000 points, restored at `GRAPHQL_COST_RESTORE_USER` 1,000 a second) or per client address when anonymous
   * (`GRAPHQL_COST_MAX_ANONYMOUS` 5,000, `GRAPHQL_COST_RESTORE_ANONYMOUS` 100 a second), each operation charged its
   * estimated cost; shared across processes through `rateLimit.redisUrl` when set, else per process.
   */
  graphqlCost: { user: CostBudgetConfig; anonymous: CostBudgetConfig };
  /** Inbound payment-provider webhooks; a provider whose secret is unset answers 503 payments_not_configured. */
  payments: { stripeWebhookSecret?: string; stripeWebhookSecretPrevious?: string };
  /** `NODE_ENV`: `production` hides the GraphQL schema from clients unless `graphql.introspection` says otherwise. */
  nodeEnv: Env['NODE_ENV'];
  graphql: GraphqlConfig;
  /** Where users reach the service: links in mail (`PUBLIC_URL`, else `http://<HOST or localhost>:<PORT>`), no trailing slash. */
  publicUrl: string;
  mail: MailConfig;
  /**
   * `POSTING_RATE_LIMIT_PER_MINUTE`: posts and comments one user may create in any 60 seconds, across tribes and
   * processes (default 30); past it, RATE_LIMITED (GraphQL) or 429 with `Retry-After` (resource API).
   */
  posting: { perMinute: number };
  /**
   * Sign-in throttling (subgraphs/identity/sign-in-throttle.ts), counted in fixed windows of `SIGN_IN_WINDOW_SECONDS`
   * (900): attempts that do not prove a password, per account from one address (`SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS`,
   * 5), per account from every address (`SIGN_IN_FAILURES_PER_ACCOUNT`, 20: past it, each address gets one failure on
   * the account instead of 5) and per address (`SIGN_IN_FAILURES_PER_ADDRESS`, 50, reset-link guesses included). Past
   * a limit, `too_many_attempts` (429 with `Retry-After`, RATE_LIMITED on GraphQL).
   */
  signIn: { windowSeconds: number; perAccountAddress: number; perAccount: number; perAddress: number };
  /**
   * Argon2id's cost for passwords: `PASSWORD_HASH_MEMORY_KIB` (19,456 KiB) and `PASSWORD_HASH_ITERATIONS` (2), OWASP's
   * minimum, below which `NODE_ENV=production` does not start. Each hash carries its parameters: changing them
   * re-hashes nothing, and older hashes still verify.
   */
  passwordHashing: PasswordHashing;
  /** `NEW_MEMBER_POST_LIMIT`: the automod `newMemberPostLimit` of a tribe that never set its own (default 3). */
  automod: { newMemberPostLimit: number };
  /**
   * Support tickets per user: `SUPPORT_OPEN_TICKETS_PER_USER` (10) not yet resolved or closed (past it, CONFLICT
   * `open_ticket_limit`), and `SUPPORT_TICKETS_PER_HOUR` (5) opened in any 60 minutes (past it, RATE_LIMITED
   * `support_ticket_rate_limited` with `Retry-After`). Counted under a per-user lock in the writing transaction.
   */
  support: { openTicketsPerUser: number; ticketsPerHour: number };
  /** `PLATFORM_ADMIN_EMAILS`: the accounts granted platform staff at start-up (lower case). */
  platformAdminEmails: readonly string[];
  /**
   * The wallet (docs/wallet.md): `PLATFORM_FEE_BPS`, the platform's fee on a paid order in basis points (default 500 =
   * 5%, rounded half up), and `PAYOUT_HOLD_DAYS`, how long a paid order's funds stay pending (default 7).
   */
  wallet: { platformFeeBps: number; payoutHoldDays: number };
  /**
   * Uploads (docs/media.md): `MEDIA_DIR`, the local store's folder (default `./data/media`); `MEDIA_MAX_IMAGE_MB` (10) and
   * `MEDIA_MAX_VIDEO_MB` (500), the largest upload of each family; `MEDIA_URL_TTL_SECONDS` (3600), how long a signed URL
   * of a private tribe's media stays valid. Upload limits (subgraphs/media/upload-limits.ts): `MEDIA_UPLOADS_PER_MINUTE`
   * (20) uploads one user may start in any 60 seconds and `MEDIA_DAILY_UPLOAD_MB` (2048) bytes one user may have written
   * in any 24 hours (past either, RATE_LIMITED / 429 with `Retry-After`); `MEDIA_IMAGE_CONCURRENCY` (1) images and
   * `MEDIA_VIDEO_CONCURRENCY` (1) videos one process decodes at once (the others queue).
   */
  media: {
    dir: string;
    maxImageBytes: number;
    maxVideoBytes: number;
    urlTtlSeconds: number;
    uploadsPerMinute: number;
    dailyUploadBytes: number;
    imageConcurrency: number;
    videoConcurrency: number;
  };
  /**
   * Video lessons (docs/media.md, "Video lessons"): `FFMPEG_PATH` (default `ffmpeg` on the PATH; ffprobe beside it);
   * the `media.transcode` job every `VIDEO_TRANSCODE_INTERVAL_MS` (5000); one video's ffmpeg killed after
   * `VIDEO_TRANSCODE_TIMEOUT_MS` (1 h, then FAILED); a claim's lease `VIDEO_TRANSCODE_LEASE_MS` (60 s, renewed while
   * ffmpeg runs: how long a killed worker's video waits); `VIDEO_TRANSCODE_MAX_ATTEMPTS` (3) claims before FAILED;
   * `VIDEO_HLS_SEGMENT_SECONDS` (4) and `VIDEO_X264_PRESET` (veryfast).
   */
  video: { ffmpegPath: string; intervalMs: number; timeoutMs: number; leaseMs: number; maxAttempts: number; segmentSeconds: number; preset: string };
}

/** Outgoing mail (subgraphs/mail/). Without `smtpUrl`, queued mail is logged (subject and recipient) and kept. */
export interface MailConfig {
  /** `SMTP_URL`: smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps:// (TLS from the start). */
  smtpUrl?: string;
  /** `MAIL_FROM`: the From header of every mail. */
  from: string;
  /** How often the `mail.send` job sends due mail. */
  sendIntervalMs: number;
  /** Mails claimed per send cycle. */
  batchSize: number;
  /** Limit on one SMTP conversation (connect, greeting, send). */
  timeoutMs: number;
  /** How often the `mail.digest` job runs (daily by default); each user gets at most one digest per UTC day. */
  digestIntervalMs: number;
}

/** One GraphQL cost bucket: at most `maximumAvailable` points, `restoreRate` of them restored every second. */
export interface CostBudgetConfig {
  maximumAvailable: number;
  restoreRate: number;
}

/** The public GraphQL endpoint `/graphql`. */
export interface GraphqlConfig {
  /** Introspection and "Did you mean" suggestions: `GRAPHQL_INTROSPECTION`, else on except in production. */
  introspection: boolean;
  /** Only operations of the committed manifest (`gateway/persisted-operations.json`) run. */
  persistedOnly: boolean;
  /** GraphiQL at `GET /graphql` for a browser: `GRAPHQL_EXPLORER`, else on except in production. */
  explorer: boolean;
}

/** Limits of the HTTP server against slow or greedy clients (Node's `http.createServer` options). */
export interface HttpServerConfig {
  /** Time to receive a request's whole header block (then 408 and close). */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (then 408 and close). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (raise it above a load balancer's idle timeout). */
  keepAliveTimeoutMs: number;
  /** Largest header block accepted (431 beyond). */
  maxHeaderBytes: number;
  /** How often the two timeouts are checked, so they bite within this much of their value. */
  checkIntervalMs: number;
}

/** The background worker (Agenda) of this process. */
export interface WorkerConfig {
  /** Start the worker inside `npm start`'s process. */
  enabled: boolean;
  /** How often Agenda looks for due jobs. */
  pollIntervalMs: number;
  /** How long a job run holds its lock before another worker may take the job over. */
  lockLifetimeMs: number;
}

/** Outbound webhook delivery. Defaults are the spec's: drain every 5 minutes, 50 a batch, 10 s per attempt. */
export interface WebhookConfig {
  drainIntervalMs: number;
  /** How often outbox events become deliveries (the drain also fans out first). */
  fanoutIntervalMs: number;
  batchSize: number;
  /** Limit on one whole attempt: connect, TLS, request, response. */
  timeoutMs: number;
  /** Hosts or IPs that may be loopback or private (tests, local development). Empty by default. */
  allowedPrivateHosts: readonly string[];
  /** `WEBHOOK_ENDPOINTS_PER_TRIBE` (16, Stripe's number): endpoints one tribe may have; past it, CONFLICT `webhook_endpoint_limit`. */
  endpointsPerTribe: number;
  /** `WEBHOOK_TEST_PINGS_PER_MINUTE` (10): test pings of one tribe's endpoints in any 60 seconds; past it, RATE_LIMITED `webhook_test_rate_limited`. */
  testPingsPerMinute: number;
}

export class ConfigError extends Error {}

/** Parses `env`; throws one `ConfigError` naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    metrics: Object.freeze({ port: e.METRICS_PORT, host: e.METRICS_HOST }),
    tracing: Object.freeze({
      enabled:
        !!(e.OTEL_EXPORTER_OTLP_ENDPOINT || e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
        !/^\s*true\s*$/i.test(e.OTEL_SDK_DISABLED ?? '') &&
        !(e.OTEL_TRACES_EXPORTER ?? '').split(',').map((x) => x.trim()).includes('none'),
      serviceName: e.OTEL_SERVICE_NAME,
    }),
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    logLevel: e.LOG_LEVEL,
    cookieSecure: e.COOKIE_SECURE,
    sessionTtlHours: e.SESSION_TTL_HOURS,
    jwtSecret: e.JWT_SECRET ?? randomBytes(32).toString('base64url'),
    jwtSecretGenerated: !e.JWT_SECRET,
    jwtSecretPrevious: e.JWT_SECRET_PREVIOUS,
    refreshTokenTtlDays: e.REFRESH_TOKEN_TTL_DAYS,
    idp: {
      publicKeyPem: e.IDP_JWT_PUBLIC_KEY,
      jwksUrl: e.IDP_JWKS_URL,
      issuer: e.IDP_ISSUER,
      audience: e.IDP_AUDIENCE,
      webhookSecret: e.IDP_WEBHOOK_SECRET,
      webhookSecretPrevious: e.IDP_WEBHOOK_SECRET_PREVIOUS,
    },
    subgraphUrls: e.SUBGRAPH_URLS,
    internalSecret: e.INTERNAL_SECRET,
    internalSecretPrevious: e.INTERNAL_SECRET_PREVIOUS,
    subgraphTimeoutMs: e.SUBGRAPH_TIMEOUT_MS,
    subgraphDeduplicateInflight: e.SUBGRAPH_DEDUPLICATE_INFLIGHT,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    http: Object.freeze({
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxHeaderBytes: e.HTTP_MAX_HEADER_BYTES,
      checkIntervalMs: e.HTTP_CHECK_INTERVAL_MS,
    }),
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    search: Object.freeze({ timeoutMs: e.SEARCH_TIMEOUT_MS, fallbackCandidates: e.SEARCH_FALLBACK_CANDIDATES, fallbackTimeoutMs: e.SEARCH_FALLBACK_TIMEOUT_MS }),
    worker: Object.freeze({ enabled: e.WORKER_ENABLED, pollIntervalMs: e.WORKER_POLL_INTERVAL_MS, lockLifetimeMs: e.WORKER_LOCK_LIFETIME_MS }),
    webhooks: Object.freeze({
      drainIntervalMs: e.WEBHOOK_DRAIN_INTERVAL_MS,
      fanoutIntervalMs: e.WEBHOOK_FANOUT_INTERVAL_MS,
      batchSize: e.WEBHOOK_BATCH_SIZE,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      allowedPrivateHosts: Object.freeze([...e.WEBHOOK_ALLOWED_PRIVATE_HOSTS]),
      endpointsPerTribe: e.WEBHOOK_ENDPOINTS_PER_TRIBE,
      testPingsPerMinute: e.WEBHOOK_TEST_PINGS_PER_MINUTE,
    }),
    notifications: Object.freeze({ consumeIntervalMs: e.NOTIFICATIONS_INTERVAL_MS, reminderIntervalMs: e.EVENT_REMINDER_INTERVAL_MS }),
    rateLimit: Object.freeze({ enabled: e.RATE_LIMIT_ENABLED, perMinute: e.RATE_LIMIT_PER_MINUTE, redisUrl: e.RATE_LIMIT_REDIS_URL, keysPerTribe: e.API_KEYS_PER_TRIBE }),
    graphqlCost: Object.freeze({
      user: Object.freeze({ maximumAvailable: e.GRAPHQL_COST_MAX_USER, restoreRate: e.GRAPHQL_COST_RESTORE_USER }),
      anonymous: Object.freeze({ maximumAvailable: e.GRAPHQL_COST_MAX_ANONYMOUS, restoreRate: e.GRAPHQL_COST_RESTORE_ANONYMOUS }),
    }),
    payments: Object.freeze({ stripeWebhookSecret: e.STRIPE_WEBHOOK_SECRET, stripeWebhookSecretPrevious: e.STRIPE_WEBHOOK_SECRET_PREVIOUS }),
    nodeEnv: e.NODE_ENV,
    graphql: Object.freeze({
      introspection: e.GRAPHQL_INTROSPECTION ?? e.NODE_ENV !== 'production',
      persistedOnly: e.GRAPHQL_PERSISTED_ONLY,
      explorer: e.GRAPHQL_EXPLORER ?? e.NODE_ENV !== 'production',
    }),
    publicUrl: (e.PUBLIC_URL ?? `http://${defaultPublicHost(e.HOST)}:${e.PORT}`).replace(/\/+$/, ''),
    mail: Object.freeze({
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM,
      sendIntervalMs: e.MAIL_SEND_INTERVAL_MS,
      batchSize: e.MAIL_BATCH_SIZE,
      timeoutMs: e.MAIL_TIMEOUT_MS,
      digestIntervalMs: e.DIGEST_INTERVAL_MS,
    }),
    posting: Object.freeze({ perMinute: e.POSTING_RATE_LIMIT_PER_MINUTE }),
    signIn: Object.freeze({
      windowSeconds: e.SIGN_IN_WINDOW_SECONDS,
      perAccountAddress: e.SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS,
      perAccount: e.SIGN_IN_FAILURES_PER_ACCOUNT,
      perAddress: e.SIGN_IN_FAILURES_PER_ADDRESS,
    }),
    passwordHashing: Object.freeze({ memoryKib: e.PASSWORD_HASH_MEMORY_KIB, iterations: e.PASSWORD_HASH_ITERATIONS }),
    automod: Object.freeze({ newMemberPostLimit: e.NEW_MEMBER_POST_LIMIT }),
    support: Object.freeze({ openTicketsPerUser: e.SUPPORT_OPEN_TICKETS_PER_USER, ticketsPerHour: e.SUPPORT_TICKETS_PER_HOUR }),
    platformAdminEmails: Object.freeze([...e.PLATFORM_ADMIN_EMAILS]),
    wallet: Object.freeze({ platformFeeBps: e.PLATFORM_FEE_BPS, payoutHoldDays: e.PAYOUT_HOLD_DAYS }),
    media: Object.freeze({
      dir: e.MEDIA_DIR,
      maxImageBytes: e.MEDIA_MAX_IMAGE_MB * 1024 * 1024,
      maxVideoBytes: e.MEDIA_MAX_VIDEO_MB * 1024 * 1024,
      urlTtlSeconds: e.MEDIA_URL_TTL_SECONDS,
      uploadsPerMinute: e.MEDIA_UPLOADS_PER_MINUTE,
      dailyUploadBytes: e.MEDIA_DAILY_UPLOAD_MB * 1024 * 1024,
      imageConcurrency: e.MEDIA_IMAGE_CONCURRENCY,
      videoConcurrency: e.MEDIA_VIDEO_CONCURRENCY,
    }),
    video: Object.freeze({
      ffmpegPath: e.FFMPEG_PATH,
      intervalMs: e.VIDEO_TRANSCODE_INTERVAL_MS,
      timeoutMs: e.VIDEO_TRANSCODE_TIMEOUT_MS,
      leaseMs: e.VIDEO_TRANSCODE_LEASE_MS,
      maxAttempts: e.VIDEO_TRANSCODE_MAX_ATTEMPTS,
      segmentSeconds: e.VIDEO_HLS_SEGMENT_SECONDS,
      preset: e.VIDEO_X264_PRESET,
    }),
  });
}

/** The host of the default public URL: a wildcard listening address is reached as localhost. */
const defaultPublicHost = (host: string): string =>
  host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;

/**
 * The secrets a verifier accepts during a rotation: the current one first (everything new is signed with it), then
 * the previous one when it is set and differs.
 */
export function acceptedSecrets(current: string, previous?: string): string[] {
  return previous && previous !== current ? [current, previous] : [current];
}
