/**
 * Automod's matching rules, pure: blocked words and blocked link domains of a tribe against a post's or comment's
 * sanitized HTML. Words match whole words (letters and digits on neither side), case-insensitively, in the text
 * without its tags; a domain matches itself and its subdomains wherever it appears (a link, an image, plain text).
 */

/** Most entries per list, and the longest entry. */
export const AUTOMOD_LIMITS = { entries: 200, wordChars: 100, domainChars: 253 } as const;

/** Why automod held a post or comment. */
export type HeldReason = 'blocked_word' | 'blocked_domain' | 'approval_required';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** The text of sanitized HTML: tags become spaces, the common entities their characters. */
export function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, ' ').replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) => ENTITIES[e]);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first blocked word or phrase found in `html` as a whole word, or null. */
export function findBlockedWord(html: string, words: readonly string[]): string | null {
  if (words.length === 0) return null;
  const text = textOf(html).toLowerCase();
  for (const word of words) {
    const pattern = escapeRegExp(word).replace(/\s+/g, '\\s+');
    if (new RegExp(`(?<![\\p{L}\\p{N}_])${pattern}(?![\\p{L}\\p{N}_])`, 'u').test(text)) return word;
  }
  return null;
}

/** The first blocked domain named in `html` (itself or a subdomain, in a link, an image or the text), or null. */
export function findBlockedDomain(html: string, domains: readonly string[]): string | null {
  if (domains.length === 0) return null;
  const lower = html.toLowerCase();
  for (const domain of domains) {
    if (new RegExp(`(?<![a-z0-9.-])(?:[a-z0-9-]+\\.)*${escapeRegExp(domain)}(?![a-z0-9-]|\\.[a-z0-9])`).test(lower)) return domain;
  }
  return null;
}

/** Lower-cased, trimmed, white space collapsed, empty entries dropped, duplicates removed (first kept). */
export function normaliseWords(words: readonly string[]): string[] {
  return [...new Set(words.map((w) => w.trim().toLowerCase().replace(/\s+/g, ' ')).filter(Boolean))];
}

const HOST = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;

/**
 * A domain as stored: lower case, without scheme, `www.`, path or port (`https://www.Spam.example/x` is
 * `spam.example`); null when what is left is not a host name with a dot.
 */
export function normaliseDomain(raw: string): string | null {
  let d = raw.trim().toLowerCase();
  d = d.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/[/?#].*$/, '').replace(/:\d+$/, '').replace(/^\*\./, '').replace(/^www\./, '').replace(/\.$/, '');
  return HOST.test(d) ? d : null;
}
