import { strict as assert } from 'node:assert';
import { planRoute } from '../../src/routing/plan';
import { bindingFollows, boundPlacement, boundSituation, type BoundSituation } from '../../src/routing/rebind';
import type { RoutingPolicy } from '../../src/routing/policy';
import type { Cooldown } from '../../src/quota/types';
import { HOUR, MIN, NOW, SEC, acct, ids, metricsOf, planInput, snap } from './builders';

const cooling = (reason: Cooldown['reason'], inMs: number): Cooldown => ({ untilMs: NOW + inMs, reason, setAtMs: NOW - SEC });
const BLIP = 2_000;

describe('routing/rebind: the binding rule table', () => {
  it('situation: blip only for a transient cooldown ending within the blip wait, lost for quota, sign-in, revocation or removal', () => {
    const situation = (c: Cooldown | undefined, extra: Parameters<typeof metricsOf>[1] = {}, s = snap()): BoundSituation =>
      boundSituation(metricsOf(s, { cooldown: c, ...extra }), c?.reason, NOW, BLIP);
    assert.equal(situation(undefined), 'eligible');
    assert.equal(situation(undefined, {}, snap({ s: { used: 0.98 } })), 'soft_limit');
    for (const reason of ['throttle', 'overloaded', 'server_error'] as const) {
      assert.equal(situation(cooling(reason, 1_000)), 'blip', reason);
      assert.equal(situation(cooling(reason, BLIP)), 'blip', `${reason} ending exactly at the blip wait`);
      assert.equal(situation(cooling(reason, 30 * SEC)), 'transient', reason);
    }
    assert.equal(situation(cooling('window_exhausted', 1_000)), 'lost', 'a usage window is never a blip, however soon it resets');
    assert.equal(situation(cooling('forbidden', 1_000)), 'lost');
    assert.equal(situation(cooling('throttle', 1_000), { needsSignIn: true }), 'lost');
    assert.equal(situation(cooling('throttle', 1_000), {}, snap({ s: { status: 'rejected', used: 1, resetIn: HOUR } })), 'lost', 'throttled and exhausted');
    assert.equal(situation(cooling('throttle', 1_000), { family: 'opus' }, snap({ scoped: { opus: { status: 'rejected', used: 1 } } })), 'lost');
    assert.equal(boundSituation(undefined, undefined, NOW, BLIP), 'lost', 'removed or disabled');
  });

  it('placement: first while eligible or blipping; at the soft limit first unless on-serve has a better place', () => {
    for (const mode of ['on-serve', 'on-quota'] as const) {
      assert.equal(boundPlacement('eligible', mode, true), 'first');
      assert.equal(boundPlacement('blip', mode, true), 'first');
      assert.equal(boundPlacement('transient', mode, true), 'skip_unusable');
      assert.equal(boundPlacement('lost', mode, true), 'skip_unusable');
      assert.equal(boundPlacement('soft_limit', mode, false), 'first', `${mode}: no account below the limit, the pin stays`);
    }
    assert.equal(boundPlacement('soft_limit', 'on-serve', true), 'skip_soft_limit');
    assert.equal(boundPlacement('soft_limit', 'on-quota', true), 'first', 'low remaining quota alone never evicts');
  });

  it('binding after another account served: follows quota and moves by plan, never a blip; a longer transient failure only in on-serve', () => {
    const follows = (mode: 'on-serve' | 'on-quota', situation: BoundSituation, attempted = true, movedByPlan = false) =>
      bindingFollows(mode, { situation, attempted, movedByPlan });
    for (const mode of ['on-serve', 'on-quota'] as const) {
      assert.equal(follows(mode, 'lost'), true, mode);
      assert.equal(follows(mode, 'blip'), false, mode);
      assert.equal(follows(mode, 'eligible', false), false, `${mode}: never tried (a cap overflow): the binding stays`);
    }
    assert.equal(follows('on-serve', 'transient'), true);
    assert.equal(follows('on-serve', 'eligible', true), true, 'a failed attempt without a cooldown (network) moves it in on-serve');
    assert.equal(follows('on-quota', 'transient'), false);
    assert.equal(follows('on-quota', 'eligible', true), false);
    assert.equal(follows('on-serve', 'soft_limit', false, true), true, 'the plan moved it off its soft-limited account');
  });
});

