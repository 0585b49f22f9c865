import { strict as assert } from 'node:assert';
import { compareExpiryFirst, compareHeadroomFirst, rankAccounts, rankContextFor, type Comparison, type RankCandidate, type RankContext } from '../../src/routing/ranking';
import { DAY, HOUR, MIN, NOW, acct, ids, snap } from './builders';

type Cmp = (a: RankCandidate, b: RankCandidate, ctx: RankContext) => Comparison;

/**
 * `first` must sort before `second` for `reason`, in both argument orders, within the
 * context of exactly these candidates (plus `others`).
 */
function assertBefore(cmp: Cmp, first: RankCandidate, second: RankCandidate, reason: string, others: RankCandidate[] = []): void {
  const ctx = rankContextFor([first, second, ...others]);
  const ab = cmp(first, second, ctx);
  const ba = cmp(second, first, ctx);
  assert.ok(ab.order < 0, `${first.id} before ${second.id}: got order ${ab.order} (${ab.reason})`);
  assert.equal(ab.reason, reason);
  assert.ok(ba.order > 0, `${second.id} after ${first.id}: got order ${ba.order} (${ba.reason})`);
  assert.equal(ba.reason, reason);
}

const E = compareExpiryFirst;
const H = compareHeadroomFirst;
const SONNET = { family: 'sonnet' } as const;

