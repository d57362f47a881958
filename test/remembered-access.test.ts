import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { Remembered, type ChangeFeed } from '../db/src/index.js';
import { accessToken, createPost, createTribe, signupUser, type TestUser } from './factory.js';
import { sqlRows, startPgliteService, startService, TEST_DATABASE_URL, waitFor, type TestService } from './support.js';

/** A feed driven by hand: what a database's `changes` hears, for the cache's own rules. */
function handFeed() {
  const handlers: Array<(payload: string) => void> = [];
  return {
    listening: true,
    subscribe: (h: (payload: string) => void) => void handlers.push(h),
    announce: (payload: string) => handlers.forEach((h) => h(payload)),
  };
}

describe('Remembered: values kept across requests until a change is announced', () => {
  const counting = (values: Record<string, string>) => {
    const loads: string[][] = [];
    const load = async (keys: string[]) => {
      loads.push(keys);
      return keys.map((k) => values[k] ?? 'none');
    };
    return { loads, load };
  };

  it('reads what it does not hold once, and forgets a group when its prefix and id are announced', async () => {
    const feed = handFeed();
    const cache = new Remembered<string>(feed as ChangeFeed, 'm', 100);
    const values = { a: 'member', b: 'admin' };
    const { loads, load } = counting(values);
    expect(await cache.read('u1', ['a', 'b'], load)).toEqual(['member', 'admin']);
    expect(await cache.read('u1', ['b', 'c', 'a'], load)).toEqual(['admin', 'none', 'member']);
    expect(loads).toEqual([['a', 'b'], ['c']]);
    feed.announce('c:u1'); // another kind's prefix
    feed.announce('m:u2'); // another group
    await cache.read('u1', ['a', 'b', 'c'], load);
    expect(loads).toHaveLength(2);
    values.a = 'owner';
    feed.announce('m:u1');
    expect(await cache.read('u1', ['a', 'b'], load)).toEqual(['owner', 'admin']);
    expect(loads).toEqual([['a', 'b'], ['c'], ['a', 'b']]);
    feed.announce('*');
    await cache.read('u1', ['a'], load);
    expect(loads).toHaveLength(4);
  });

  it('does not remember a read during which a change was announced, nor anything while the feed is not listening', async () => {
    const feed = handFeed();
    const cache = new Remembered<string>(feed as ChangeFeed, 'u', 100);
    let value = 'old';
    let loads = 0;
    const slowLoad = async (keys: string[]) => {
      loads += 1;
      const seen = value;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return keys.map(() => seen);
    };
    const reading = cache.read('u1', [''], slowLoad);
    value = 'new';
    feed.announce('u:u1'); // committed while the read was on its way
    expect(await reading).toEqual(['old']); // that request read before the change: it may answer what it read
    expect(await cache.read('u1', [''], slowLoad)).toEqual(['new']);
    expect(loads).toBe(2);

    feed.listening = false;
    await cache.read('u2', [''], slowLoad);
    await cache.read('u2', [''], slowLoad);
    expect(loads).toBe(4);
  });

  it('starts again from nothing when it would hold more than its bound', async () => {
    const cache = new Remembered<string>(handFeed() as ChangeFeed, 'c', 3);
    const { loads, load } = counting({});
    await cache.readGroups(['t1', 't2', 't3'], load);
    await cache.readGroups(['t1', 't2', 't3'], load);
    expect(loads).toEqual([['t1', 't2', 't3']]);
    await cache.readGroups(['t4'], load);
    await cache.readGroups(['t1', 't4'], load);
    expect(loads).toEqual([['t1', 't2', 't3'], ['t4'], ['t1']]);
  });
});

/**
 * Issue 15: users (the caller's suspension, the authors), the tribe, the caller's role and challenges are read once and
 * remembered across requests; a change to any of them takes effect on the next request, whoever wrote it.
 */