describe('routing/plan: affinity by the rule table', () => {
  const bound = (account: string) => ({ account, lastServedAtMs: NOW - MIN });
  const policy = (p: Partial<RoutingPolicy> = {}): Partial<RoutingPolicy> => ({ sessionAffinity: true, ...p });
  /** a and b; the ranking prefers b. */
  const pair = (a: Parameters<typeof acct>[2] = {}, b: Parameters<typeof acct>[2] = {}) => [
    acct('a', 0, { snap: snap({ w: { used: 0.2 } }), ...a }),
    acct('b', 1, { snap: snap({ w: { used: 0.8 } }), ...b }),
  ];
  const withReason = (accounts: ReturnType<typeof pair>, reason: Cooldown['reason'], inMs: number) => {
    accounts[0] = { ...accounts[0], metrics: metricsOf(snap({ w: { used: 0.2 } }), { cooldown: cooling(reason, inMs) }), cooldownReason: reason };
    return accounts;
  };

  it('keeps a bound account that only blips first (the attempt loop waits for it), and skips one paused for longer', () => {
    for (const mode of ['on-serve', 'on-quota'] as const) {
      const blip = planRoute({ ...planInput(withReason(pair(), 'throttle', 1_000), policy({ sessionAffinityRebind: mode }), { binding: bound('a') }), nowMs: NOW });
      assert.deepEqual(ids(blip.order), ['a', 'b'], mode);
      assert.equal(blip.selectionReason, 'session_affinity');
      assert.deepEqual(blip.affinity, { sessionBound: true, boundAccount: 'a', applied: true, skippedReason: null });
      const longer = planRoute({ ...planInput(withReason(pair(), 'throttle', 30 * SEC), policy({ sessionAffinityRebind: mode }), { binding: bound('a') }), nowMs: NOW });
      assert.equal(longer.order[0].id, 'b', mode);
      assert.equal(longer.affinity.skippedReason, 'unusable');
      const window = planRoute({ ...planInput(withReason(pair(), 'window_exhausted', 1_000), policy({ sessionAffinityRebind: mode }), { binding: bound('a') }), nowMs: NOW });
      assert.equal(window.order[0].id, 'b', `${mode}: a usage window is never waited for`);
    }
    const off = planRoute({ ...planInput(withReason(pair(), 'throttle', 1_000), policy({ sessionAffinityBlipWaitMs: 0 }), { binding: bound('a') }), nowMs: NOW });
    assert.equal(off.order[0].id, 'b', 'a blip wait of 0 never waits');
  });

  it('at the soft limit: the pin stays unless on-serve has an account below it; on-quota always stays', () => {
    const soft = { snap: snap({ s: { used: 0.98 }, w: { used: 0.2 } }) };
    const softer = { snap: snap({ s: { used: 0.975 }, w: { used: 0.8 } }) };
    const allSoft = planRoute(planInput(pair(soft, softer), policy({ accountRanking: 'headroom-first' }), { binding: bound('a') }));
    assert.equal(allSoft.order[0].id, 'a', 'every account is above the limit: no better place');
    assert.equal(allSoft.selectionReason, 'session_affinity');
    const better = planRoute(planInput(pair(soft), policy(), { binding: bound('a') }));
    assert.equal(better.order[0].id, 'b');
    assert.equal(better.affinity.skippedReason, 'session_saturated');
    const hard = planRoute(planInput(pair(soft), policy({ sessionAffinityRebind: 'on-quota' }), { binding: bound('a') }));
    assert.equal(hard.order[0].id, 'a', 'on-quota: low remaining quota alone never evicts');
  });

  it('sticky thresholds move a session only in on-serve', () => {
    const over = { snap: snap({ w: { used: 0.9 } }) };
    const p = (mode: 'on-serve' | 'on-quota') =>
      planRoute(planInput(pair(over, { snap: snap({ w: { used: 0.1 } }) }), policy({ sessionAffinityRebind: mode, stickyThreshold7d: 70 }), { binding: bound('a') }));
    assert.equal(p('on-serve').selectionReason, 'sticky_reallocation');
    assert.equal(p('on-quota').selectionReason, 'session_affinity');
  });
});
