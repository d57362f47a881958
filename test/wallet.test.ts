import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'drizzle-orm';
import { recordOrderRefund } from '../subgraphs/commerce/ledger.js';
import { loadMigrations, migrate, openDatabase } from '../db/src/index.js';
import { loadConfig } from '../subgraphs/kernel/index.js';
import { grantStaff } from '../subgraphs/platform/index.js';
import { actor, createTribe, crew, join, markPaid, staffedTribe, unique, UNKNOWN_ID, type Actor, type Cast } from './factory.js';
import { gql, isolatedDatabase, movableClock, ok, sqlRows, startService, TEST_DATABASE_URL, type TestService, tamperedCursor } from './support.js';

const DAY = 86_400_000;
const PRICE = 4990; // BRL 49.90: a 5% fee is 249.5, rounded half up to 250; the tribe gets 4740
const SHARE = 4740;

const Q = {
  wallet: `query($c: ID!){ wallet(communityId: $c){ community { id } balances { currency pending available payoutRequested paidOut }
    openPayouts { id currency amount status } } }`,
  transactions: `query($c: ID!, $f: Int, $a: String){ walletTransactions(communityId: $c, first: $f, after: $a){
    edges { cursor node { id kind currency grossAmount feeAmount availableAt createdAt order { id } payout { id status } entries { account amount } } }
    pageInfo { hasNextPage endCursor } } }`,
  request: `mutation($c: ID!, $cur: String!, $a: Int!){ requestPayout(communityId: $c, currency: $cur, amount: $a){
    id currency amount status community { id } requestedBy { id } decidedBy { id } reason decidedAt } }`,
  payouts: `query($s: PayoutStatus, $f: Int, $a: String){ payouts(status: $s, first: $f, after: $a){
    edges { cursor node { id amount currency status community { id } reason } } pageInfo { hasNextPage endCursor } } }`,
  refundOrder: 'mutation($o: ID!, $a: Int){ refundOrder(orderId: $o, amount: $a){ id status refundedCents } }',
  paid: 'mutation($id: ID!){ markPayoutPaid(id: $id){ id status decidedBy { id } decidedAt reason } }',
  reject: 'mutation($id: ID!, $r: String!){ rejectPayout(id: $id, reason: $r){ id status decidedBy { id } decidedAt reason } }',
};

