import { strict as assert } from 'node:assert';
import { SessionAffinityStore } from '../../src/routing/affinity';
import { planRoute, type PlanAccount, type PlanInput } from '../../src/routing/plan';
import { DEFAULT_POLICY, type RoutingPolicy } from '../../src/routing/policy';
import { rankAccounts } from '../../src/routing/ranking';
import { DAY, HOUR, MIN, NOW, SEC, acct, ids, planInput, snap } from './builders';

/** Three usable accounts the ranking orders c, b, a (weekly utilisation 0.8 / 0.5 / 0.2). */
function trio(extra: { a?: Parameters<typeof acct>[2]; b?: Parameters<typeof acct>[2]; c?: Parameters<typeof acct>[2] } = {}): PlanAccount[] {
  return [
    acct('a', 0, { snap: snap({ w: { used: 0.2 } }), ...extra.a }),
    acct('b', 1, { snap: snap({ w: { used: 0.5 } }), ...extra.b }),
    acct('c', 2, { snap: snap({ w: { used: 0.8 } }), ...extra.c }),
  ];
}
const bound = (account: string, at = NOW - MIN) => ({ account, lastServedAtMs: at });
const AFFINITY: Partial<RoutingPolicy> = { sessionAffinity: true };

describe('routing/plan planRoute', () => {
  it('plain fill-first: the ranking order, its reason, every modifier reported as not applied', () => {
    const p = planRoute(planInput(trio()));
    assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
    assert.deepEqual(p.rankingOrder, ['c', 'b', 'a']);
    assert.equal(p.selectionReason, 'weekly_utilization');
    assert.equal(p.spill, null);
    assert.equal(p.policyError, null);
    assert.deepEqual(p.affinity, { sessionBound: false, boundAccount: null, applied: false, skippedReason: 'disabled' });
  });

  describe('session affinity', () => {
    it('places a usable, non-saturated bound account first (session_affinity)', () => {
      const p = planRoute(planInput(trio(), AFFINITY, { binding: bound('a') }));
      assert.deepEqual(ids(p.order), ['a', 'c', 'b']);
      assert.equal(p.selectionReason, 'session_affinity');
      assert.deepEqual(p.rankingOrder, ['c', 'b', 'a'], 'the ranking order is kept for replay');
      assert.deepEqual(p.affinity, { sessionBound: true, boundAccount: 'a', applied: true, skippedReason: null });
    });

    it('skips an unusable bound account (unusable)', () => {
      const p = planRoute(planInput(trio({ a: { coolIn: MIN } }), AFFINITY, { binding: bound('a') }));
      assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
      assert.equal(p.selectionReason, 'weekly_utilization');
      assert.deepEqual(p.affinity, { sessionBound: true, boundAccount: 'a', applied: false, skippedReason: 'unusable' });
    });

    it('skips a bound account that is no longer offered (removed/disabled) or is a fallback (unusable)', () => {
      assert.equal(planRoute(planInput(trio(), AFFINITY, { binding: bound('gone') })).affinity.skippedReason, 'unusable');
      const withFallback = [...trio(), acct('f', 3, { fallback: true })];
      const p = planRoute(planInput(withFallback, AFFINITY, { binding: bound('f') }));
      assert.equal(p.affinity.skippedReason, 'unusable');
      assert.equal(p.order[0].id, 'c');
    });

    it('skips a session-saturated bound account (session_saturated), soft saturation included', () => {
      const p = planRoute(planInput(trio({ a: { snap: snap({ s: { used: 0.97 }, w: { used: 0.2 } }) } }), AFFINITY, { binding: bound('a') }));
      assert.equal(p.order[0].id, 'c');
      assert.equal(p.affinity.skippedReason, 'session_saturated');
      assert.equal(p.affinity.applied, false);
    });

    it('no live binding → expired; no session id → no_session; affinity off → disabled', () => {
      const expired = planRoute(planInput(trio(), AFFINITY, { binding: undefined }));
      assert.deepEqual(expired.affinity, { sessionBound: false, boundAccount: null, applied: false, skippedReason: 'expired' });
      const noSession = planRoute(planInput(trio(), AFFINITY, { sessionId: null, binding: undefined }));
      assert.equal(noSession.affinity.skippedReason, 'no_session');
      const off = planRoute(planInput(trio(), { sessionAffinity: false }, { binding: bound('a') }));
      assert.equal(off.affinity.skippedReason, 'disabled');
      assert.equal(off.affinity.applied, false);
      assert.equal(off.order[0].id, 'c');
    });
  });

  describe('prefer-primary', () => {
    const PRIMARY: Partial<RoutingPolicy> = { preferPrimary: true, primaryAccount: 'a' };

    it('puts the eligible configured primary first (preferred_primary)', () => {
      const p = planRoute(planInput(trio({ a: { primary: true } }), PRIMARY));
      assert.deepEqual(ids(p.order), ['a', 'c', 'b']);
      assert.equal(p.selectionReason, 'preferred_primary');
      assert.deepEqual(p.rankingOrder, ['c', 'b', 'a']);
    });

    it('does not move an ineligible primary (unusable or session-saturated)', () => {
      const cooling = planRoute(planInput(trio({ a: { primary: true, coolIn: MIN } }), PRIMARY));
      assert.deepEqual(ids(cooling.order), ['c', 'b', 'a']);
      assert.equal(cooling.selectionReason, 'weekly_utilization');
      const saturated = planRoute(planInput(trio({ a: { primary: true, snap: snap({ s: { used: 0.98 }, w: { used: 0.2 } }) } }), PRIMARY));
      assert.equal(saturated.order[0].id, 'c');
    });

    it('goes second when affinity placed the bound account first', () => {
      const p = planRoute(planInput(trio({ a: { primary: true } }), { ...PRIMARY, ...AFFINITY }, { binding: bound('b') }));
      assert.deepEqual(ids(p.order), ['b', 'a', 'c']);
      assert.equal(p.selectionReason, 'session_affinity');
    });

    it('changes nothing when the bound account is the primary', () => {
      const p = planRoute(planInput(trio({ a: { primary: true } }), { ...PRIMARY, ...AFFINITY }, { binding: bound('a') }));
      assert.deepEqual(ids(p.order), ['a', 'c', 'b']);
      assert.equal(p.selectionReason, 'session_affinity');
    });

    it('takes over when affinity was skipped', () => {
      const p = planRoute(planInput(trio({ a: { primary: true }, b: { coolIn: MIN } }), { ...PRIMARY, ...AFFINITY }, { binding: bound('b') }));
      assert.deepEqual(ids(p.order), ['a', 'c', 'b']);
      assert.equal(p.selectionReason, 'preferred_primary');
      assert.equal(p.affinity.skippedReason, 'unusable');
    });
  });

  describe('spill', () => {
    it('moves an unbound request to the first later usable account below N (from/to/inflight recorded)', () => {
      // c (rank 0) is full; b is unusable; a has room
      const p = planRoute(planInput(trio({ c: { inflight: 2 }, b: { coolIn: MIN } }), { spillInflight: 2 }));
      assert.deepEqual(ids(p.order), ['a', 'c', 'b']);
      assert.equal(p.selectionReason, 'spill_inflight');
      assert.deepEqual(p.spill, { from: 'c', to: 'a', inflight: 2 });
    });

    it('does nothing below N', () => {
      const p = planRoute(planInput(trio({ c: { inflight: 1 } }), { spillInflight: 2 }));
      assert.equal(p.order[0].id, 'c');
      assert.equal(p.spill, null);
    });

    it('changes nothing when no later usable account is below N; unusable and fallback accounts are never spill targets', () => {
      const accounts = [...trio({ a: { inflight: 2 }, b: { inflight: 5 }, c: { inflight: 3 } }), acct('x', 3, { coolIn: MIN }), acct('f', 4, { fallback: true })];
      const p = planRoute(planInput(accounts, { spillInflight: 2 }));
      assert.deepEqual(ids(p.order), ['c', 'b', 'a', 'x', 'f']);
      assert.equal(p.spill, null);
      assert.equal(p.selectionReason, 'weekly_utilization');
    });

    it('never moves a request with an active binding, even when the bound account is over N', () => {
      const p = planRoute(planInput(trio({ a: { inflight: 9 } }), { spillInflight: 1, ...AFFINITY }, { binding: bound('a') }));
      assert.equal(p.order[0].id, 'a');
      assert.equal(p.spill, null);
      assert.equal(p.selectionReason, 'session_affinity');
    });

    it('applies to a session whose affinity was skipped', () => {
      const p = planRoute(planInput(trio({ c: { inflight: 1 }, a: { coolIn: MIN } }), { spillInflight: 1, ...AFFINITY }, { binding: bound('a') }));
      assert.deepEqual(p.spill, { from: 'c', to: 'b', inflight: 1 });
    });

    it('spills away from a preferred primary that is full', () => {
      const p = planRoute(planInput(trio({ a: { primary: true, inflight: 3 } }), { spillInflight: 3, preferPrimary: true, primaryAccount: 'a' }));
      assert.deepEqual(p.spill, { from: 'a', to: 'c', inflight: 3 });
      assert.deepEqual(ids(p.order), ['c', 'a', 'b']);
    });

    it('spill-inflight 0 is off', () => {
      assert.equal(planRoute(planInput(trio({ c: { inflight: 50 } }), { spillInflight: 0 })).spill, null);
    });
  });

  describe('round-robin', () => {
    const RR: Partial<RoutingPolicy> = { strategy: 'round-robin', ...AFFINITY, preferPrimary: true, primaryAccount: 'c', spillInflight: 1 };
    const accounts = () => [acct('a', 0), acct('x', 1, { coolIn: MIN }), acct('b', 2), acct('c', 3, { primary: true, inflight: 7 }), acct('f', 4, { fallback: true })];

    it('rotates over the usable accounts in configured order; unusable and fallback accounts go last', () => {
      const orders = [0, 1, 2, 3, 4].map((cursor) => ids(planRoute(planInput(accounts(), RR, { roundRobinCursor: cursor, binding: bound('b') })).order));
      assert.deepEqual(orders, [
        ['a', 'b', 'c', 'x', 'f'],
        ['b', 'c', 'a', 'x', 'f'],
        ['c', 'a', 'b', 'x', 'f'],
        ['a', 'b', 'c', 'x', 'f'],
        ['b', 'c', 'a', 'x', 'f'],
      ]);
    });

    it('ignores the policy keys and never binds: affinity disabled, no spill, reason round_robin', () => {
      const p = planRoute(planInput(accounts(), RR, { roundRobinCursor: 2, binding: bound('b') }));
      assert.equal(p.selectionReason, 'round_robin');
      assert.deepEqual(p.affinity, { sessionBound: false, boundAccount: null, applied: false, skippedReason: 'disabled' });
      assert.equal(p.spill, null);
      assert.equal(p.verdicts.find((v) => v.account === 'a')!.reason, 'round_robin');
    });
  });

  describe('fallback accounts', () => {
    it('always come last, in configured order, even when their metrics are the best', () => {
      const accounts = [
        acct('f2', 0, { fallback: true, snap: snap({ w: { used: 0.99 } }) }),
        acct('a', 1, { snap: snap({ w: { used: 0.1 } }) }),
        acct('f1', 2, { fallback: true }),
        acct('b', 3, { snap: snap({ w: { used: 0.5 } }) }),
      ];
      const p = planRoute(planInput(accounts));
      assert.deepEqual(ids(p.order), ['b', 'a', 'f2', 'f1']);
      assert.deepEqual(p.rankingOrder, ['b', 'a'], 'fallback accounts are not ranked');
      assert.equal(p.verdicts.find((v) => v.account === 'f2')!.reason, 'fallback_last');
    });

    it('only fallback accounts → configured_order; nothing at all → no_account', () => {
      const p = planRoute(planInput([acct('f', 0, { fallback: true })]));
      assert.deepEqual(ids(p.order), ['f']);
      assert.equal(p.selectionReason, 'configured_order');
      const none = planRoute(planInput([]));
      assert.deepEqual(none.order, []);
      assert.equal(none.selectionReason, 'no_account');
    });
  });

  describe('quota routing off', () => {
    const OFF: Partial<RoutingPolicy> = { quotaRouting: false };

    it('uses the configured order, primary first, usable before unusable', () => {
      const p = planRoute(planInput(trio({ b: { primary: true } }), OFF));
      assert.deepEqual(ids(p.order), ['b', 'a', 'c']);
      assert.deepEqual(p.rankingOrder, ['b', 'a', 'c']);
      assert.equal(p.selectionReason, 'configured_order');
      assert.equal(p.verdicts.find((v) => v.account === 'c')!.reason, 'configured_order');
      const cooling = planRoute(planInput(trio({ a: { coolIn: MIN } }), OFF));
      assert.deepEqual(ids(cooling.order), ['b', 'c', 'a']);
    });

    it('affinity still applies', () => {
      const p = planRoute(planInput(trio({ b: { primary: true } }), { ...OFF, ...AFFINITY }, { binding: bound('c') }));
      assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
      assert.equal(p.selectionReason, 'session_affinity');
    });
  });

  describe('failure mode', () => {
    it('a policy step that throws yields plain expiry-first with routing_policy_error', () => {
      const policy = new Proxy(
        { ...DEFAULT_POLICY, sessionAffinity: true, preferPrimary: true, primaryAccount: 'a' },
        {
          get(target, key, receiver) {
            if (key === 'spillInflight') throw new Error('boom');
            return Reflect.get(target, key, receiver);
          },
        },
      ) as RoutingPolicy;
      const input: PlanInput = { accounts: trio({ a: { primary: true } }), policy, sessionId: 's', binding: bound('b'), roundRobinCursor: 0 };
      const p = planRoute(input);
      assert.deepEqual(ids(p.order), ['c', 'b', 'a'], 'no affinity, no prefer-primary');
      assert.equal(p.selectionReason, 'routing_policy_error');
      assert.equal(p.policyError, 'Error: boom');
      assert.equal(p.affinity.applied, false);
      assert.equal(p.spill, null);
      assert.equal(p.verdicts[0].reason, 'routing_policy_error');
    });

    it('a ranking that throws on its own key (headroom) falls back to expiry-first without throwing', () => {
      const throwingHeadroom = (a: PlanAccount): PlanAccount => ({
        ...a,
        metrics: new Proxy(a.metrics, {
          get(target, key, receiver) {
            if (key === 'headroom') throw new TypeError('no headroom');
            return Reflect.get(target, key, receiver);
          },
        }),
      });
      const accounts = trio().map(throwingHeadroom);
      const p = planRoute(planInput(accounts, { accountRanking: 'headroom-first' }));
      assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
      assert.equal(p.selectionReason, 'routing_policy_error');
      assert.equal(p.policyError, 'TypeError: no headroom');
      // losers are explained by the ranking that was actually used
      assert.deepEqual(
        p.verdicts.slice(1).map((v) => v.reason),
        ['weekly_utilization', 'weekly_utilization'],
      );
    });

    it('an affinity lookup that throws falls back to expiry-first', () => {
      const binding = {
        get account(): string {
          throw new Error('corrupt binding');
        },
        lastServedAtMs: NOW,
      };
      const p = planRoute(planInput(trio(), AFFINITY, { binding }));
      assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
      assert.equal(p.selectionReason, 'routing_policy_error');
      assert.equal(p.policyError, 'Error: corrupt binding');
    });
  });

  describe('verdicts', () => {
    it('name why each loser lost: comparator step, unusable reason, fallback', () => {
      const accounts = [
        acct('a', 0, { snap: snap({ w: { used: 0.3, resetIn: 2 * DAY } }) }),
        acct('b', 1, { snap: snap({ w: { used: 0.3, resetIn: 1 * DAY } }) }),
        acct('c', 2, { snap: snap({ s: { status: 'rejected' } }) }),
        acct('d', 3, { coolIn: MIN }),
        acct('e', 4, { snap: snap({ w: { used: 0.1, resetIn: 1 * DAY } }) }),
        acct('f', 5, { fallback: true }),
      ];
      const p = planRoute(planInput(accounts));
      assert.deepEqual(
        p.verdicts.map((v) => [v.account, v.rank, v.verdict, v.reason]),
        [
          ['b', 0, 'selected', 'weekly_utilization'],
          ['e', 1, 'ranked_below', 'weekly_utilization'],
          ['a', 2, 'ranked_below', 'weekly_reset'],
          ['d', 3, 'unusable', 'cooldown'],
          ['c', 4, 'unusable', 'hard_saturated'],
          ['f', 5, 'ranked_below', 'fallback_last'],
        ],
      );
    });

    it('an account the ranking preferred lost to the modifier that moved the winner', () => {
      const p = planRoute(planInput(trio(), AFFINITY, { binding: bound('b') }));
      assert.deepEqual(
        p.verdicts.map((v) => [v.account, v.reason]),
        [
          ['b', 'session_affinity'],
          ['c', 'session_affinity'],
          ['a', 'weekly_utilization'],
        ],
      );
      const spilled = planRoute(planInput(trio({ c: { inflight: 4 } }), { spillInflight: 4 }));
      assert.deepEqual(
        spilled.verdicts.map((v) => [v.account, v.reason]),
        [
          ['b', 'spill_inflight'],
          ['c', 'spill_inflight'],
          ['a', 'weekly_utilization'],
        ],
      );
    });
  });

  it('a transient cooldown on A keeps the session on B afterwards — no ping-pong', () => {
    const store = new SessionAffinityStore(HOUR);
    const policy: Partial<RoutingPolicy> = { sessionAffinity: true };
    // A is the ranking's favourite throughout (closest to done)
    const accountsAt = (now: number, coolingUntil?: number) => [
      acct('A', 0, {
        now,
        snap: snap({ w: { used: 0.9 } }),
        cooldown: coolingUntil ? { untilMs: coolingUntil, reason: 'overloaded', setAtMs: NOW } : undefined,
      }),
      acct('B', 1, { now, snap: snap({ w: { used: 0.4 } }) }),
    ];

    // t0: first request lands on A and binds it
    const t0 = NOW;
    const first = planRoute(planInput(accountsAt(t0), policy, { binding: store.get('s', t0) }));
    assert.equal(first.order[0].id, 'A');
    assert.equal(first.affinity.skippedReason, 'expired');
    store.bind('s', first.order[0].id, t0);

    // t1: A has a 5 s overload cooldown → affinity skipped (unusable), B serves and the session re-binds
    const t1 = t0 + 10 * SEC;
    const during = planRoute(planInput(accountsAt(t1, t1 + 5 * SEC), policy, { binding: store.get('s', t1) }));
    assert.deepEqual(ids(during.order), ['B', 'A']);
    assert.equal(during.affinity.skippedReason, 'unusable');
    assert.equal(during.selectionReason, 'availability');
    store.bind('s', during.order[0].id, t1);

    // t2: A's cooldown is over and A ranks first again — the session stays on B
    const t2 = t1 + 30 * SEC;
    const after = planRoute(planInput(accountsAt(t2, t1 + 5 * SEC), policy, { binding: store.get('s', t2) }));
    assert.deepEqual(after.rankingOrder, ['A', 'B'], 'the ranking alone would switch back');
    assert.deepEqual(ids(after.order), ['B', 'A']);
    assert.equal(after.selectionReason, 'session_affinity');
    assert.equal(after.affinity.boundAccount, 'B');
    // and a new session still goes to A
    const other = planRoute(planInput(accountsAt(t2, t1 + 5 * SEC), policy, { sessionId: 'other', binding: store.get('other', t2) }));
    assert.equal(other.order[0].id, 'A');
  });

  it('plans agree with rankAccounts for plain fill-first over random-ish sets', () => {
    const accounts = [
      acct('p', 0, { snap: null }),
      acct('q', 1, { snap: snap({ s: { used: 0.98 } }) }),
      acct('r', 2, { snap: snap({ w: { resetIn: HOUR } }) }),
      acct('s', 3, { coolIn: 2 * MIN }),
    ];
    const p = planRoute(planInput(accounts));
    const r = rankAccounts(accounts, 'expiry-first');
    assert.deepEqual(ids(p.order), ids(r.order));
    assert.equal(p.selectionReason, r.reason);
  });
});