describe('users, the tribe and the role remembered across requests', () => {
  let t: TestService;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let tribe: { id: string; handle: string };
  let memberToken: string;
  let outsiderToken: string;

  beforeAll(async () => {
    t = await startService();
    [owner, member, outsider] = await Promise.all([signupUser(t), signupUser(t), signupUser(t)]);
    tribe = await createTribe(t, owner, { isPublic: true });
    await t.deps.database.db.execute(sql`insert into members (community_id, user_id, role) values (${tribe.id}, ${member.id}, 'member')`);
    for (let i = 0; i < 3; i += 1) await createPost(t, owner, tribe.id, { content: `post ${i}`, visibility: 'members' });
    [memberToken, outsiderToken] = await Promise.all([accessToken(t, member), accessToken(t, outsider)]);
  });
  afterAll(async () => {
    await t.stop();
  });

  const posts = (token: string) => t.api.get(`/v1/communities/${tribe.id}/posts?per_page=50`).set('authorization', `Bearer ${token}`);
  /** Status and number of posts seen (a members-only post is hidden from outsiders of a public tribe). */
  const seen = async (token: string) => {
    const res = await posts(token);
    return { status: res.status, posts: res.body.data?.length ?? null, code: res.body.error?.code ?? null };
  };
  const statementsOf = async (token: string) => {
    const before = t.deps.database.stats.statements;
    const res = await posts(token);
    expect(res.status).toBe(200);
    return t.deps.database.stats.statements - before;
  };

  it('a repeated resource-API request runs only its page: the suspension, tribe, role and authors are not read again', async () => {
    expect(t.deps.database.changes.listening).toBe(true);
    const first = await posts(memberToken);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(3);
    expect(await statementsOf(memberToken)).toBe(1);
    expect(await statementsOf(memberToken)).toBe(1);
    const again = await posts(memberToken);
    expect(again.body).toEqual(first.body);
  });

  it('a change written through this process is seen by the very next request: suspension, membership, author, challenge, tribe', async () => {
    const db = t.deps.database.db;
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });
    await db.execute(sql`update users set suspended_at = now() where id = ${member.id}`);
    expect(await seen(memberToken)).toEqual({ status: 401, posts: null, code: 'unauthorized' });
    await db.execute(sql`update users set suspended_at = null where id = ${member.id}`);
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });

    await db.execute(sql`delete from members where community_id = ${tribe.id} and user_id = ${member.id}`);
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 0, code: null }); // an outsider of a public tribe
    await db.execute(sql`insert into members (community_id, user_id, role) values (${tribe.id}, ${member.id}, 'member')`);
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });

    const authorName = async () => (await posts(memberToken)).body.data[0].author.display_name;
    const name = await authorName();
    expect(name).toMatch(/^User /);
    await db.execute(sql`update users set display_name = 'Renamed owner' where id = ${owner.id}`);
    expect(await authorName()).toBe('Renamed owner');
    await db.execute(sql`update users set display_name = ${name} where id = ${owner.id}`);
    expect(await authorName()).toBe(name);

    const [challenge] = await sqlRows<{ id: string }>(
      t,
      sql`insert into challenges (community_id, title, duration_days, challenge_type, access_type)
          values (${tribe.id}, 'Thirty days', 30, 'daily', 'free') returning id`,
    );
    const challengeTitle = async () =>
      (await t.api.get(`/v1/communities/${tribe.id}/challenges/${challenge.id}`).set('authorization', `Bearer ${memberToken}`)).body.data?.title;
    expect(await challengeTitle()).toBe('Thirty days');
    await db.execute(sql`update challenges set title = 'Forty days' where id = ${challenge.id}`);
    expect(await challengeTitle()).toBe('Forty days');

    expect(await seen(outsiderToken)).toEqual({ status: 200, posts: 0, code: null });
    await db.execute(sql`update communities set is_public = false where id = ${tribe.id}`);
    expect(await seen(outsiderToken)).toEqual({ status: 403, posts: null, code: 'forbidden' });
    await db.execute(sql`update communities set is_public = true where id = ${tribe.id}`);
    expect(await seen(outsiderToken)).toEqual({ status: 200, posts: 0, code: null });
  });

  it('a change inside a transaction is seen when it commits, not before, and a rolled-back one never', async () => {
    const db = t.deps.database.db;
    await db.transaction(async (tx) => {
      await tx.execute(sql`update users set suspended_at = now() where id = ${member.id}`);
      expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });
    });
    expect(await seen(memberToken)).toEqual({ status: 401, posts: null, code: 'unauthorized' });
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`update users set suspended_at = null where id = ${member.id}`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await seen(memberToken)).toEqual({ status: 401, posts: null, code: 'unauthorized' });
    await db.execute(sql`update users set suspended_at = null where id = ${member.id}`);
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });
  });

  (TEST_DATABASE_URL ? it : it.skip)('a change written by another process is seen as soon as PostgreSQL delivers it', async () => {
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });
      await other.query('update users set suspended_at = now() where id = $1', [member.id]);
      await waitFor(async () => (await seen(memberToken)).status === 401, 2_000, 'the suspension to be heard');
      await other.query('update users set suspended_at = null where id = $1', [member.id]);
      await waitFor(async () => (await seen(memberToken)).status === 200, 2_000, 'the lifted suspension to be heard');
      await other.query('update members set role = $1 where community_id = $2 and user_id = $3', ['moderator', tribe.id, member.id]);
      await other.query('delete from members where community_id = $1 and user_id = $2', [tribe.id, member.id]);
      await waitFor(async () => (await seen(memberToken)).posts === 0, 2_000, 'the removal to be heard');
      await other.query(`insert into members (community_id, user_id, role) values ($1, $2, 'member')`, [tribe.id, member.id]);
      await waitFor(async () => (await seen(memberToken)).posts === 3, 2_000, 'the new membership to be heard');
    } finally {
      await other.end();
    }
  });

  (TEST_DATABASE_URL ? it : it.skip)('when every listening connection is gone, what was remembered is forgotten: a change of the gap is seen', async () => {
    expect(await seen(memberToken)).toEqual({ status: 200, posts: 3, code: null });
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      // The service's connections end (a database restart does the same); the suspension is written before any
      // connection of the service listens again, so no connection of the service hears it.
      const pool = t.deps.database.pool!;
      const pids = await Promise.all(
        Array.from({ length: pool.totalCount }, async () => {
          const client = await pool.connect();
          const { rows } = await client.query('select pg_backend_pid() as pid');
          return { client, pid: rows[0].pid as number };
        }),
      );
      await other.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids.map((p) => p.pid)]);
      await waitFor(() => !t.deps.database.changes.listening, 2_000, 'the service to stop listening');
      await other.query('update users set suspended_at = now() where id = $1', [member.id]);
      for (const p of pids) p.client.release(true);
      await pool.query('select 1'); // a new connection listens again, too late to hear the suspension
      expect(t.deps.database.changes.listening).toBe(true);
      expect(await seen(memberToken)).toEqual({ status: 401, posts: null, code: 'unauthorized' });
      await other.query('update users set suspended_at = null where id = $1', [member.id]);
      await waitFor(async () => (await seen(memberToken)).status === 200, 2_000, 'the lifted suspension to be heard');
    } finally {
      await other.end();
    }
  });

  (TEST_DATABASE_URL ? it : it.skip)('the triggers announce each kind of change, and one statement of more than 100 rows as everything', async () => {
    const listener = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (m) => heard.push(m.payload ?? ''));
    await listener.query('listen svc_changes');
    try {
      const db = t.deps.database.db;
      await db.execute(sql`update users set display_name = display_name where id = ${member.id}`); // nothing changes
      await db.execute(sql`update members set xp = xp + 5, last_active_at = now() where user_id = ${member.id}`); // not a role
      await db.execute(sql`update users set display_name = 'Renamed' where id = ${member.id}`);
      await db.execute(sql`update users set suspension_reason = 'spam', suspended_at = now() where id = ${member.id}`);
      await db.execute(sql`update users set suspension_reason = null, suspended_at = null where id = ${member.id}`);
      await db.execute(sql`update members set role = 'moderator' where community_id = ${tribe.id} and user_id = ${member.id}`);
      await db.execute(sql`update members set role = 'member' where community_id = ${tribe.id} and user_id = ${member.id}`);
      await db.execute(sql`update communities set name = 'Renamed' where id = ${tribe.id}`);
      const [challenge] = await sqlRows<{ id: string }>(
        t,
        sql`insert into challenges (community_id, title, duration_days, challenge_type, access_type)
            values (${tribe.id}, 'Announced', 7, 'daily', 'free') returning id`,
      );
      await db.execute(sql`update challenges set description = 'changed' where id = ${challenge.id}`);
      const many = await sqlRows<{ id: string }>(
        t,
        sql`insert into users (email, username, display_name)
            select 'bulk-' || i || '-' || ${tribe.id} || '@example.com', 'bulk' || i || substr(${tribe.id}, 1, 8), 'Bulk'
            from generate_series(1, 101) i returning id`,
      );
      await db.execute(sql`insert into members (community_id, user_id, role) select ${tribe.id}, id, 'member' from users where id = ${many[0].id}`);
      await waitFor(() => heard.length >= 10, 2_000, 'the announcements');
      expect(heard).toEqual([
        `u:${member.id}`,
        `u:${member.id}`,
        `u:${member.id}`,
        `m:${member.id}`,
        `m:${member.id}`,
        `c:${tribe.id}`,
        `h:${challenge.id}`,
        `h:${challenge.id}`,
        '*',
        `m:${many[0].id}`,
      ]);
    } finally {
      await listener.end();
    }
  });
});