describe('routing/ranking expiry-first', () => {
  it('1 availability: usable before unusable, even against every later key', () => {
    // the unusable one has index 0, is primary, and its cooldown ends in a second
    const cooling = acct('a', 0, { primary: true, coolIn: 1_000, snap: snap({ s: { used: 0 }, w: { used: 0.99, resetIn: HOUR } }) });
    const usable = acct('b', 1, { snap: null }); // no evidence at all
    assertBefore(E, usable, cooling, 'availability');
    const hard = acct('c', 0, { snap: snap({ s: { status: 'rejected' } }) });
    assertBefore(E, usable, hard, 'availability');
    const scopedRejected = acct('d', 0, { ...SONNET, snap: snap({ scoped: { sonnet: { status: 'rejected' } } }) });
    assertBefore(E, acct('e', 5, { ...SONNET, snap: snap({ scoped: { sonnet: { used: 0.2 } } }) }), scopedRejected, 'availability');
  });

  it('2 cooldown_recovery: two unusable accounts order by earlier coolingUntil', () => {
    const later = acct('a', 0, { primary: true, coolIn: 10 * MIN, snap: snap({ s: { used: 0 } }) });
    const sooner = acct('b', 1, { coolIn: 2 * MIN, snap: null });
    assertBefore(E, sooner, later, 'cooldown_recovery');
    // a finite cooldown recovers before needs-sign-in (+∞) and before hard saturation (+∞)
    const signIn = acct('c', 0, { needsSignIn: true });
    assertBefore(E, later, signIn, 'cooldown_recovery');
    const hard = acct('d', 0, { snap: snap({ w: { status: 'rejected' } }) });
    assertBefore(E, later, hard, 'cooldown_recovery');
  });

  it('2 both unusable with equal recovery → insertion order, and nothing else is compared', () => {
    // b beats a on evidence, headroom, resets, weekly utilisation and primary — none of it counts
    const a = acct('a', 0, { coolIn: 5 * MIN, snap: null });
    const b = acct('b', 1, { coolIn: 5 * MIN, primary: true, snap: snap({ s: { used: 0.1, resetIn: MIN }, w: { used: 0.9, resetIn: HOUR } }) });
    assertBefore(E, a, b, 'insertion_order');
    assertBefore(H, a, b, 'insertion_order');
    // both +∞ (hard saturated vs needs sign-in)
    const hard = acct('h', 0, { snap: snap({ s: { status: 'rejected', resetIn: MIN } }) });
    const signIn = acct('s', 1, { needsSignIn: true, primary: true });
    assertBefore(E, hard, signIn, 'insertion_order');
  });

  it('3 quota_evidence: fresh/stale_known before refresh_due before unknown', () => {
    // the worse-evidence account has the better index, is primary and is otherwise emptier
    const fresh = acct('fresh', 2, { snap: snap({ s: { used: 0.9 }, w: { used: 0.1, resetIn: 6 * DAY } }) });
    const staleKnown = acct('stale', 2, { snap: snap({ age: 20 * MIN, s: { used: 0.9 } }) });
    const due = acct('due', 1, { primary: true, snap: snap({ age: 20 * MIN, unified: 'rejected' }) });
    const unknown = acct('unknown', 0, { primary: true, snap: null });
    assert.equal(due.metrics.freshness, 'refresh_due');
    assert.equal(staleKnown.metrics.freshness, 'stale_known');
    assertBefore(E, fresh, due, 'quota_evidence');
    assertBefore(E, staleKnown, due, 'quota_evidence');
    assertBefore(E, due, unknown, 'quota_evidence');
    assertBefore(E, fresh, unknown, 'quota_evidence');
  });

  it('4 session_headroom: not session-saturated before session-saturated', () => {
    const saturated = acct('a', 0, { primary: true, snap: snap({ s: { used: 0.97, resetIn: MIN }, w: { used: 0.9, resetIn: HOUR } }) });
    const open = acct('b', 1, { snap: snap({ s: { used: 0.5 } }) });
    assert.equal(saturated.metrics.softSaturated, true);
    assertBefore(E, open, saturated, 'session_headroom');
  });

  it('5 scoped_headroom: not scoped-saturated before scoped-saturated', () => {
    const sat = acct('a', 0, { ...SONNET, primary: true, snap: snap({ w: { used: 0.9, resetIn: HOUR }, scoped: { sonnet: { used: 0.98 } } }) });
    const open = acct('b', 1, { ...SONNET, snap: snap({ scoped: { sonnet: { used: 0.2 } } }) });
    assertBefore(E, open, sat, 'scoped_headroom');
  });

  describe('6 resets', () => {
    it('unsaturated pair: soonest weeklyReset first, even when its session resets later', () => {
      const soonWeekly = acct('b', 1, { snap: snap({ s: { resetIn: 4 * HOUR }, w: { used: 0.1, resetIn: 1 * DAY } }) });
      const lateWeekly = acct('a', 0, { primary: true, snap: snap({ s: { resetIn: 10 * MIN }, w: { used: 0.9, resetIn: 2 * DAY } }) });
      assertBefore(E, soonWeekly, lateWeekly, 'weekly_reset');
    });

    it('unsaturated pair, same weeklyReset: soonest session-reset bucket first', () => {
      const soon = acct('b', 1, { snap: snap({ s: { resetIn: 1 * HOUR } }) });
      const late = acct('a', 0, { primary: true, snap: snap({ s: { resetIn: 2 * HOUR }, w: { used: 0.9 } }) });
      assertBefore(E, soon, late, 'session_reset');
    });

    it('session-saturated pair: soonest session-reset bucket first, even when its weekly resets later', () => {
      const soonSession = acct('b', 1, { snap: snap({ s: { used: 0.98, resetIn: 30 * MIN }, w: { used: 0.1, resetIn: 3 * DAY } }) });
      const lateSession = acct('a', 0, { primary: true, snap: snap({ s: { used: 0.98, resetIn: 4 * HOUR }, w: { used: 0.9, resetIn: 1 * DAY } }) });
      assertBefore(E, soonSession, lateSession, 'session_reset');
      // the same two windows unsaturated order the other way round, by the weekly reset
      const b2 = acct('b', 1, { snap: snap({ s: { used: 0.5, resetIn: 30 * MIN }, w: { used: 0.1, resetIn: 3 * DAY } }) });
      const a2 = acct('a', 0, { snap: snap({ s: { used: 0.5, resetIn: 4 * HOUR }, w: { used: 0.9, resetIn: 1 * DAY } }) });
      assertBefore(E, a2, b2, 'weekly_reset');
    });

    it('session-saturated pair, same bucket: soonest weeklyReset first', () => {
      const soonWeekly = acct('b', 1, { snap: snap({ s: { used: 0.98, resetIn: 30 * MIN }, w: { used: 0.1, resetIn: 1 * DAY } }) });
      const lateWeekly = acct('a', 0, { primary: true, snap: snap({ s: { used: 0.98, resetIn: 30 * MIN + 1 }, w: { used: 0.9, resetIn: 2 * DAY } }) });
      assertBefore(E, soonWeekly, lateWeekly, 'weekly_reset');
    });

    it('two session resets in the same T-bucket tie (next step decides); 1 ms across a bucket edge separates', () => {
      const T = 15 * MIN;
      const bucketStart = Math.ceil((NOW + HOUR) / T) * T;
      // same bucket, 14 min apart: the later reset wins on weekly utilisation
      const early = acct('a', 0, { snap: snap({ s: { resetAt: bucketStart }, w: { used: 0.2 } }) });
      const late = acct('b', 1, { snap: snap({ s: { resetAt: bucketStart + 14 * MIN }, w: { used: 0.6 } }) });
      assert.equal(early.metrics.sessionResetBucket, late.metrics.sessionResetBucket);
      assertBefore(E, late, early, 'weekly_utilization');
      // different buckets, 1 ms apart: the earlier one wins despite lower weekly utilisation
      const justBefore = acct('a', 0, { snap: snap({ s: { resetAt: bucketStart - 1 }, w: { used: 0.2 } }) });
      const atEdge = acct('b', 1, { snap: snap({ s: { resetAt: bucketStart }, w: { used: 0.6 } }) });
      assertBefore(E, justBefore, atEdge, 'session_reset');
    });

    it('a ticking reset sorts before a window that is not ticking (+∞)', () => {
      const ticking = acct('b', 1, { snap: snap({ s: { resetIn: 4 * HOUR } }) });
      const renewed = acct('a', 0, { snap: snap({ s: { used: 0.9, resetIn: -1 }, w: { used: 0.99 } }) });
      assertBefore(E, ticking, renewed, 'session_reset');
    });
  });

  describe('7 scoped_utilization', () => {
    it('higher scopedUsed first when every candidate reports a scoped window', () => {
      const high = acct('b', 1, { ...SONNET, snap: snap({ w: { used: 0.1 }, scoped: { sonnet: { used: 0.8 } } }) });
      const low = acct('a', 0, { ...SONNET, primary: true, snap: snap({ w: { used: 0.9 }, scoped: { sonnet: { used: 0.3 } } }) });
      assertBefore(E, high, low, 'scoped_utilization');
      const ranked = rankAccounts([low, high], 'expiry-first');
      assert.deepEqual(ids(ranked.order), ['b', 'a']);
      assert.equal(ranked.reason, 'scoped_utilization');
    });

    it('is skipped when one candidate lacks a scoped window (weekly utilisation decides)', () => {
      const high = acct('b', 1, { ...SONNET, snap: snap({ w: { used: 0.1 }, scoped: { sonnet: { used: 0.8 } } }) });
      const low = acct('a', 0, { ...SONNET, snap: snap({ w: { used: 0.9 }, scoped: { sonnet: { used: 0.3 } } }) });
      const lacking = acct('c', 2, { ...SONNET, snap: snap({ w: { used: 0.0 } }) });
      assert.equal(lacking.metrics.hasScopedWindow, false);
      assertBefore(E, low, high, 'weekly_utilization', [lacking]);
      const ranked = rankAccounts([high, lacking, low], 'expiry-first');
      assert.deepEqual(ids(ranked.order), ['a', 'b', 'c']);
      assert.equal(ranked.reason, 'weekly_utilization');
      // an unusable candidate without the window also switches the step off (it belongs to the set)
      const coolingLacking = acct('d', 3, { ...SONNET, coolIn: MIN, snap: snap() });
      assert.equal(rankAccounts([high, low, coolingLacking], 'expiry-first').reason, 'weekly_utilization');
    });

    it('a scoped window older than 15 min does not count as reported', () => {
      const high = acct('b', 1, { ...SONNET, snap: snap({ w: { used: 0.1 }, scoped: { sonnet: { used: 0.8, age: 16 * MIN } } }) });
      const low = acct('a', 0, { ...SONNET, snap: snap({ w: { used: 0.9 }, scoped: { sonnet: { used: 0.3 } } }) });
      assertBefore(E, low, high, 'weekly_utilization');
    });
  });

  it('8 weekly_utilization: higher weeklyUsed first; weeklyUsed null sorts as −1', () => {
    const high = acct('b', 1, { snap: snap({ w: { used: 0.7 } }) });
    const low = acct('a', 0, { primary: true, snap: snap({ w: { used: 0.4 } }) });
    assertBefore(E, high, low, 'weekly_utilization');
    const zero = acct('b', 1, { snap: snap({ w: { used: 0 } }) });
    const missing = acct('a', 0, { primary: true, snap: snap({ w: { noUsed: true } }) });
    assert.equal(missing.metrics.weeklyUsed, null);
    assertBefore(E, zero, missing, 'weekly_utilization');
  });

  it('9 configured_primary: the configured primary first when everything else ties', () => {
    const primary = acct('b', 1, { primary: true });
    const other = acct('a', 0);
    assertBefore(E, primary, other, 'configured_primary');
  });

  it('10 insertion_order: the earlier configured account first', () => {
    assertBefore(E, acct('a', 0), acct('b', 1), 'insertion_order');
    assertBefore(E, acct('x', 0, { snap: null }), acct('y', 3, { snap: null }), 'insertion_order');
  });

  it('a comparator never returns NaN with +∞ values on both sides', () => {
    const a = acct('a', 0, { snap: snap({ s: null, w: null }) });
    const b = acct('b', 1, { snap: snap({ s: null, w: null }) });
    const c = E(a, b, rankContextFor([a, b]));
    assert.ok(!Number.isNaN(c.order));
    assert.equal(c.reason, 'insertion_order');
  });

  describe('rankAccounts', () => {
    it('one candidate → single_account; none → no_account', () => {
      const r = rankAccounts([acct('a', 0, { coolIn: MIN })], 'expiry-first');
      assert.deepEqual(ids(r.order), ['a']);
      assert.equal(r.reason, 'single_account');
      assert.equal(rankAccounts([], 'expiry-first').reason, 'no_account');
      assert.equal(rankAccounts([acct('a', 0)], 'headroom-first').reason, 'single_account');
    });

    it('the reason is the step that separates rank 0 from rank 1, not a later pair', () => {
      const a = acct('a', 0, { coolIn: MIN });
      const b = acct('b', 1, { snap: snap({ w: { used: 0.2 } }) });
      const c = acct('c', 2, { snap: snap({ w: { used: 0.6 } }) });
      const r = rankAccounts([a, b, c], 'expiry-first');
      assert.deepEqual(ids(r.order), ['c', 'b', 'a']);
      assert.equal(r.reason, 'weekly_utilization');
    });

    it('does not mutate its input', () => {
      const input = [acct('a', 0, { coolIn: MIN }), acct('b', 1)];
      rankAccounts(input, 'expiry-first');
      assert.deepEqual(ids(input), ['a', 'b']);
    });
  });
});

