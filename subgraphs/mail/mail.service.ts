import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Executor } from '../../db/src/index.js';
import type { AppDeps } from '../kernel/index.js';
import { mailMessages } from '../kernel/metrics.js';
import { currentTraceparent, endSpan, startSpan } from '../kernel/tracing.js';
import * as repo from './mail.repository.js';
import type { MailKind } from './mail.tables.js';

/** A mail to queue. */
export interface OutgoingMail {
  kind: MailKind;
  to: string;
  /** One line; line breaks become spaces. */
  subject: string;
  text: string;
  html?: string;
  /** Extra headers (name → one-line value). */
  headers?: Record<string, string>;
  /**
   * The one-click unsubscribe URL (RFC 8058): adds `List-Unsubscribe: <url>` and
   * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. Only for mails the user can stop (the digest).
   */
  unsubscribeUrl?: string;
  /** At most one mail is ever queued per key (e.g. a user's digest of one day). */
  dedupeKey?: string;
  /** When it is queued (the app clock); it is due at once. */
  now?: Date;
}

/** Waits after failures 1 to 5: 1 m, 5 m, 30 m, 2 h, 6 h; the sixth failure is final (`failed`). */
export const MAIL_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000] as const;
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;

const HEADER_NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
/** Headers the sender sets itself: a caller may not override them. */
const RESERVED = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'sender', 'reply-to', 'content-type', 'content-transfer-encoding', 'mime-version']);
const oneLine = (value: string): string => value.replace(/[\r\n\t]+/g, ' ').trim();

/**
 * Queues a mail inside `tx` (the transaction of the change that causes it): it is sent by the `mail.send` job only
 * if the transaction commits. Returns the mail's id, or null when `dedupeKey` was queued already. With tracing on, the
 * mail keeps the queuing request's trace context, which its `mail.send` span links to.
 */