describe('remembered access on embedded PGlite', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startPgliteService();
  }, 120_000);
  afterAll(async () => {
    await t.stop();
  });

  it('remembers, and hears its own changes as they commit', async () => {
    expect(t.deps.database.kind).toBe('pglite');
    const [owner, member] = await Promise.all([signupUser(t), signupUser(t)]);
    const tribe = await createTribe(t, owner, { isPublic: false });
    await createPost(t, owner, tribe.id, { content: 'hello' });
    const token = await accessToken(t, member);
    const posts = async () => (await t.api.get(`/v1/communities/${tribe.id}/posts`).set('authorization', `Bearer ${token}`)).status;
    expect(await posts()).toBe(403);
    await t.deps.database.db.execute(sql`insert into members (community_id, user_id, role) values (${tribe.id}, ${member.id}, 'member')`);
    expect(await posts()).toBe(200);
    const before = t.deps.database.stats.statements;
    expect(await posts()).toBe(200);
    expect(t.deps.database.stats.statements - before).toBe(1);
    await t.deps.database.db.execute(sql`update users set suspended_at = now() where id = ${member.id}`);
    expect(await posts()).toBe(401);
    await t.deps.database.db.execute(sql`update users set suspended_at = null where id = ${member.id}`);
    await t.deps.database.db.execute(sql`update communities set suspended_at = now() where id = ${tribe.id}`);
    expect(await posts()).toBe(200); // a suspended tribe is read-only, still readable
    await t.deps.database.db.execute(sql`delete from members where community_id = ${tribe.id} and user_id = ${member.id}`);
    expect(await posts()).toBe(403);
  });
});