describe('routing/ranking headroom-first', () => {
  it('steps 1–5 are shared with expiry-first', () => {
    const usable = acct('b', 1, { snap: null });
    assertBefore(H, usable, acct('a', 0, { coolIn: MIN }), 'availability');
    assertBefore(H, acct('b', 1, { coolIn: MIN }), acct('a', 0, { coolIn: HOUR }), 'cooldown_recovery');
    assertBefore(H, acct('b', 1, { snap: snap({ s: { used: 0.9 } }) }), acct('a', 0, { snap: null }), 'quota_evidence');
    assertBefore(H, acct('b', 1, { snap: snap({ s: { used: 0.9 } }) }), acct('a', 0, { snap: snap({ s: { used: 0.97 } }) }), 'session_headroom');
    assertBefore(
      H,
      acct('b', 1, { ...SONNET, snap: snap({ w: { used: 0.9 }, scoped: { sonnet: { used: 0.1 } } }) }),
      acct('a', 0, { ...SONNET, snap: snap({ scoped: { sonnet: { used: 0.97 } } }) }),
      'scoped_headroom',
    );
  });

  it('headroom: more headroom first (min of session and weekly)', () => {
    // a: min(1-0.1, 1-0.8) = 0.2; b: min(1-0.6, 1-0.3) = 0.4
    const a = acct('a', 0, { primary: true, snap: snap({ s: { used: 0.1, resetIn: MIN }, w: { used: 0.8, resetIn: HOUR } }) });
    const b = acct('b', 1, { snap: snap({ s: { used: 0.6 }, w: { used: 0.3 } }) });
    assertBefore(H, b, a, 'headroom');
    // expiry-first would have chosen a (sooner weekly reset)
    assertBefore(E, a, b, 'weekly_reset');
  });

  it('headroom uses reset-freshened values: a renewed window counts as empty', () => {
    const renewed = acct('b', 1, { snap: snap({ s: { used: 0.9, resetIn: -1 }, w: { used: 0.2 } }) });
    const ticking = acct('a', 0, { snap: snap({ s: { used: 0.5 }, w: { used: 0.2 } }) });
    assertBefore(H, renewed, ticking, 'headroom');
  });

  it('unknown headroom sorts after every known headroom, even a tiny one', () => {
    const tiny = acct('b', 1, { snap: snap({ s: { used: 0.1 }, w: { used: 0.99 } }) });
    const unknownWeekly = acct('a', 0, { primary: true, snap: snap({ s: { used: 0 }, w: { noUsed: true, resetIn: HOUR } }) });
    assert.equal(unknownWeekly.metrics.headroom, null);
    assertBefore(H, tiny, unknownWeekly, 'headroom');
    const unknownSession = acct('c', 0, { primary: true, snap: snap({ s: { noUsed: true }, w: { used: 0, resetIn: HOUR } }) });
    assertBefore(H, tiny, unknownSession, 'headroom');
    // even zero or negative headroom (an account running on overage) beats unknown headroom
    const OVERAGE = { allowOverage: true } as const;
    const overdrawn = acct('d', 1, { ...OVERAGE, snap: snap({ w: { used: 1.2 }, overage: { status: 'allowed' } }) });
    const unknown = acct('e', 0, { ...OVERAGE, primary: true, snap: snap({ w: { noUsed: true, resetIn: HOUR } }) });
    assert.ok(overdrawn.metrics.usable && overdrawn.metrics.headroom! < 0);
    assertBefore(H, overdrawn, unknown, 'headroom');
  });

  it('equal headroom → soonest weekly reset', () => {
    const soon = acct('b', 1, { snap: snap({ w: { used: 0.5, resetIn: DAY } }) });
    const late = acct('a', 0, { primary: true, snap: snap({ w: { used: 0.5, resetIn: 2 * DAY } }) });
    assertBefore(H, soon, late, 'weekly_reset');
    // both unknown headroom → still the weekly reset decides
    const u1 = acct('b', 1, { snap: snap({ w: { noUsed: true, resetIn: DAY } }) });
    const u2 = acct('a', 0, { snap: snap({ w: { noUsed: true, resetIn: 2 * DAY } }) });
    assertBefore(H, u1, u2, 'weekly_reset');
  });

  it('equal headroom and weekly reset → configured primary, then insertion order', () => {
    // session resets differ: headroom-first has no session-reset step
    const primary = acct('b', 1, { primary: true, snap: snap({ s: { resetIn: 4 * HOUR } }) });
    const other = acct('a', 0, { snap: snap({ s: { resetIn: 10 * MIN } }) });
    assertBefore(H, primary, other, 'configured_primary');
    assertBefore(H, acct('a', 0, { snap: snap({ s: { resetIn: 4 * HOUR } }) }), acct('b', 1, { snap: snap({ s: { resetIn: 10 * MIN } }) }), 'insertion_order');
  });

  it('rankAccounts with headroom-first names the headroom reason', () => {
    const a = acct('a', 0, { snap: snap({ w: { used: 0.8 } }) });
    const b = acct('b', 1, { snap: snap({ w: { used: 0.2 } }) });
    const r = rankAccounts([a, b], 'headroom-first');
    assert.deepEqual(ids(r.order), ['b', 'a']);
    assert.equal(r.reason, 'headroom');
  });
});
