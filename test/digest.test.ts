// The daily email digest and its one-click unsubscribe, end to end on the real PostgreSQL: notifications from the real
// flows (a comment, a mention, a reaction over GraphQL, consumed by the notifications job), the digest job, the mail
// sender, a real SMTP server in this process; then the RFC 8058 one-click POST read back through
// notificationPreferences, the GET confirmation page, and tampered or foreign tokens refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sendDigests, signUnsubscribe } from '../subgraphs/digest/index.js';
import { consumeNotifications } from '../subgraphs/engagement/index.js';
import { sendQueuedMail } from '../subgraphs/mail/index.js';
import { createPost, createTribe, join, signupUser, type TestUser } from './factory.js';
import { SmtpSink, type ReceivedMail } from './smtp.js';
import { gql, isolatedDatabase, movableClock, ok, startService, type TestService } from './support.js';

const PUBLIC_URL = 'https://tribes.example';
const Q = {
  prefs: 'query { notificationPreferences { kind channel enabled } }',
  comment: 'mutation($p: ID!, $i: CreateCommentInput!){ createComment(postId: $p, input: $i){ id } }',
  react: 'mutation($t: ReactionTarget!, $k: ReactionKind!){ react(target: $t, kind: $k){ total } }',
  mark: 'mutation { markNotificationsRead(all: true) }',
  setPrefs: 'mutation($p: [NotificationPreferenceInput!]!){ updateNotificationPreferences(preferences: $p){ kind } }',
  leave: 'mutation($h: String!){ leaveCommunity(handle: $h) }',
};

/** The path and query of an `<https://tribes.example/unsubscribe?token=...>` header or a link in the text. */
const pathOf = (url: string) => url.replace(/^<|>$/g, '').slice(PUBLIC_URL.length);
const headerLink = (mail: ReceivedMail) => pathOf(mail.headers['list-unsubscribe']);
/** The link of the line "Stop emails about <label>: <url>" of a digest. */
const kindLink = (mail: ReceivedMail, label: string) => {
  const line = mail.text.split(/\r?\n/).find((l) => l.startsWith(`Stop emails about ${label}: `));
  if (!line) throw new Error(`no "${label}" link in:\n${mail.text}`);
  return pathOf(line.slice(`Stop emails about ${label}: `.length).trim());
};