/** The wallet: the double-entry ledger of paid orders, refunds and payouts, balances, the hold, payouts by staff. */
describe('wallet', () => {
  let t: TestService;
  let cast: Cast;
  let otherCast: Cast;
  let staff: Actor;
  const clock = movableClock();

  beforeAll(async () => {
    // Sessions outlive the days the tests move the clock by.
    t = await startService({ SESSION_TTL_HOURS: String(24 * 365) }, clock.now);
    [cast, otherCast, staff] = await Promise.all([crew(t), crew(t), actor(t)]);
    await grantStaff(t.deps, staff.email, 'script');
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** The database's message of a refused statement (drizzle wraps it as the cause of "Failed query"). */
  const refusal = async (work: Promise<unknown>): Promise<string> => {
    try {
      await work;
    } catch (error) {
      const e = error as Error & { cause?: Error };
      return `${e.message} ${e.cause?.message ?? ''}`;
    }
    return 'not refused';
  };
  const reason = (out: { errors?: Array<{ extensions?: Record<string, any> }> }) => out.errors?.[0]?.extensions?.reason;
  const code = (out: { errors?: Array<{ extensions?: Record<string, any> }> }) => out.errors?.[0]?.extensions?.code;

  type Tribe = { tribe: { id: string; handle: string }; owner: Actor; member: Actor };
  /** A tribe of `people.owner` with `people.member` as its member (staffedTribe where the other roles matter). */
  async function lightTribe(people: Cast = cast): Promise<Tribe> {
    const tribe = await createTribe(t, people.owner);
    await join(t, people.member, tribe.handle);
    return { tribe, owner: people.owner, member: people.member };
  }

  /** A course order paid through the manual provider: `buyer` enrolls in a new paid course, the owner marks it paid. */
  async function paidOrder(s: Tribe, price = PRICE / 100, currency = 'BRL', buyer: Actor = s.member): Promise<string> {
    const course = ok(
      await gql(t, s.owner, 'mutation($c: ID!, $i: CreateCourseInput!){ createCourse(communityId: $c, input: $i){ id } }', {
        c: s.tribe.id,
        i: { title: `Paid ${unique()}`, accessType: 'paid', price, currency },
      }),
    ).createCourse;
    const enrolled = ok(await gql(t, buyer, 'mutation($c: ID!){ enrollCourse(courseId: $c){ status order { id } } }', { c: course.id })).enrollCourse;
    const orderId = enrolled.order.id as string;
    ok(await markPaid(t, s.owner, orderId));
    return orderId;
  }
  const walletOf = async (who: Actor, communityId: string) => ok(await gql(t, who, Q.wallet, { c: communityId })).wallet;
  const balance = async (s: { owner: Actor; tribe: { id: string } }, currency = 'BRL') =>
    (await walletOf(s.owner, s.tribe.id)).balances.find((b: { currency: string }) => b.currency === currency);
  const allTransactions = async (who: Actor, communityId: string) => {
    const out: any[] = [];
    let after: string | null = null;
    do {
      const page: any = ok(await gql(t, who, Q.transactions, { c: communityId, f: 50, a: after })).walletTransactions;
      out.push(...page.edges.map((e: any) => e.node));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    return out;
  };
  const refund = (orderId: string, amount: number, refundId = `re_${unique()}`) =>
    t.deps.database.db.transaction((tx) => recordOrderRefund(tx, { orderId, refundId, amount }, clock.now()));
  /** A tribe with `orders` paid orders of PRICE whose hold has ended. */
  async function tribeWithAvailable(orders: number, staffed = false) {
    const s = staffed ? await staffedTribe(t, cast) : { ...(await lightTribe()), admin: cast.admin, moderator: cast.moderator, outsider: cast.outsider };
    const ids: string[] = [];
    for (let i = 0; i < orders; i += 1) ids.push(await paidOrder(s));
    clock.advanceDays(8);
    return { ...s, orderIds: ids };
  }

  describe('configuration', () => {
    it('PLATFORM_FEE_BPS defaults to 500 and PAYOUT_HOLD_DAYS to 7; values out of range are refused', () => {
      expect(loadConfig({}).wallet).toEqual({ platformFeeBps: 500, payoutHoldDays: 7 });
      expect(loadConfig({ PLATFORM_FEE_BPS: '250', PAYOUT_HOLD_DAYS: '0' }).wallet).toEqual({ platformFeeBps: 250, payoutHoldDays: 0 });
      expect(() => loadConfig({ PLATFORM_FEE_BPS: '10001' })).toThrow(/PLATFORM_FEE_BPS/);
      expect(() => loadConfig({ PAYOUT_HOLD_DAYS: '-1' })).toThrow(/PAYOUT_HOLD_DAYS/);
    });
  });

  describe('paid orders', () => {
    it('a paid order credits the tribe pending balance with the price less the 5% fee (rounded half up) and the platform fee account', async () => {
      const s = await staffedTribe(t, cast);
      const orderId = await paidOrder(s);
      const w = await walletOf(s.owner, s.tribe.id);
      expect(w).toEqual({ community: { id: s.tribe.id }, balances: [{ currency: 'BRL', pending: SHARE, available: 0, payoutRequested: 0, paidOut: 0 }], openPayouts: [] });
      // admins read it too
      expect((await walletOf(s.admin, s.tribe.id)).balances).toEqual(w.balances);
      const [tx] = await allTransactions(s.owner, s.tribe.id);
      expect(tx).toMatchObject({ kind: 'ORDER_PAID', currency: 'BRL', grossAmount: PRICE, feeAmount: 250, order: { id: orderId }, payout: null });
      expect(tx.entries).toEqual([
        { account: 'platform_clearing', amount: -PRICE },
        { account: 'tribe_pending', amount: SHARE },
        { account: 'platform_fees', amount: 250 },
      ]);
      expect(new Date(tx.availableAt).getTime() - new Date(tx.createdAt).getTime()).toBe(7 * DAY);
      // Paying again records nothing twice.
      ok(await markPaid(t, s.owner, orderId));
      expect(await allTransactions(s.owner, s.tribe.id)).toHaveLength(1);
    });

    it('rounds the fee half up: 1010 cents pay a fee of 51 (50.5), 1009 cents one of 50 (50.45)', async () => {
      const s = await lightTribe();
      await paidOrder(s, 10.1);
      await paidOrder(s, 10.09);
      const fees = (await allTransactions(s.owner, s.tribe.id)).map((x) => [x.grossAmount, x.feeAmount]).sort();
      expect(fees).toEqual([[1009, 50], [1010, 51]]);
      expect(await balance(s)).toMatchObject({ pending: 959 + 959 });
    });
  });

  describe('the hold', () => {
    it('funds become available PAYOUT_HOLD_DAYS after payment, by the service clock', async () => {
      const s = await lightTribe();
      await paidOrder(s);
      clock.advance(7 * DAY - 60_000);
      expect(await balance(s)).toMatchObject({ pending: SHARE, available: 0 });
      clock.advance(120_000);
      expect(await balance(s)).toMatchObject({ pending: 0, available: SHARE });
      const [release] = await allTransactions(s.owner, s.tribe.id);
      expect(release).toMatchObject({ kind: 'RELEASE', entries: [{ account: 'tribe_pending', amount: -SHARE }, { account: 'tribe_available', amount: SHARE }] });
      // Reading again releases nothing twice.
      expect(await balance(s)).toMatchObject({ pending: 0, available: SHARE });
      expect(await allTransactions(s.owner, s.tribe.id)).toHaveLength(2);
    });
  });

  describe('refunds', () => {
    it('partial refunds reverse the tribe share and the fee proportionally, and add up to exactly the whole fee', async () => {
      const s = await lightTribe();
      const orderId = await paidOrder(s, 10.1); // fee 51, tribe 959
      const parts = [333, 333, 344].map((amount) => refund(orderId, amount));
      const done = [];
      for (const p of parts) done.push(await p);
      expect(done.map((d) => [d.amount, d.feeAmount, d.tribeAmount, d.from])).toEqual([
        [333, 17, 316, 'tribe_pending'],
        [333, 17, 316, 'tribe_pending'],
        [344, 17, 327, 'tribe_pending'],
      ]);
      expect(await balance(s)).toMatchObject({ pending: 0, available: 0 });
      const [fees] = await sqlRows(t, sql`select coalesce(sum(amount), 0)::int as n from ledger_entries where community_id = ${s.tribe.id} and account = 'platform_fees'`);
      expect(fees.n).toBe(0);
      // Nothing is left to refund, and nothing to release after the hold.
      await expect(refund(orderId, 1)).rejects.toMatchObject({ code: 'refund_exceeds_order' });
      clock.advanceDays(8);
      expect(await balance(s)).toMatchObject({ pending: 0, available: 0 });
      expect((await allTransactions(s.owner, s.tribe.id)).map((x) => x.kind)).toEqual(['REFUND', 'REFUND', 'REFUND', 'ORDER_PAID']);
    });

    it('a refund after the hold takes from available; a refund id recorded twice counts once', async () => {
      const s = await tribeWithAvailable(1);
      expect(await balance(s)).toMatchObject({ pending: 0, available: SHARE });
      const refundId = `re_${unique()}`; // a provider's refund id is unique across orders: a new one each run
      const first = await refund(s.orderIds[0], 1000, refundId);
      const again = await refund(s.orderIds[0], 1000, refundId);
      expect(first).toMatchObject({ created: true, amount: 1000, feeAmount: 50, tribeAmount: 950, from: 'tribe_available' });
      expect(again).toMatchObject({ created: false, transactionId: first.transactionId, amount: 1000, tribeAmount: 950 });
      expect(await balance(s)).toMatchObject({ pending: 0, available: SHARE - 950 });
      const [r] = await allTransactions(s.owner, s.tribe.id);
      expect(r).toMatchObject({ kind: 'REFUND', grossAmount: 1000, feeAmount: 50, order: { id: s.orderIds[0] } });
      expect(r.entries).toEqual([
        { account: 'platform_clearing', amount: 1000 },
        { account: 'tribe_available', amount: -950 },
        { account: 'platform_fees', amount: -50 },
      ]);
    });

    it('refundOrder over HTTP reverses the order in the wallet: a partial refund, then the rest', async () => {
      const s = await lightTribe();
      const orderId = await paidOrder(s);
      expect(ok(await gql(t, s.owner, Q.refundOrder, { o: orderId, a: 1000 })).refundOrder).toMatchObject({ status: 'partially_refunded', refundedCents: 1000 });
      expect(await balance(s)).toMatchObject({ pending: SHARE - 950, available: 0 });
      expect(ok(await gql(t, s.owner, Q.refundOrder, { o: orderId })).refundOrder).toMatchObject({ status: 'refunded', refundedCents: PRICE });
      expect(await balance(s)).toMatchObject({ pending: 0, available: 0 });
      const refunds = (await allTransactions(s.owner, s.tribe.id)).filter((x) => x.kind === 'REFUND');
      expect(refunds.map((x) => [x.grossAmount, x.feeAmount]).sort()).toEqual([[1000, 50], [3990, 200]]);
    });

    it('a refund the available balance cannot cover (paid out or requested) is refused and writes nothing', async () => {
      const s = await tribeWithAvailable(1);
      ok(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: SHARE }));
      const before = await sqlRows(t, sql`select count(*)::int as n from ledger_transactions where community_id = ${s.tribe.id}`);
      await expect(refund(s.orderIds[0], PRICE)).rejects.toMatchObject({ code: 'insufficient_funds' });
      expect(await sqlRows(t, sql`select count(*)::int as n from ledger_transactions where community_id = ${s.tribe.id}`)).toEqual(before);
      expect(await balance(s)).toMatchObject({ available: 0, payoutRequested: SHARE });
    });
  });

  describe('payouts', () => {
    it('the owner requests at most the available balance, one open request per currency; staff pay it', async () => {
      const s = await tribeWithAvailable(2);
      expect(await balance(s)).toMatchObject({ available: 2 * SHARE });
      const tooMuch = await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 2 * SHARE + 1 });
      expect([code(tooMuch), reason(tooMuch), tooMuch.errors?.[0].extensions?.details]).toEqual(['BAD_USER_INPUT', 'amount_exceeds_available', { available: 2 * SHARE }]);
      for (const [a, why] of [[0, 'invalid_amount'], [-5, 'invalid_amount']] as const) {
        expect(reason(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a }))).toBe(why);
      }
      expect(reason(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'brl', a: 100 }))).toBe('invalid_currency');
      expect(reason(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'USD', a: 100 }))).toBe('amount_exceeds_available');

      const payout = ok(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 5000 })).requestPayout;
      expect(payout).toMatchObject({ currency: 'BRL', amount: 5000, status: 'REQUESTED', community: { id: s.tribe.id }, requestedBy: { id: s.owner.id }, decidedBy: null });
      expect(await walletOf(s.owner, s.tribe.id)).toMatchObject({
        balances: [{ currency: 'BRL', pending: 0, available: 2 * SHARE - 5000, payoutRequested: 5000, paidOut: 0 }],
        openPayouts: [{ id: payout.id, amount: 5000, status: 'REQUESTED' }],
      });
      const second = await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 1 });
      expect([code(second), reason(second)]).toEqual(['CONFLICT', 'payout_already_open']);

      const listed = ok(await gql(t, staff, Q.payouts, { s: 'REQUESTED', f: 50 })).payouts.edges.map((e: any) => e.node);
      expect(listed).toContainEqual({ id: payout.id, amount: 5000, currency: 'BRL', status: 'REQUESTED', community: { id: s.tribe.id }, reason: null });
      const paid = ok(await gql(t, staff, Q.paid, { id: payout.id })).markPayoutPaid;
      expect(paid).toMatchObject({ id: payout.id, status: 'PAID', decidedBy: { id: staff.id }, reason: null });
      expect(await balance(s)).toEqual({ currency: 'BRL', pending: 0, available: 2 * SHARE - 5000, payoutRequested: 0, paidOut: 5000 });
      expect(reason(await gql(t, staff, Q.paid, { id: payout.id }))).toBe('payout_not_open');
      expect(ok(await gql(t, staff, Q.payouts, { s: 'PAID', f: 50 })).payouts.edges.map((e: any) => e.node.id)).toContain(payout.id);
      expect(ok(await gql(t, staff, Q.payouts, { s: 'REQUESTED', f: 50 })).payouts.edges.map((e: any) => e.node.id)).not.toContain(payout.id);
      const kinds = (await allTransactions(s.owner, s.tribe.id)).map((x) => x.kind);
      expect(kinds.slice(0, 2)).toEqual(['PAYOUT_PAID', 'PAYOUT_REQUESTED']);
      // Once decided, a new request in the currency is allowed.
      ok(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 1 }));
    });

    it('a rejected payout returns its amount to available, with the reason', async () => {
      const s = await tribeWithAvailable(1);
      const payout = ok(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: SHARE })).requestPayout;
      expect(await balance(s)).toMatchObject({ available: 0, payoutRequested: SHARE });
      expect(reason(await gql(t, staff, Q.reject, { id: payout.id, r: '   ' }))).toBe('invalid_reason');
      const rejected = ok(await gql(t, staff, Q.reject, { id: payout.id, r: 'Bank details missing' })).rejectPayout;
      expect(rejected).toMatchObject({ status: 'REJECTED', reason: 'Bank details missing', decidedBy: { id: staff.id } });
      expect(await balance(s)).toEqual({ currency: 'BRL', pending: 0, available: SHARE, payoutRequested: 0, paidOut: 0 });
      expect(reason(await gql(t, staff, Q.reject, { id: payout.id, r: 'again' }))).toBe('payout_not_open');
      expect(reason(await gql(t, staff, Q.paid, { id: payout.id }))).toBe('payout_not_open');
      expect(code(await gql(t, staff, Q.paid, { id: UNKNOWN_ID }))).toBe('NOT_FOUND');
      const [last] = await allTransactions(s.owner, s.tribe.id);
      expect(last).toMatchObject({ kind: 'PAYOUT_REJECTED', payout: { id: payout.id, status: 'REJECTED' }, entries: [{ account: 'tribe_payout_requested', amount: -SHARE }, { account: 'tribe_available', amount: SHARE }] });
    });

    it('only the owner requests a payout and only platform staff list, pay and reject payouts', async () => {
      const s = await tribeWithAvailable(1, true);
      for (const who of [s.admin, s.moderator, s.member, s.outsider, otherCast.owner]) {
        expect(code(await gql(t, who, Q.request, { c: s.tribe.id, cur: 'BRL', a: 100 }))).toBe('FORBIDDEN');
      }
      expect(code(await gql(t, null, Q.request, { c: s.tribe.id, cur: 'BRL', a: 100 }))).toBe('UNAUTHENTICATED');
      const payout = ok(await gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 100 })).requestPayout;
      for (const who of [s.owner, s.admin, s.member]) {
        expect(code(await gql(t, who, Q.payouts, {}))).toBe('FORBIDDEN');
        expect(code(await gql(t, who, Q.paid, { id: payout.id }))).toBe('FORBIDDEN');
        expect(code(await gql(t, who, Q.reject, { id: payout.id, r: 'no' }))).toBe('FORBIDDEN');
      }
      expect(code(await gql(t, null, Q.payouts, {}))).toBe('UNAUTHENTICATED');
      expect(await balance(s)).toMatchObject({ available: SHARE - 100, payoutRequested: 100, paidOut: 0 });
    });
  });

  describe('tribe isolation and paging', () => {
    it("another tribe's owner, its moderators, members and outsiders see no wallet (FORBIDDEN); an unknown id is NOT_FOUND", async () => {
      const s = await staffedTribe(t, cast);
      await paidOrder(s);
      const other = await lightTribe(otherCast);
      for (const who of [other.owner, s.moderator, s.member, s.outsider]) {
        expect(code(await gql(t, who, Q.wallet, { c: s.tribe.id }))).toBe('FORBIDDEN');
        expect(code(await gql(t, who, Q.transactions, { c: s.tribe.id }))).toBe('FORBIDDEN');
      }
      expect(code(await gql(t, null, Q.wallet, { c: s.tribe.id }))).toBe('UNAUTHENTICATED');
      expect(code(await gql(t, s.owner, Q.wallet, { c: 'nope' }))).toBe('NOT_FOUND');
      // The other tribe's wallet holds none of this tribe's money.
      expect((await walletOf(other.owner, other.tribe.id)).balances).toEqual([]);
    });

    it('walletTransactions pages newest first with keyset cursors; a changed cursor or one of another tribe is invalid_cursor', async () => {
      const s = await lightTribe();
      for (let i = 0; i < 3; i += 1) await paidOrder(s, 10 + i);
      clock.advanceDays(8);
      await balance(s); // releases: 6 transactions
      const all = await allTransactions(s.owner, s.tribe.id);
      expect(all).toHaveLength(6);
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page: any = ok(await gql(t, s.owner, Q.transactions, { c: s.tribe.id, f: 4, a: after })).walletTransactions;
        seen.push(...page.edges.map((e: any) => e.node.id));
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      } while (after);
      expect(seen).toEqual(all.map((x) => x.id));
      const times = all.map((x) => new Date(x.createdAt).getTime());
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const first = ok(await gql(t, s.owner, Q.transactions, { c: s.tribe.id, f: 2 })).walletTransactions;
      const cursor: string = first.pageInfo.endCursor;
      const tampered = tamperedCursor(cursor);
      const bad = await gql(t, s.owner, Q.transactions, { c: s.tribe.id, a: tampered });
      expect([code(bad), reason(bad)]).toEqual(['BAD_USER_INPUT', 'invalid_cursor']);
      const other = await lightTribe();
      expect(reason(await gql(t, other.owner, Q.transactions, { c: other.tribe.id, a: cursor }))).toBe('invalid_cursor');
      expect(reason(await gql(t, s.owner, Q.transactions, { c: s.tribe.id, f: 51 }))).toBe('invalid_first');
    });
  });

  describe('invariants', () => {
    it('the entries of every ledger transaction sum to zero per currency, and the database refuses one that does not', async () => {
      const unbalanced = await sqlRows(t, sql`
        select t.id from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
         group by t.id, e.currency having sum(e.amount) <> 0`);
      expect(unbalanced).toEqual([]);
      const few = await sqlRows(t, sql`select t.id from ledger_transactions t where (select count(*) from ledger_entries e where e.transaction_id = t.id) < 2`);
      expect(few).toEqual([]);
      expect((await sqlRows(t, sql`select count(*)::int as n from ledger_transactions`))[0].n).toBeGreaterThan(10);
      const s = await lightTribe();
      const attempt = (entries: Array<[string, number]>) =>
        t.deps.database.db.transaction(async (tx) => {
          const [row] = ((await tx.execute(sql`insert into ledger_transactions (community_id, kind, source_id, currency) values (${s.tribe.id}, 'refund', ${unique()}, 'BRL') returning id`)) as any).rows;
          for (const [account, amount] of entries) {
            await tx.execute(sql`insert into ledger_entries (transaction_id, community_id, account, currency, amount) values (${row.id}, ${s.tribe.id}, ${account}, 'BRL', ${amount})`);
          }
        });
      expect(await refusal(attempt([['platform_clearing', -100], ['platform_fees', 99]]))).toMatch(/does not balance/);
      expect(await refusal(attempt([]))).toMatch(/fewer than two entries/);
      await attempt([['platform_clearing', -100], ['platform_fees', 100]]);
    });

    it('no balance goes negative: the database refuses an entry that would take a tribe balance below zero', async () => {
      const negative = await sqlRows(t, sql`select * from ledger_balances where balance < 0`);
      expect(negative).toEqual([]);
      const feesBelowZero = await sqlRows(t, sql`
        select community_id, currency from ledger_entries where account = 'platform_fees' group by community_id, currency having sum(amount) < 0`);
      expect(feesBelowZero).toEqual([]);
      // The kept balances are the sums of the entries.
      const drift = await sqlRows(t, sql`
        select b.community_id from ledger_balances b
          left join (select community_id, currency, account, sum(amount) as total from ledger_entries group by 1, 2, 3) e using (community_id, currency, account)
         where b.balance <> coalesce(e.total, 0)`);
      expect(drift).toEqual([]);
      const s = await lightTribe();
      await paidOrder(s);
      const overdraw = t.deps.database.db.transaction(async (tx) => {
        const [row] = ((await tx.execute(sql`insert into ledger_transactions (community_id, kind, source_id, currency) values (${s.tribe.id}, 'refund', ${unique()}, 'BRL') returning id`)) as any).rows;
        await tx.execute(sql`insert into ledger_entries (transaction_id, community_id, account, currency, amount) values (${row.id}, ${s.tribe.id}, 'tribe_pending', 'BRL', ${-(SHARE + 1)})`);
        await tx.execute(sql`insert into ledger_entries (transaction_id, community_id, account, currency, amount) values (${row.id}, ${s.tribe.id}, 'platform_clearing', 'BRL', ${SHARE + 1})`);
      });
      expect(await refusal(overdraw)).toMatch(/ledger_balances_not_negative/);
      expect(await balance(s)).toMatchObject({ pending: SHARE });
    });

    it('the ledger is append-only: the database refuses UPDATE, DELETE and TRUNCATE', async () => {
      for (const statement of [
        sql`update ledger_entries set amount = amount + 1`,
        sql`delete from ledger_entries`,
        sql`update ledger_transactions set currency = 'USD'`,
        sql`delete from ledger_transactions`,
        sql`truncate ledger_entries`,
        sql`truncate ledger_transactions cascade`,
      ]) {
        expect(await refusal(t.deps.database.db.execute(statement))).toMatch(/is append-only/);
      }
    });

    it('20 concurrent attempts over HTTP, payout requests racing refunds, never overdraw: at most one open payout, every balance at or above zero', async () => {
      const s = await tribeWithAvailable(4);
      const start = 4 * SHARE; // 18960
      expect(await balance(s)).toMatchObject({ available: start });
      // 16 payout requests of 15000 (each alone would fit) and 4 full refunds (4740 of the tribe's each), all at once.
      const attempts = [
        ...Array.from({ length: 16 }, (_, i) => gql(t, s.owner, Q.request, { c: s.tribe.id, cur: 'BRL', a: 15_000 - i }).then((out) => ({ kind: 'payout' as const, out }))),
        ...s.orderIds.map((id) => gql(t, s.owner, Q.refundOrder, { o: id }).then((out) => ({ kind: 'refund' as const, out }))),
      ];
      const answers = await Promise.all(attempts);
      const payouts = answers.filter((a) => a.kind === 'payout');
      const refunds = answers.filter((a) => a.kind === 'refund');
      const granted = payouts.filter((a) => !a.out.errors).map((a) => a.out.data!.requestPayout.amount as number);
      expect(granted.length).toBeLessThanOrEqual(1);
      for (const a of payouts.filter((x) => x.out.errors)) expect(['payout_already_open', 'amount_exceeds_available']).toContain(reason(a.out));
      for (const a of refunds.filter((x) => x.out.errors)) expect([code(a.out), reason(a.out)]).toEqual(['CONFLICT', 'insufficient_funds']);
      const refunded = refunds.filter((a) => !a.out.errors).length;
      expect(granted.length + refunded).toBeGreaterThan(0);
      const taken = (granted[0] ?? 0) + refunded * SHARE;
      expect(taken).toBeLessThanOrEqual(start);
      const after = await balance(s);
      expect(after).toEqual({ currency: 'BRL', pending: 0, available: start - taken, payoutRequested: granted[0] ?? 0, paidOut: 0 });
      expect(after.available).toBeGreaterThanOrEqual(0);
      expect(await sqlRows(t, sql`select count(*)::int as n from payouts where community_id = ${s.tribe.id} and status = 'requested'`)).toEqual([{ n: granted.length }]);
      // A refused refund left its order paid: the order and the ledger agree.
      const statuses = await sqlRows(t, sql`select status, count(*)::int as n from orders where id = any(${`{${s.orderIds.join(',')}}`}::uuid[]) group by status order by status`);
      expect(statuses).toEqual([
        ...(refunds.length - refunded > 0 ? [{ status: 'paid', n: refunds.length - refunded }] : []),
        ...(refunded > 0 ? [{ status: 'refunded', n: refunded }] : []),
      ]);
    });
  });
});

