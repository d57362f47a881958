// A real SMTP server inside the test process (the smtp-server package on 127.0.0.1, a free port) that keeps every
// message it accepts, parsed into headers and a text body, or refuses them while told to.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message the server accepted. */
export interface ReceivedMail {
  /** The envelope's MAIL FROM and RCPT TO. */
  from: string;
  to: string[];
  /** Header values by lower-case name (unfolded; the first of repeated headers). */
  headers: Record<string, string>;
  subject: string;
  /** The text/plain part, decoded (quoted-printable or base64). */
  text: string;
  raw: string;
}

/** Unfolds and splits a header block. */
function parseHeaders(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at <= 0) continue;
    const name = line.slice(0, at).trim().toLowerCase();
    if (!(name in out)) out[name] = line.slice(at + 1).trim();
  }
  return out;
}

const decodeQp = (s: string): string =>
  Buffer.from(
    s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8');

/** Decodes RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=). */
const decodeWords = (s: string): string =>
  s.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_, _charset: string, enc: string, data: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : decodeQp(data.replace(/_/g, ' ')),
  );

function decodeBody(headers: Record<string, string>, body: string): string {
  const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQp(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The decoded text/plain part of a message (its body when it is not multipart). */
function textOf(headers: Record<string, string>, body: string): string {
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!/^multipart\//i.test(type) || !boundary) return decodeBody(headers, body);
  for (const part of body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const split = part.search(/\r?\n\r?\n/);
    const partHeaders = parseHeaders(part.slice(0, split).trim());
    const partBody = part.slice(split).replace(/^\r?\n\r?\n/, '').replace(/\r?\n$/, '');
    const found = textOf(partHeaders, partBody);
    if (/^text\/plain/i.test(partHeaders['content-type'] ?? 'text/plain') || /^multipart\//i.test(partHeaders['content-type'] ?? '')) return found;
  }
  return '';
}

/** Parses a raw RFC 5322 message. */
export function parseMail(raw: string, envelope: { from: string; to: string[] }): ReceivedMail {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = parseHeaders(raw.slice(0, split));
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  return { ...envelope, headers, subject: decodeWords(headers.subject ?? ''), text: textOf(headers, body), raw };
}

/** An SMTP error the server answers with (e.g. 451 to make the sender retry). */
export interface Refusal {
  code: number;
  message: string;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives. */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  /** While set, every message is refused at DATA with this answer. */
  refuse: Refusal | null = null;
  /** Messages refused so far. */
  refusals = 0;
  private server!: SMTPServer;
  port = 0;

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.refuse) {
            this.refusals += 1;
            const error = Object.assign(new Error(this.refuse.message), { responseCode: this.refuse.code });
            callback(error);
            return;
          }
          const envelope = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
          };
          this.received.push(parseMail(Buffer.concat(chunks).toString('utf8'), envelope));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** `smtp://127.0.0.1:<port>` for SMTP_URL. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Messages to one recipient, in arrival order. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to.some((a) => a.toLowerCase() === address.toLowerCase()));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The `token` query parameter of the first link in `text` whose path is `path`. */
export function tokenIn(text: string, path: string): string {
  const match = new RegExp(`https?://[^\\s]+${path.replace(/[/]/g, '\\/')}\\?token=([A-Za-z0-9_%.-]+)`).exec(text);
  if (!match) throw new Error(`no ${path} link in:\n${text}`);
  return decodeURIComponent(match[1]);
}
