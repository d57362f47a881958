// The mail outbox and its sender on the real PostgreSQL, with a real SMTP server in this process: mail queued in a
// transaction is sent with its recipient, subject and headers; a refused mail is retried after the backoff (by the
// injectable clock) and given up after the sixth failure; two senders never send one mail twice; the Agenda worker
// sends on its own; without SMTP_URL, mail is kept in mail_outbox and only its subject and recipient are logged.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import request from 'supertest';
import { JOB_MAIL_DIGEST, JOB_MAIL_SEND } from '../jobs/src/worker.js';
import { createService } from '../server/service.js';
import { MAIL_MAX_ATTEMPTS, enqueueMail, sendQueuedMail, type OutgoingMail } from '../subgraphs/mail/index.js';
import { signupUser, unique } from './factory.js';
import { SmtpSink, tokenIn } from './smtp.js';
import { ConfigError, loadConfig } from '../subgraphs/kernel/index.js';
import { ManualClock, gql, ok, sqlRows, startService, testConfig, waitFor, type TestService } from './support.js';

const MAIL_FROM = 'Tribes <no-reply@tribes.example>';
const address = () => `mail_${unique()}@example.com`;

/** The outbox row of the only mail to `to`. */
const rowTo = async (t: TestService, to: string) => {
  const rows = await sqlRows(
    t,
    sql`select kind, status, attempts, last_error, next_attempt_at, sent_at, text_body, headers from mail_outbox where to_address = ${to}`,
  );
  expect(rows).toHaveLength(1);
  return rows[0];
};

