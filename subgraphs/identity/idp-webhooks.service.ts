import { z } from 'zod';
import type { Logger } from 'pino';
import type { Executor } from '../../db/src/index.js';
import { type AppDeps, DomainError, acceptedSecrets, conflict, invalid, isUniqueViolation, randomToken } from '../kernel/index.js';
import { deleteAccount } from './account-deletion.js';
import { displayNameRule, isProfileUrl } from './identity.profile.js';
import * as repo from './identity.repository.js';
import * as accounts from './idp-webhooks.repository.js';
import { STANDARD_WEBHOOK_TOLERANCE_SECONDS, type StandardWebhookHeaders, verifyStandardWebhook } from './standard-webhooks.js';

/** The identity provider's events that change something here; any other type is acknowledged and ignored. */
export const IDP_USER_EVENTS = ['user.created', 'user.updated', 'user.deleted'] as const;

/** What the provider is answered on success (providers read only the status). */
export interface IdentityWebhookReceipt {
  received: true;
}

const idpEvent = z.object({
  type: z.string().min(1).max(255),
  data: z.record(z.string(), z.unknown()),
});

/** What a `user.*` event says of the person, read from Clerk's user object or from OpenID Connect claim names. */
export interface IdpUserData {
  /** The provider's user id (`data.id`): the `sub` of its `__session` tokens. */
  subject: string;
  /** The primary address; undefined when the event carries none. */
  email?: string;
  emailVerified: boolean;
  /** Undefined: the event says nothing of the name. */
  displayName?: string;
  username?: string;
  /** Undefined: not sent; null: the provider has none. */
  avatarUrl?: string | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const emailShape = z.string().max(254).email();

/**
 * Reads the person of a `user.*` event's `data`: `id` (required, 1 to 255 characters, else 400 `invalid_payload`);
 * the address of `email_addresses` whose id is `primary_email_address_id` (else the first), verified when its
 * `verification.status` is `verified` (Clerk), or `email` with `email_verified` (OpenID Connect); the name from
 * `first_name` and `last_name`, or `name`; `username` or `preferred_username`; the avatar from `image_url` or
 * `picture`. A name, address or avatar that breaks this service's rules is left out (logged), never stored.
 */
export function readIdpUser(data: Record<string, unknown>): IdpUserData {
  const subject = typeof data.id === 'string' ? data.id : '';
  if (subject.length === 0 || subject.length > 255) throw invalid('invalid_payload', 'data.id: the provider\'s user id is required (1 to 255 characters).');
  let email: string | undefined;
  let emailVerified = false;
  if (Array.isArray(data.email_addresses)) {
    const list = data.email_addresses.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object');
    const primary = list.find((e) => e.id !== undefined && e.id === data.primary_email_address_id) ?? list[0];
    email = str(primary?.email_address);
    const verification = primary?.verification as Record<string, unknown> | null | undefined;
    emailVerified = !!verification && verification.status === 'verified';
  } else {
    email = str(data.email);
    emailVerified = data.email_verified === true;
  }
  if (email !== undefined && !emailShape.safeParse(email).success) email = undefined;
  const joined = [str(data.first_name), str(data.last_name)].filter(Boolean).join(' ');
  const name = joined || str(data.name);
  const displayName = name !== undefined && displayNameRule.safeParse(name).success ? name : undefined;
  const username = str(data.username) ?? str(data.preferred_username);
  const avatarRaw = 'image_url' in data ? data.image_url : 'picture' in data ? data.picture : undefined;
  const avatarUrl = avatarRaw === undefined ? undefined : typeof avatarRaw === 'string' && isProfileUrl(avatarRaw) ? avatarRaw : null;
  return { subject, email, emailVerified, displayName, username, avatarUrl };
}

/**
 * A username for a provisioned account: the provider's username (or the address's local part) lower-cased, every
 * character outside a-z, 0-9 and _ turned into _, cut to 20 characters (`user` when shorter than 3); taken as is
 * when free, else with `_` and six random characters.
 */
async function freeUsername(db: Executor, person: IdpUserData): Promise<string> {
  const source = person.username ?? person.email?.split('@')[0] ?? 'user';
  const cleaned = source.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 20);
  const base = cleaned.length >= 3 ? cleaned : 'user';
  const suffixed = () => `${base}_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 6)}`;
  const candidates = [base, suffixed(), suffixed(), suffixed()];
  const taken = new Set((await repo.findUserIdsByUsernames(db, candidates)).map((u) => u.username));
  return candidates.find((c) => !taken.has(c)) ?? suffixed();
}