describe('email digest', () => {
  let t: TestService;
  let sink: SmtpSink;
  let db: Awaited<ReturnType<typeof isolatedDatabase>>;
  const clock = movableClock();

  beforeAll(async () => {
    sink = await new SmtpSink().start();
    // A database of the file's own: the digest and the mail sender take every user and queued mail of the database, so
    // what the files that ran before left there must not decide which mails one run sends.
    db = await isolatedDatabase();
    t = await startService({ ...(db.url ? { DATABASE_URL: db.url } : {}), SMTP_URL: sink.url, PUBLIC_URL }, clock.now);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await sink?.stop();
    await db?.drop();
  });

  /** The digest job, then the mail sender: what `user` received from this run. */
  const digestFor = async (user: TestUser) => {
    const before = sink.to(user.email).length;
    await sendDigests(t.deps);
    await sendQueuedMail(t.deps);
    return sink.to(user.email).slice(before);
  };
  const emailPrefs = async (user: TestUser) =>
    Object.fromEntries(
      (ok(await gql(t, user, Q.prefs)).notificationPreferences as Array<{ kind: string; channel: string; enabled: boolean }>)
        .filter((p) => p.channel === 'EMAIL')
        .map((p) => [p.kind, p.enabled]),
    );
  const inAppPrefs = async (user: TestUser) =>
    (ok(await gql(t, user, Q.prefs)).notificationPreferences as Array<{ channel: string; enabled: boolean }>).filter((p) => p.channel === 'IN_APP').every((p) => p.enabled);

  /** A tribe by `owner` with a post; `member` commented on it (reply), `member2` reacted (reaction) and mentioned the owner. */
  const activity = async (before?: (owner: TestUser) => Promise<void>) => {
    const [owner, member, member2] = await Promise.all([1, 2, 3].map(() => signupUser(t)));
    await before?.(owner);
    const tribe = await createTribe(t, owner);
    for (const u of [member, member2]) await join(t, u, tribe.handle);
    const post = await createPost(t, owner, tribe.id);
    await consumeNotifications(t.deps);
    clock.advance(1000);
    ok(await gql(t, member, Q.comment, { p: post.id, i: { content: 'great post' } }));
    ok(await gql(t, member2, Q.react, { t: { postId: post.id }, k: 'LIKE' }));
    await createPost(t, member2, tribe.id, { content: `<p>thanks @${owner.username}</p>` });
    await consumeNotifications(t.deps);
    clock.advance(1000);
    return { owner, member, member2, tribe, post };
  };

  it('mails each user one digest of their unread notifications of email-enabled kinds, with a one-click unsubscribe', async () => {
    const { owner } = await activity();
    const [mail] = await digestFor(owner);
    expect(mail).toBeDefined();
    expect(mail.subject).toBe('You have 2 unread notifications');
    expect(mail.text).toMatch(/replied to your post/);
    expect(mail.text).toMatch(/mentioned you in a post/);
    expect(mail.text).not.toMatch(/reacted/); // reaction email is off by default
    expect(mail.text).toContain(`${PUBLIC_URL}/notifications`);
    expect(mail.headers['list-unsubscribe']).toMatch(new RegExp(`^<${PUBLIC_URL}/unsubscribe\\?token=[A-Za-z0-9_.-]+>$`));
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    // Once a day, and never the same notification twice.
    expect(await digestFor(owner)).toEqual([]);
    clock.advance(24 * 3_600_000);
    expect(await digestFor(owner)).toEqual([]);
  });

  it('follows the EMAIL preferences: a kind turned on is included, a kind turned off is left out', async () => {
    const { owner } = await activity(async (who) => {
      ok(await gql(t, who, Q.setPrefs, { p: [{ kind: 'reaction', channel: 'EMAIL', enabled: true }, { kind: 'mention', channel: 'EMAIL', enabled: false }] }));
    });
    const [mail] = await digestFor(owner);
    expect(mail.subject).toBe('You have 2 unread notifications');
    expect(mail.text).toMatch(/replied to your post/);
    expect(mail.text).toMatch(/reacted to your post/);
    expect(mail.text).not.toMatch(/mentioned you/);
  });

  it('sends nothing to a user whose EMAIL preferences are all off', async () => {
    const { owner } = await activity(async (who) => {
      const kinds = ['reply', 'mention', 'reaction', 'event_created', 'event_reminder', 'role_changed', 'win_approved', 'course_completed', 'message'];
      ok(await gql(t, who, Q.setPrefs, { p: kinds.map((kind) => ({ kind, channel: 'EMAIL', enabled: false })) }));
    });
    expect(await digestFor(owner)).toEqual([]);
  });

  it('leaves out read notifications, and tribes the user left', async () => {
    const { member, owner, tribe } = await activity();
    ok(await gql(t, owner, Q.mark));
    expect(await digestFor(owner)).toEqual([]);
    // The member is mentioned, then leaves the tribe before the digest.
    await createPost(t, owner, tribe.id, { content: `<p>hello @${member.username}</p>` });
    await consumeNotifications(t.deps);
    clock.advance(1000);
    ok(await gql(t, member, Q.leave, { h: tribe.handle }));
    expect(await digestFor(member)).toEqual([]);
  });

  it('turns off email for the digest\'s kinds with the one-click POST (RFC 8058), read back through notificationPreferences', async () => {
    const { owner, member, post } = await activity();
    const [mail] = await digestFor(owner);
    const before = await emailPrefs(owner);
    expect(before).toMatchObject({ reply: true, mention: true, reaction: false });

    const res = await t.api.post(headerLink(mail)).type('form').send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    const after = await emailPrefs(owner);
    expect(Object.values(after).every((on) => on === false)).toBe(true); // every kind that was on is off
    expect(await inAppPrefs(owner)).toBe(true); // in-app untouched
    // Nothing more is mailed: a new reply makes no digest.
    clock.advance(24 * 3_600_000);
    ok(await gql(t, member, Q.comment, { p: post.id, i: { content: 'another one' } }));
    await consumeNotifications(t.deps);
    clock.advance(1000);
    expect(await digestFor(owner)).toEqual([]);
  });

  it("turns off only one kind's email with that kind's link, after a GET confirmation page that changes nothing", async () => {
    const { owner } = await activity();
    const [mail] = await digestFor(owner);
    const link = kindLink(mail, 'replies');

    const page = await t.api.get(link);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<form method="post"');
    expect(page.text).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(await emailPrefs(owner)).toMatchObject({ reply: true, mention: true });

    expect((await t.api.post(link).type('form').send('List-Unsubscribe=One-Click')).status).toBe(200);
    expect(await emailPrefs(owner)).toMatchObject({ reply: false, mention: true, event_reminder: true, message: true });
    // Idempotent.
    expect((await t.api.post(link).type('form').send('List-Unsubscribe=One-Click')).status).toBe(200);
  });

  it('refuses a tampered token, one signed with another secret, and none at all (400), changing nothing', async () => {
    const { owner } = await activity();
    const [mail] = await digestFor(owner);
    const link = headerLink(mail);
    const token = new URL(`${PUBLIC_URL}${link}`).searchParams.get('token')!;
    const [payload, signature] = token.split('.');
    const flipped = `${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    // Someone else's user id under the owner's signature.
    const otherPayload = Buffer.from(`${'0'.repeat(8)}-0000-4000-8000-000000000000:reply`).toString('base64url');
    const foreign = signUnsubscribe('another secret, another secret, another secret', { userId: owner.id, kinds: ['reply', 'mention'] });
    for (const bad of [flipped, `${otherPayload}.${signature}`, foreign, 'garbage', '']) {
      const res = await t.api.post(`/unsubscribe?token=${encodeURIComponent(bad)}`).type('form').send('List-Unsubscribe=One-Click');
      expect(res.status).toBe(400);
      expect((await t.api.get(`/unsubscribe?token=${encodeURIComponent(bad)}`)).status).toBe(400);
    }
    expect((await t.api.post('/unsubscribe').type('form').send('List-Unsubscribe=One-Click')).status).toBe(400);
    expect(await emailPrefs(owner)).toMatchObject({ reply: true, mention: true });
  });
});