describe('mail outbox', () => {
  let t: TestService;
  let sink: SmtpSink;
  const clock = new ManualClock();
  const queue = (mail: Partial<OutgoingMail> & { to: string }) =>
    t.deps.database.db.transaction((tx) => enqueueMail(tx, { kind: 'digest', subject: 'Hello there', text: 'Body text\n', now: clock.current, ...mail }));

  beforeAll(async () => {
    sink = await new SmtpSink().start();
    t = await startService({ SMTP_URL: sink.url, MAIL_FROM, PUBLIC_URL: 'https://tribes.example' }, clock.clock);
  });
  afterAll(async () => {
    await t?.stop();
    await sink?.stop();
  });

  describe('sendQueuedMail (the mail.send job)', () => {
    it('sends a queued mail through SMTP_URL with its recipient, subject, From and headers, then erases its body', async () => {
      const to = address();
      const unsubscribe = 'https://tribes.example/unsubscribe?token=abc.def';
      await queue({ to, subject: 'Your digest', text: 'Line one\nLine two\n', unsubscribeUrl: unsubscribe, headers: { 'X-Tribes-Test': 'yes' } });
      expect(await rowTo(t, to)).toMatchObject({ status: 'pending', attempts: 0, text_body: 'Line one\nLine two\n' });

      const result = await sendQueuedMail(t.deps);
      expect(result).toMatchObject({ sent: expect.any(Number), retrying: 0, failed: 0 });
      const [mail] = sink.to(to);
      expect(mail.to).toEqual([to]);
      expect(mail.from).toBe('no-reply@tribes.example');
      expect(mail.subject).toBe('Your digest');
      expect(mail.text.replace(/\r\n/g, '\n')).toBe('Line one\nLine two\n');
      expect(mail.headers).toMatchObject({
        from: MAIL_FROM,
        to,
        'list-unsubscribe': `<${unsubscribe}>`,
        'list-unsubscribe-post': 'List-Unsubscribe=One-Click',
        'auto-submitted': 'auto-generated',
        'x-tribes-test': 'yes',
      });
      const row = await rowTo(t, to);
      expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null, text_body: null });
      expect(new Date(row.sent_at).getTime()).toBe(clock.current.getTime());
      expect(sink.to(to)).toHaveLength(1);
      await sendQueuedMail(t.deps);
      expect(sink.to(to)).toHaveLength(1); // sent once
    });

    it('queues nothing when the transaction that queued the mail rolls back', async () => {
      const to = address();
      await expect(
        t.deps.database.db.transaction(async (tx) => {
          await enqueueMail(tx, { kind: 'digest', to, subject: 'never', text: 'never' });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await sendQueuedMail(t.deps);
      expect(await sqlRows(t, sql`select id from mail_outbox where to_address = ${to}`)).toEqual([]);
      expect(sink.to(to)).toEqual([]);
    });

    it('queues one mail per dedupe key', async () => {
      const to = address();
      const key = `test:${unique()}`;
      expect(await queue({ to, dedupeKey: key })).toEqual(expect.any(String));
      expect(await queue({ to, dedupeKey: key })).toBeNull();
      await sendQueuedMail(t.deps);
      expect(sink.to(to)).toHaveLength(1);
    });

    it('keeps header injection out: line breaks in the subject become spaces, and a reserved header is refused', async () => {
      const to = address();
      await queue({ to, subject: 'Hi\r\nBcc: victim@example.com' });
      await sendQueuedMail(t.deps);
      const [mail] = sink.to(to);
      expect(mail.subject).toBe('Hi Bcc: victim@example.com');
      expect(mail.headers.bcc).toBeUndefined();
      expect(mail.to).toEqual([to]);
      await expect(queue({ to: address(), headers: { Bcc: 'victim@example.com' } })).rejects.toThrow(/not allowed/);
    });

    it('retries a mail the SMTP server refuses (451) after one minute of the clock, then sends it', async () => {
      const to = address();
      await queue({ to, subject: 'Retry me' });
      sink.refuse = { code: 451, message: 'Try again later' };
      try {
        const first = await sendQueuedMail(t.deps);
        expect(first.retrying).toBeGreaterThanOrEqual(1);
        const row = await rowTo(t, to);
        expect(row).toMatchObject({ status: 'pending', attempts: 1, text_body: 'Body text\n' });
        expect(row.last_error).toMatch(/451/);
        expect(new Date(row.next_attempt_at).getTime()).toBe(clock.current.getTime() + 60_000);
        // Not due yet: nothing is attempted.
        const refusals = sink.refusals;
        await sendQueuedMail(t.deps);
        expect(sink.refusals).toBe(refusals);
      } finally {
        sink.refuse = null;
      }
      clock.advance(60_000);
      await sendQueuedMail(t.deps);
      expect(sink.to(to).map((m) => m.subject)).toEqual(['Retry me']);
      expect(await rowTo(t, to)).toMatchObject({ status: 'sent', attempts: 2, last_error: null, text_body: null });
    });

    it('retries a mail when the SMTP server cannot be reached at all, and sends it once it is back', async () => {
      const to = address();
      await queue({ to, subject: 'Server down' });
      const down = await startService({ SMTP_URL: 'smtp://127.0.0.1:1', MAIL_TIMEOUT_MS: '2000' }, clock.clock);
      try {
        const result = await sendQueuedMail(down.deps);
        expect(result.retrying).toBeGreaterThanOrEqual(1);
      } finally {
        await down.stop();
      }
      const row = await rowTo(t, to);
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
      clock.advance(60_000);
      await sendQueuedMail(t.deps);
      expect(sink.to(to).map((m) => m.subject)).toEqual(['Server down']);
    });

    it(`gives a mail up after the ${MAIL_MAX_ATTEMPTS}th failure (failed, body erased), waiting 1 m, 5 m, 30 m, 2 h, 6 h between`, async () => {
      const to = address();
      await queue({ to, subject: 'Doomed' });
      sink.refuse = { code: 421, message: 'Service not available' };
      const waits: number[] = [];
      try {
        for (let i = 0; i < MAIL_MAX_ATTEMPTS; i += 1) {
          await sendQueuedMail(t.deps);
          const row = await rowTo(t, to);
          expect(row.attempts).toBe(i + 1);
          if (row.status === 'pending') {
            const wait = new Date(row.next_attempt_at).getTime() - clock.current.getTime();
            waits.push(wait);
            clock.advance(wait);
          }
        }
      } finally {
        sink.refuse = null;
      }
      expect(waits).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 21_600_000]);
      expect(await rowTo(t, to)).toMatchObject({ status: 'failed', attempts: MAIL_MAX_ATTEMPTS, text_body: null });
      clock.advance(86_400_000);
      await sendQueuedMail(t.deps);
      expect(sink.to(to)).toEqual([]);
    });

    it('sends each mail once when two senders run at once (rows claimed with FOR UPDATE SKIP LOCKED)', async () => {
      const recipients = Array.from({ length: 12 }, address);
      for (const to of recipients) await queue({ to });
      const [a, b] = await Promise.all([sendQueuedMail(t.deps), sendQueuedMail(t.deps)]);
      expect(a.sent + b.sent).toBeGreaterThanOrEqual(12);
      for (const to of recipients) expect(sink.to(to)).toHaveLength(1);
    });
  });

  describe('the Agenda worker', () => {
    it('runs mail.send and mail.digest as repeating jobs; a reset mail requested over GraphQL arrives by itself', async () => {
      const worker = await startService(
        { SMTP_URL: sink.url, MAIL_FROM, WORKER_ENABLED: 'true', WORKER_POLL_INTERVAL_MS: '100', WORKER_LOCK_LIFETIME_MS: '2000', WEBHOOK_TIMEOUT_MS: '1000', MAIL_TIMEOUT_MS: '1000', MAIL_SEND_INTERVAL_MS: '200' },
        clock.clock,
      );
      try {
        const jobs = await sqlRows(worker, sql`select name, repeat_interval from agenda_jobs where name like 'mail.%' order by name`);
        expect(jobs).toEqual([
          { name: JOB_MAIL_DIGEST, repeat_interval: String(24 * 3_600_000) },
          { name: JOB_MAIL_SEND, repeat_interval: '200' },
        ]);
        const user = await signupUser(worker);
        expect(ok(await gql(worker, null, 'mutation($e: String!){ requestPasswordReset(email: $e) }', { e: user.email }))).toEqual({ requestPasswordReset: true });
        await waitFor(() => sink.to(user.email).length === 1, 15_000, 'the reset mail');
        expect(sink.to(user.email)[0].subject).toBe('Reset your password');
      } finally {
        await worker.stop();
      }
    });
  });
});

