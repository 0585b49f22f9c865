import { strict as assert } from 'node:assert';
import { planRoute, type PlanAccount } from '../../../src/routing/plan';
import { STRATEGY_NAMES, STRATEGIES } from '../../../src/routing/planner/strategies/registry';
import { weightsOf, WEIGHTED_PRESETS } from '../../../src/routing/planner/strategies/weighted';
import type { RoutingPolicy } from '../../../src/routing/policy';
import { DAY, HOUR, MIN, NOW, acct, ids, planInput, snap } from '../builders';

const plan = (accounts: PlanAccount[], policy: Partial<RoutingPolicy>, rest: Parameters<typeof planInput>[2] = {}, requestId = 'req-1') =>
  planRoute({ ...planInput(accounts, policy, rest), requestId, nowMs: NOW });
const bound = (account: string) => ({ account, lastServedAtMs: NOW - MIN });
const w = (used: number, resetIn = 4 * DAY, s = 0.2) => snap({ w: { used, resetIn }, s: { used: s, resetIn: 3 * HOUR } });

describe('routing/planner: the strategy catalogue', () => {
  it('registers every strategy of the issue table, each with a one-line summary', () => {
    assert.deepEqual(STRATEGY_NAMES, [
      'fill-first',
      'round-robin',
      'capacity-weighted',
      'relative-availability',
      'usage-weighted',
      'sequential-drain',
      'reset-drain',
      'single-account',
      'weighted',
      'forecast',
    ]);
    for (const [name, s] of Object.entries(STRATEGIES)) {
      assert.equal(s.name, name);
      assert.ok(s.summary.length > 10 && !s.summary.includes('\n'));
    }
  });

  it('every strategy gives the no-account path with nothing eligible: unusable accounts only, no usable first choice', () => {
    const dead = [acct('a', 0, { coolIn: MIN }), acct('b', 1, { needsSignIn: true })];
    for (const name of STRATEGY_NAMES) {
      const p = plan(dead, { strategy: name });
      assert.ok(
        p.order.every((a) => !a.metrics.usable),
        name,
      );
      assert.equal(plan([], { strategy: name }).selectionReason, 'no_account', name);
    }
  });

  it('usage-weighted: lowest weekly used first, then lowest 5h used', () => {
    const p = plan([acct('a', 0, { snap: w(0.5) }), acct('b', 1, { snap: w(0.2, 4 * DAY, 0.6) }), acct('c', 2, { snap: w(0.2, 4 * DAY, 0.1) })], { strategy: 'usage-weighted' });
    assert.deepEqual(ids(p.order), ['c', 'b', 'a']);
    assert.equal(p.selectionReason, 'least_used');
    assert.equal(p.verdicts[2].reason, 'least_used');
  });

  it('sequential-drain: configured order; the next only when the one before is ineligible; affinity applies, spill does not', () => {
    const accounts = [acct('a', 0, { coolIn: MIN }), acct('b', 1, { snap: w(0.9), inflight: 9 }), acct('c', 2, { snap: w(0.1) })];
    const p = plan(accounts, { strategy: 'sequential-drain', spillInflight: 1 });
    assert.deepEqual(ids(p.order), ['b', 'c', 'a']);
    assert.equal(p.spill, null);
    const stuck = plan(accounts, { strategy: 'sequential-drain', sessionAffinity: true }, { binding: bound('c') });
    assert.equal(stuck.order[0].id, 'c');
    assert.equal(stuck.selectionReason, 'session_affinity');
  });

  it('reset-drain: weekly reset by whole day (soonest first), then most remaining', () => {
    const accounts = [
      acct('a', 0, { snap: w(0.7, 2 * DAY) }),
      acct('b', 1, { snap: w(0.2, 1 * DAY + HOUR) }),
      acct('c', 2, { snap: w(0.5, 1 * DAY + 2 * HOUR) }),
      acct('d', 3, { snap: w(0.1, 3 * DAY) }),
    ];
    // NOW is 12:00 UTC: b (day+1, 13:00) and c (day+1, 14:00) share a day bucket.
    const p = plan(accounts, { strategy: 'reset-drain' });
    assert.deepEqual(ids(p.order), ['b', 'c', 'a', 'd']);
    assert.equal(p.selectionReason, 'remaining_capacity');
    assert.deepEqual(
      p.verdicts.map((v) => v.reason),
      ['remaining_capacity', 'remaining_capacity', 'reset_bucket', 'reset_bucket'],
    );
  });

  it('single-account: only the pinned account (label, else the primary), no failover, no fallback', () => {
    const accounts = [acct('a', 0), acct('b', 1, { primary: true }), acct('f', 2, { fallback: true })];
    assert.deepEqual(ids(plan(accounts, { strategy: 'single-account', primaryAccount: 'b' }).order), ['b']);
    assert.deepEqual(ids(plan(accounts, { strategy: 'single-account', singleAccountLabel: 'a' }).order), ['a']);
    const cooled = [acct('a', 0, { coolIn: MIN }), acct('b', 1)];
    const p = plan(cooled, { strategy: 'single-account', singleAccountLabel: 'a' });
    assert.deepEqual(ids(p.order), ['a'], 'the ineligible pinned account is all there is: the attempt loop answers "no usable account"');
    assert.equal(p.verdicts[0].filter.code, 'cooling');
    assert.deepEqual(plan(cooled, { strategy: 'single-account', singleAccountLabel: 'gone' }).order, []);
  });

  it('round-robin and single-account: no modifier applies', () => {
    const accounts = [acct('a', 0, { inflight: 5 }), acct('b', 1), acct('c', 2)];
    for (const strategy of ['round-robin', 'single-account']) {
      const p = plan(accounts, { strategy, sessionAffinity: true, spillInflight: 1, preferPrimary: true, primaryAccount: 'c', singleAccountLabel: 'a' }, { binding: bound('b') });
      assert.equal(p.order[0].id, 'a', strategy);
      assert.equal(p.affinity.applied, false);
      assert.equal(p.spill, null);
    }
  });

  it('capacity-weighted: a draw weighted by remaining weekly capacity, seeded by the request id', () => {
    const accounts = [acct('a', 0, { snap: w(0.9) }), acct('b', 1, { snap: w(0.1) })];
    const wins = { a: 0, b: 0 };
    for (let i = 0; i < 2000; i++) wins[plan(accounts, { strategy: 'capacity-weighted' }, {}, `req-${i}`).order[0].id as 'a' | 'b']++;
    // weights 0.1 : 0.9 → b wins about 90 %.
    assert.ok(wins.b > 1700 && wins.b < 1900, JSON.stringify(wins));
    assert.deepEqual(ids(plan(accounts, { strategy: 'capacity-weighted' }, {}, 'x').order), ids(plan(accounts, { strategy: 'capacity-weighted' }, {}, 'x').order));
    assert.equal(plan(accounts, { strategy: 'capacity-weighted' }).selectionReason, 'capacity_draw');
  });

  it('relative-availability: draws only among the top k by remaining ÷ time to reset', () => {
    const accounts = [
      acct('a', 0, { snap: w(0.5, 6 * DAY) }), // 0.5 / 144 h
      acct('b', 1, { snap: w(0.5, 1 * DAY) }), // 0.5 / 24 h
      acct('c', 2, { snap: w(0.2, 2 * DAY) }), // 0.8 / 48 h
    ];
    const firsts = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const p = plan(accounts, { strategy: 'relative-availability' }, {}, `r${i}`);
      firsts.add(p.order[0].id);
      assert.equal(p.order[2].id, 'a', 'the least available is outside the top 2 and goes after them');
    }
    assert.deepEqual([...firsts].sort(), ['b', 'c']);
    const top1 = plan(accounts, { strategy: 'relative-availability', relativeAvailabilityTopK: 1 });
    assert.deepEqual(ids(top1.order), ['b', 'c', 'a']);
  });

  it('weighted: score terms, presets, spill only, and ties by the session hash', () => {
    assert.deepEqual(weightsOf({ ...planInput([]).policy, weightedPreset: 'priority', weights: { load: 0.5 } }), { ...WEIGHTED_PRESETS.priority, load: 0.5 });
    const accounts = [acct('a', 0, { snap: w(0.2) }), acct('b', 1, { snap: w(0.6) })];
    // sticky-headroom: the owner keeps the session despite less headroom.
    const sticky = plan(accounts, { strategy: 'weighted', sessionAffinity: true }, { binding: bound('b') });
    assert.equal(sticky.order[0].id, 'b');
    assert.equal(sticky.affinity.applied, true);
    assert.equal(sticky.selectionReason, 'weighted_score');
    const headroom = plan(accounts, { strategy: 'weighted', weightedPreset: 'headroom', sessionAffinity: true }, { binding: bound('b') });
    assert.equal(headroom.order[0].id, 'a');
    assert.equal(headroom.affinity.applied, false);
    // priority: higher first; cost-tiered: cheaper first.
    const tiered = [
      { ...acct('a', 0), priority: 1, costTier: 3 },
      { ...acct('b', 1), priority: 5, costTier: 1 },
    ];
    assert.equal(plan(tiered, { strategy: 'weighted', weightedPreset: 'priority' }).order[0].id, 'b');
    assert.equal(plan(tiered, { strategy: 'weighted', weightedPreset: 'cost-tiered' }).order[0].id, 'b');
    // least-loaded, with spill still acting.
    const loaded = [acct('a', 0, { inflight: 3 }), acct('b', 1, { inflight: 1 })];
    assert.equal(plan(loaded, { strategy: 'weighted', weightedPreset: 'least-loaded' }).order[0].id, 'b');
    const ranked = [
      { ...acct('a', 0, { inflight: 3 }), priority: 2 },
      { ...acct('b', 1, { inflight: 1 }), priority: 1 },
    ];
    const spilled = plan(ranked, { strategy: 'weighted', weightedPreset: 'priority', spillInflight: 2 });
    assert.deepEqual(spilled.spill, { from: 'a', to: 'b', inflight: 3 });
    // Equal scores: the order depends on the session key only, and is stable for it.
    const same = [acct('a', 0), acct('b', 1), acct('c', 2), acct('d', 3)];
    const bySession = (s: string) => ids(plan(same, { strategy: 'weighted', weightedPreset: 'priority' }, { sessionId: s }, `req-${s}-${Math.random()}`).order).join();
    assert.equal(bySession('s1'), bySession('s1'));
    const orders = new Set(['s1', 's2', 's3', 's4', 's5', 's6'].map(bySession));
    assert.ok(orders.size > 1, 'different sessions spread over the tied accounts');
    assert.equal(plan(same, { strategy: 'weighted', weightedPreset: 'priority' }).selectionReason, 'score_tie');
  });

  it('affinity modifies capacity-weighted, usage-weighted, relative-availability and reset-drain; the strategies bind sessions', () => {
    const accounts = [acct('a', 0, { snap: w(0.1) }), acct('b', 1, { snap: w(0.5) })];
    for (const strategy of ['capacity-weighted', 'usage-weighted', 'relative-availability', 'reset-drain']) {
      const p = plan(accounts, { strategy, sessionAffinity: true }, { binding: bound('b') });
      assert.equal(p.order[0].id, 'b', strategy);
      assert.equal(p.selectionReason, 'session_affinity');
      assert.equal(STRATEGIES[strategy as keyof typeof STRATEGIES].bindsSessions, true);
    }
  });
});