export async function enqueueMail(tx: Executor, mail: OutgoingMail): Promise<string | null> {
  const headers: Record<string, string> = { 'Auto-Submitted': 'auto-generated' };
  for (const [name, value] of Object.entries(mail.headers ?? {})) {
    if (!HEADER_NAME.test(name) || RESERVED.has(name.toLowerCase())) throw new Error(`mail header "${name}" is not allowed`);
    headers[name] = oneLine(value);
  }
  if (mail.unsubscribeUrl) {
    if (!/^https?:\/\/[^\s<>]+$/.test(mail.unsubscribeUrl)) throw new Error('unsubscribeUrl must be an http(s) URL');
    headers['List-Unsubscribe'] = `<${mail.unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  const to = oneLine(mail.to);
  if (!/^[^\s@<>,;]+@[^\s@<>,;]+$/.test(to)) throw new Error('mail recipient must be one plain address');
  const now = mail.now ?? new Date();
  const traceContext = currentTraceparent(); // null when tracing is off
  return repo.insert(tx, {
    ...(traceContext ? { traceContext } : {}),
    kind: mail.kind,
    toAddress: to,
    subject: oneLine(mail.subject).slice(0, 300),
    textBody: mail.text,
    htmlBody: mail.html ?? null,
    headers,
    dedupeKey: mail.dedupeKey ?? null,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
  });
}

/**
 * Forgets a recipient inside `tx` (an account being deleted): every mail to `address` goes, queued or sent, so
 * neither the mail nor the address outlives the account. Returns how many mails went.
 */
export function forgetRecipient(tx: Executor, address: string): Promise<number> {
  return repo.deleteToAddress(tx, address);
}

/**
 * With tracing on, one mail's send (or keeping, without SMTP): a span `mail.send <kind>` of a trace of its own, linked
 * to the request that queued it. Never the recipient or the body.
 */
const mailSpan = (m: repo.ClaimedMail) =>
  startSpan(`mail.send ${m.kind}`, { kind: 'producer', root: true, links: [m.traceContext], attributes: { 'svc.mail.id': m.id, 'svc.mail.kind': m.kind, 'svc.mail.attempt': m.attempts + 1 } });

/** What one send cycle did. */
export interface SendResult {
  /** Mails claimed. */
  claimed: number;
  sent: number;
  /** Kept without SMTP (`SMTP_URL` unset): logged (subject and recipient) and left in the outbox. */
  logged: number;
  /** Failed and scheduled again. */
  retrying: number;
  /** Failed for good (sixth failure, or the server refused the recipient permanently). */
  failed: number;
}

/** True for an SMTP answer that will not change on retry: the server refused the recipient (5xx at RCPT TO). */
const isPermanent = (error: unknown): boolean => {
  const e = error as { responseCode?: number; command?: string };
  return typeof e?.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600 && /RCPT/i.test(e.command ?? '');
};
const describe = (error: unknown): string => {
  const e = error as { responseCode?: number; message?: string; code?: string };
  return (e?.responseCode ? `${e.responseCode} ` : '') + (e?.message ?? e?.code ?? String(error)).slice(0, 500);
};

/**
 * One cycle of the `mail.send` job: claims up to `MAIL_BATCH_SIZE` due mails and sends each through `SMTP_URL`
 * (one SMTP connection per cycle). A failure is tried again after the backoff of `MAIL_RETRY_DELAYS_MS`; the sixth
 * failure, or a recipient the server refuses for good (5xx), is `failed`. Without `SMTP_URL`, each mail is logged
 * (kind, subject, recipient: never the body, which may hold a one-time link) and kept as `logged`. Several workers may
 * run it at once: each mail is claimed by one of them (`FOR UPDATE SKIP LOCKED`).
 */
export async function sendQueuedMail(app: AppDeps): Promise<SendResult> {
  const { mail } = app.config;
  const db = app.database.db;
  const now = app.clock();
  const claimId = randomUUID();
  // The claim outlives the longest cycle (every mail taking the whole timeout); a dead sender's claims lapse with it.
  const until = new Date(now.getTime() + (mail.batchSize + 1) * mail.timeoutMs);
  const claimed = await repo.claimDue(db, now, until, mail.batchSize, claimId);
  const result: SendResult = { claimed: claimed.length, sent: 0, logged: 0, retrying: 0, failed: 0 };
  if (claimed.length === 0) return result;

  if (!mail.smtpUrl) {
    for (const m of claimed) {
      const span = mailSpan(m);
      app.log.info({ mailId: m.id, kind: m.kind, to: m.to, subject: m.subject }, 'mail kept in mail_outbox (SMTP_URL is not set)');
      const ok = await repo.record(db, m.id, claimId, { status: 'logged', attempts: m.attempts, lastError: null, nextAttemptAt: null, sentAt: null, eraseBody: false });
      if (ok) result.logged += 1;
      span?.setAttribute('svc.mail.outcome', 'logged');
      endSpan(span);
    }
    mailMessages.inc({ outcome: 'logged' }, result.logged);
    return result;
  }

  const transport = nodemailer.createTransport({
    url: mail.smtpUrl,
    connectionTimeout: mail.timeoutMs,
    greetingTimeout: mail.timeoutMs,
    socketTimeout: mail.timeoutMs,
  });
  try {
    for (const m of claimed) {
      const attempts = m.attempts + 1;
      const span = mailSpan(m);
      try {
        await transport.sendMail({ from: mail.from, to: m.to, subject: m.subject, text: m.text, html: m.html ?? undefined, headers: m.headers });
        span?.setAttribute('svc.mail.outcome', 'sent');
        endSpan(span);
        await repo.record(db, m.id, claimId, { status: 'sent', attempts, lastError: null, nextAttemptAt: null, sentAt: app.clock(), eraseBody: true });
        result.sent += 1;
        app.log.info({ mailId: m.id, kind: m.kind, to: m.to }, 'mail sent');
      } catch (error) {
        if (span?.isRecording()) endSpan(span, error); // not when the send succeeded and recording it failed
        const final = attempts >= MAIL_MAX_ATTEMPTS || isPermanent(error);
        const at = app.clock();
        await repo.record(db, m.id, claimId, {
          status: final ? 'failed' : 'pending',
          attempts,
          lastError: describe(error),
          nextAttemptAt: final ? null : new Date(at.getTime() + MAIL_RETRY_DELAYS_MS[attempts - 1]),
          sentAt: null,
          eraseBody: final,
        });
        if (final) result.failed += 1;
        else result.retrying += 1;
        app.log.warn({ mailId: m.id, kind: m.kind, attempts, final, error: describe(error) }, 'mail not sent');
      }
    }
  } finally {
    transport.close();
    mailMessages.inc({ outcome: 'sent' }, result.sent);
    mailMessages.inc({ outcome: 'retried' }, result.retrying);
    mailMessages.inc({ outcome: 'failed' }, result.failed);
  }
  return result;
}
