/**
 * `@username` mentions in a post's or a comment's text: which usernames the text names. Pure: resolving the names to
 * members of the tribe happens at write time in `mentions.service.ts`.
 *
 * A mention is `@` followed by a username as identity's sign-up rule allows it (3 to 30 of a-z, 0-9 and `_`; matched
 * case-insensitively and lowercased), read from the sanitized HTML with its tags removed (so an `href` or an `alt`
 * never mentions anyone). It must start the text or follow a character that cannot belong to an e-mail address or a
 * URL (`a@b.com` and `https://x.example/@bob` are plain text) and must not run on into more name characters or a
 * domain (`@bob.example`); a sentence's full stop after it is fine (`thanks @bob.`).
 */

/** At most this many distinct names are read from one text (the rest are plain text). */
export const MAX_MENTIONS = 20;

const TAG = /<[^>]*>/g;
const URL = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.|mailto:)[^\s<>"']*/gi;
const MENTION = /(?<![A-Za-z0-9_.+\-%@/:=&#~])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_@]|[.-][A-Za-z0-9])/g;

/** The distinct usernames `html` mentions, lowercased, in order of first appearance, at most `MAX_MENTIONS`. */
export function mentionedUsernames(html: string): string[] {
  const plain = html.replace(TAG, ' ').replace(URL, ' ');
  const names = new Set<string>();
  for (const match of plain.matchAll(MENTION)) {
    names.add(match[1].toLowerCase());
    if (names.size === MAX_MENTIONS) break;
  }
  return [...names];
}