describe('mail without SMTP_URL', () => {
  it('keeps mail in mail_outbox as logged and logs its subject and recipient, never its body or token', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const service = await createService(testConfig({ LOG_LEVEL: 'info', PUBLIC_URL: 'https://tribes.example' }), { log: pino({ level: 'info' }, stream) });
    const t = Object.assign(service, { api: request(service.http) }) as TestService;
    try {
      expect(t.deps.config.mail.smtpUrl).toBeUndefined();
      const user = await signupUser(t);
      ok(await gql(t, null, 'mutation($e: String!){ requestPasswordReset(email: $e) }', { e: user.email }));
      const result = await sendQueuedMail(t.deps);
      expect(result.logged).toBeGreaterThanOrEqual(1);
      expect(result.sent).toBe(0);

      const [row] = await sqlRows(t, sql`select kind, status, attempts, subject, text_body from mail_outbox where to_address = ${user.email}`);
      expect(row).toMatchObject({ kind: 'password_reset', status: 'logged', attempts: 0, subject: 'Reset your password' });
      const token = tokenIn(row.text_body, '/reset-password'); // kept for inspection in development
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.to === user.email);
      expect(logged).toEqual([expect.objectContaining({ msg: 'mail kept in mail_outbox (SMTP_URL is not set)', kind: 'password_reset', subject: 'Reset your password' })]);
      const all = lines.join('\n');
      expect(all).not.toContain(token);
      expect(all).not.toContain('reset-password?token');
      // A logged mail is not picked up again.
      expect((await sendQueuedMail(t.deps)).claimed).toBe(0);
    } finally {
      await t.stop();
    }
  });
});

describe('mail configuration', () => {
  it('defaults to no SMTP (log and keep), a local From, and a public URL from HOST and PORT', () => {
    const c = loadConfig({});
    expect(c.mail).toEqual({ smtpUrl: undefined, from: 'Tribes <no-reply@localhost>', sendIntervalMs: 10_000, batchSize: 50, timeoutMs: 20_000, digestIntervalMs: 86_400_000 });
    expect(c.publicUrl).toBe('http://localhost:4000');
    expect(loadConfig({ HOST: '127.0.0.1', PORT: '8080' }).publicUrl).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://tribes.example/app/' }).publicUrl).toBe('https://tribes.example/app');
    expect(loadConfig({ SMTP_URL: 'smtps://user:pass@mail.example:465' }).mail.smtpUrl).toBe('smtps://user:pass@mail.example:465');
  });

  it('names every bad mail variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ SMTP_URL: 'http://mail.example', PUBLIC_URL: 'ftp://x', MAIL_FROM: 'nobody', MAIL_BATCH_SIZE: '0' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of ['SMTP_URL', 'PUBLIC_URL', 'MAIL_FROM', 'MAIL_BATCH_SIZE']) expect((error as Error).message).toContain(name);
  });

  it('is documented: SMTP_URL and mail in development in the README, email in docs/notifications-and-messages.md', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toMatch(/^\| `SMTP_URL` \| unset \|/m);
    expect(readme).toContain('## Mail');
    expect(readme).toMatch(/In development, leave `SMTP_URL` unset/);
    expect(readme).toContain('mail_outbox');
    expect(readme).toContain('List-Unsubscribe-Post');
    const docs = readFileSync(new URL('../docs/notifications-and-messages.md', import.meta.url), 'utf8');
    for (const heading of ['## Notifications', '## Direct messages', '## Email', '### Verification and password reset', '### One-click unsubscribe (RFC 8058)', '## Real time']) {
      expect(docs).toContain(`\n${heading}\n`);
    }
  });
});
