// Outgoing mail, below every domain: domains queue mail in their transaction (enqueueMail), the `mail.send` job sends
// it through SMTP_URL (or logs and keeps it). Only this module touches the `mail_outbox` table.
export { enqueueMail, forgetRecipient, sendQueuedMail, MAIL_MAX_ATTEMPTS, MAIL_RETRY_DELAYS_MS } from './mail.service.js';
export type { OutgoingMail, SendResult } from './mail.service.js';
export type { MailKind, MailStatus } from './mail.tables.js';