const emailTaken = () => conflict('email_taken', 'data: the address is registered here by another account that cannot be linked (see docs/identity-webhooks.md).');

/**
 * `user.created`: links or provisions the account of `person.subject`. Already linked (or deleted): nothing. An
 * account with the same address (case-insensitive) is linked when the provider verified the address and the account
 * has no password or proved the address here, as a `__session` token links it; any other account with that address
 * is 409 `email_taken`. Otherwise a new account: the address, the name (else the username), the avatar, a username
 * from `freeUsername`, verified when the provider says so. No address: 400 `invalid_payload`.
 */
async function provision(app: AppDeps, tx: Executor, person: IdpUserData): Promise<void> {
  if (await accounts.findAccountBySubject(tx, person.subject)) return;
  if (!person.email) throw invalid('invalid_payload', 'data.email_addresses: user.created needs a valid email address.');
  const existing = await accounts.findAccountByEmail(tx, person.email);
  const now = app.clock();
  if (existing) {
    if (existing.idpSubject === person.subject) return; // linked by a message about this user written meanwhile
    const linkable = person.emailVerified && !existing.idpSubject && !existing.deletedAt && (!existing.passwordHash || existing.emailVerifiedAt);
    if (!linkable) throw emailTaken();
    await accounts.updateAccount(tx, existing.id, { idpSubject: person.subject, ...(existing.emailVerifiedAt ? {} : { emailVerifiedAt: now }) });
    return;
  }
  const username = await freeUsername(tx, person);
  await repo.insertUser(tx, {
    email: person.email,
    username,
    displayName: person.displayName ?? username,
    avatarUrl: person.avatarUrl ?? null,
    idpSubject: person.subject,
    emailVerifiedAt: person.emailVerified ? now : null,
  });
}

/**
 * `user.updated`: the linked account takes the event's address (verified when the provider says so; an address
 * another account holds is 409 `email_taken`), name and avatar (null clears it). Fields the event leaves out, or
 * that break this service's rules, stay as they are; the username never changes. An unknown or deleted user: nothing.
 */
async function update(app: AppDeps, tx: Executor, person: IdpUserData): Promise<boolean> {
  const account = await accounts.findAccountBySubject(tx, person.subject);
  if (!account || account.deletedAt) return false;
  const patch: accounts.IdpAccountPatch = {};
  if (person.email && person.email.toLowerCase() !== account.email.toLowerCase()) {
    const holder = await accounts.findAccountByEmail(tx, person.email);
    if (holder && holder.id !== account.id) throw emailTaken();
    patch.email = person.email;
    patch.emailVerifiedAt = person.emailVerified ? app.clock() : null;
  } else if (person.email && person.emailVerified && !account.emailVerifiedAt) {
    patch.emailVerifiedAt = app.clock();
  }
  if (person.displayName !== undefined) patch.displayName = person.displayName;
  if (person.avatarUrl !== undefined) patch.avatarUrl = person.avatarUrl;
  await accounts.updateAccount(tx, account.id, patch);
  return true;
}

/** `user.deleted`: the linked account is deleted (`deleteAccount`). An unknown or deleted user: nothing. */
async function remove(app: AppDeps, tx: Executor, subject: string): Promise<boolean> {
  const account = await accounts.findAccountBySubject(tx, subject);
  return !!account && (await deleteAccount(app, tx, account.id));
}

/**
 * Handles one inbound identity-provider webhook (`POST /webhooks/identity`, Standard Webhooks / Svix signatures).
 * Order of checks: the secret is configured (else 503 `identity_webhooks_not_configured`), the signature headers
 * are present and the signature over the RAW body is valid and fresh (else 400 `invalid_signature`), the body is an
 * event `{type, data}` (400 `invalid_payload`). Then, in ONE transaction, the message id is recorded and the event
 * applied (`user.created`, `user.updated`, `user.deleted`); a message id seen before changes nothing and is answered
 * like the first time; other event types are acknowledged, recorded and ignored (logged). Every refusal changes
 * nothing, so the provider's retry of a refused message is processed in full.
 */
