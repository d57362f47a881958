import { z } from 'zod';
import { invalid, invalidField, nameText, parseInput, text } from '../kernel/index.js';

/** Limits of a profile, in characters (code points) unless said otherwise. */
export const PROFILE_LIMITS = { displayName: 80, bio: 500, location: 100, links: 5, url: 2048 } as const;

/** The display name rule, shared by sign-up and profile updates: 1 to 80 characters after trimming. */
export const displayNameRule = nameText({
  max: PROFILE_LIMITS.displayName,
  min: 1,
  trim: true,
  required: `required: 1 to ${PROFILE_LIMITS.displayName} characters`,
  tooLong: `1 to ${PROFILE_LIMITS.displayName} characters`,
});

/** Length limits of a password, in UTF-16 code units. */
export const PASSWORD_LIMITS = { min: 10, max: 256 } as const;

/**
 * The password rule of sign-up and password changes: 10 to 256 characters, else `weak_password`
 * (`password: 10 to 256 characters`).
 */
export function checkNewPassword(password: string, field = 'password'): void {
  if (password.length < PASSWORD_LIMITS.min || password.length > PASSWORD_LIMITS.max) {
    throw invalidField('weak_password', field, `${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters`);
  }
}

/**
 * True for a URL a profile may link to: written as `https://` followed by a host, without white space,
 * backslashes or user information (`user:password@`), that parses as an `https:` URL with a host. `javascript:`, `data:`,
 * `http:` and relative URLs are refused.
 */
export function isProfileUrl(value: string): boolean {
  if (value.length > PROFILE_LIMITS.url || !/^https:\/\/[^/]/i.test(value) || /[\s\\]/.test(value)) return false;
  // No user information at all, even empty (`https://:@host`), which the parser would silently drop.
  if (/^https:\/\/[^/?#]*@/i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

/** The shape of an uploaded media's path, `/media/<id>/<variant>` (what it names is checked by the media domain). */
export const isUploadPath = (value: string): boolean => /^\/media\/[0-9a-f-]{36}\/[a-z0-9][a-z0-9_.-]{0,63}$/.test(value);

const profileUrl = (field: string) =>
  text({ max: PROFILE_LIMITS.url, required: `${field} must be a string` }).refine(
    isProfileUrl,
    'must be an https:// URL with a host, without user name or password',
  );

const profileInput = z.object({
  displayName: displayNameRule.optional(),
  bio: text({ max: PROFILE_LIMITS.bio, trim: true, required: 'bio cannot be null: send "" to clear it' }).optional(),
  // An https URL, or the `/media/{id}/{variant}` path of the user's own uploaded avatar (checked by `profileMedia`).
  avatarUrl: z
    .union([profileUrl('avatarUrl'), text({ max: PROFILE_LIMITS.url }).refine(isUploadPath)], {
      error: 'must be an https:// URL with a host, without user name or password, or an uploaded /media/{id}/{variant} path',
    })
    .nullable()
    .optional(),
  // An empty location is no location.
  location: text({ max: PROFILE_LIMITS.location, trim: true })
    .nullable()
    .optional()
    .transform((v) => (v === '' ? null : v)),
  links: z
    .array(profileUrl('links'), { error: 'links cannot be null: send [] to clear them' })
    .max(PROFILE_LIMITS.links, `at most ${PROFILE_LIMITS.links} links`)
    .optional(),
});

/** The fields a profile update writes: exactly those that were sent. */
export type ProfileChanges = Partial<{ displayName: string; bio: string; avatarUrl: string | null; location: string | null; links: string[] }>;

/**
 * Parses `updateProfile`'s input: `empty` when no field was sent; `invalid_input` with `details` naming each field
 * that breaks its rule (display name as at sign-up; bio up to 500 characters; location up to 100 or null; avatar an
 * HTTPS URL or null; up to 5 HTTPS links of at most 2048 characters). Fields not sent stay absent.
 */
export function parseProfileChanges(raw: unknown): ProfileChanges {
  const sent = raw && typeof raw === 'object' ? Object.entries(raw).filter(([, v]) => v !== undefined) : [];
  if (sent.length === 0) throw invalid('empty', 'input: send at least one field to change.');
  const parsed = parseInput(profileInput, Object.fromEntries(sent));
  const changes: ProfileChanges = {};
  for (const [key] of sent) {
    if (key in parsed) (changes as Record<string, unknown>)[key] = (parsed as Record<string, unknown>)[key];
  }
  return changes;
}