const describeOnPostgres = TEST_DATABASE_URL ? describe : describe.skip;

describeOnPostgres('0018_wallet_ledger on orders paid before it', () => {
  it('backfills one order_paid transaction per paid order (default 5% fee, 7-day hold from paid_at); pending and free orders get none', async () => {
    const own = await isolatedDatabase({ empty: true });
    const db = await openDatabase({ url: own.url, poolSize: 1 });
    try {
      const all = await loadMigrations();
      const at = all.findIndex((m) => m.version === '0018_wallet_ledger');
      await migrate(db, all.slice(0, at));
      await db.pool!.query(`
        insert into users (id, email, username, display_name) values ('00000000-0000-4000-8000-0000000000a1', 'b@example.com', 'buyer', 'B');
        insert into communities (id, handle, name) values ('00000000-0000-4000-8000-0000000000c1', 'old', 'Old');
        insert into orders (community_id, buyer_id, product_type, amount_cents, currency, status, paid_at) values
          ('00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-0000000000a1', 'course', 1010, 'USD', 'paid', '2030-01-01T00:00:00Z'),
          ('00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-0000000000a1', 'event', 4990, 'BRL', 'pending', null),
          ('00000000-0000-4000-8000-0000000000c1', '00000000-0000-4000-8000-0000000000a1', 'challenge', 0, 'BRL', 'paid', '2030-01-01T00:00:00Z')`);
      expect(await migrate(db, all.slice(at))).toContain('0018_wallet_ledger');
      const txs = await db.pool!.query(`select kind, currency, gross_amount::int, fee_amount::int, created_at, available_at from ledger_transactions`);
      expect(txs.rows).toEqual([
        { kind: 'order_paid', currency: 'USD', gross_amount: 1010, fee_amount: 51, created_at: new Date('2030-01-01T00:00:00Z'), available_at: new Date('2030-01-08T00:00:00Z') },
      ]);
      const entries = await db.pool!.query(`select account, amount::int from ledger_entries order by id`);
      expect(entries.rows).toEqual([
        { account: 'platform_clearing', amount: -1010 },
        { account: 'tribe_pending', amount: 959 },
        { account: 'platform_fees', amount: 51 },
      ]);
      const balances = await db.pool!.query(`select currency, account, balance::int from ledger_balances`);
      expect(balances.rows).toEqual([{ currency: 'USD', account: 'tribe_pending', balance: 959 }]);
    } finally {
      await db.close();
      await own.drop();
    }
  }, 60_000);
});