export async function receiveIdentityEvent(app: AppDeps, rawBody: Buffer, headers: StandardWebhookHeaders, log: Logger = app.log): Promise<IdentityWebhookReceipt> {
  const secret = app.config.idp.webhookSecret;
  if (!secret) throw new DomainError('unavailable', 'identity_webhooks_not_configured', 'IDP_WEBHOOK_SECRET is not set: identity-provider webhooks are off on this server.');
  const now = app.clock();
  const secrets = acceptedSecrets(secret, app.config.idp.webhookSecretPrevious);
  const failure = verifyStandardWebhook({ headers, payload: rawBody, secret: secrets, now });
  if (failure) {
    log.warn({ reason: failure, messageId: headers.id?.slice(0, 255) }, 'identity webhook refused: bad signature');
    throw invalid('invalid_signature', SIGNATURE_MESSAGES[failure]);
  }
  const messageId = headers.id as string;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw invalid('invalid_payload', 'body: must be a JSON event {type, data}.');
  }
  const result = idpEvent.safeParse(parsed);
  if (!result.success) throw invalid('invalid_payload', 'body: must be a JSON event {type, data}.');
  const { type, data } = result.data;
  const known = (IDP_USER_EVENTS as readonly string[]).includes(type);
  const person = known && type !== 'user.deleted' ? readIdpUser(data) : undefined;
  const subject = person?.subject ?? (known ? readSubject(data) : undefined);
  // A message about a user that another message is writing at the same time (the same user told twice, or two users
  // given one username) meets that one's row only at its insert: it runs again from the start, and then sees the row
  // (the same user: linked already; an address another account holds: 409; a username taken: another one).
  for (let attempt = 1; ; attempt += 1) {
    try {
      await app.database.db.transaction(async (tx) => {
        const first = await accounts.recordMessage(tx, { messageId, eventType: type, subject: subject ?? null, receivedAt: now });
        if (!first) {
          log.info({ messageId, type }, 'identity webhook: message id seen before, nothing changed');
          return;
        }
        let changed = true;
        if (type === 'user.created') await provision(app, tx, person!);
        else if (type === 'user.updated') changed = await update(app, tx, person!);
        else if (type === 'user.deleted') changed = await remove(app, tx, subject!);
        else log.info({ messageId, type }, 'identity webhook: event type ignored');
        if (!changed) log.info({ messageId, type }, 'identity webhook: no live account for this user, nothing changed');
      });
      return { received: true };
    } catch (error) {
      const collided = CONCURRENT_WRITES.some((key) => isUniqueViolation(error, key));
      if (collided && attempt < CONCURRENT_ATTEMPTS) continue;
      if (isUniqueViolation(error, 'users_email_key')) throw emailTaken();
      throw error;
    }
  }
}

/** The unique keys a message can meet when another message writes the same user, address or username at once. */
const CONCURRENT_WRITES = ['users_email_key', 'users_username_key', 'users_idp_subject_key'];
/** Runs of one message that met another's write (see `receiveIdentityEvent`). */
const CONCURRENT_ATTEMPTS = 3;

/** `data.id` of a `user.deleted` (whose data is only `{id, deleted: true}`). */
function readSubject(data: Record<string, unknown>): string {
  const subject = typeof data.id === 'string' ? data.id : '';
  if (subject.length === 0 || subject.length > 255) throw invalid('invalid_payload', 'data.id: the provider\'s user id is required (1 to 255 characters).');
  return subject;
}

/** What the provider's delivery log shows for each refused signature. */
const SIGNATURE_MESSAGES: Record<NonNullable<ReturnType<typeof verifyStandardWebhook>>, string> = {
  missing_headers: 'webhook-id, webhook-timestamp and webhook-signature (or svix-id, svix-timestamp and svix-signature) are required.',
  malformed_headers: 'webhook-id: 1 to 255 printable characters; webhook-timestamp: unix seconds.',
  timestamp_out_of_tolerance: `webhook-timestamp: must be within ${STANDARD_WEBHOOK_TOLERANCE_SECONDS} seconds of the server's clock.`,
  no_matching_signature: 'webhook-signature: no v1 signature matches the body signed with IDP_WEBHOOK_SECRET.',
};
