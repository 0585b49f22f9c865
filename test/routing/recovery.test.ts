import { strict as assert } from 'node:assert';
import { recoveriesByTime, recoveryOf, waitableRecovery, type RecoveryInput } from '../../src/routing/recovery';
import { DAY, HOUR, MIN, NOW, SEC, cooldownFor, metricsOf, snap, type MetricsOpts, type SnapSpec } from './builders';

function input(snapSpec: SnapSpec | null, o: MetricsOpts = {}, label = 'a'): RecoveryInput {
  const snapshot = snapSpec === null ? undefined : snap(snapSpec);
  return { label, metrics: metricsOf(snapshot, o), cooldown: cooldownFor(o), snapshot };
}
const rejected = (resetIn: number) => ({ status: 'rejected', used: 1, resetIn });
/** A throttle of 10 s, a 5h window for 2 h, 7d and unified for 2 days, the opus window for 3 days. */
const everything: SnapSpec = { unified: 'rejected', unifiedResetIn: 2 * DAY, s: rejected(2 * HOUR), w: rejected(2 * DAY), scoped: { opus: rejected(3 * DAY) } };

describe("recovery: the latest end among an account's blockers", () => {
  it("waits for the last of cooldown, 5h, 7d, unified and the requested family's scoped window", () => {
    assert.deepEqual(recoveryOf(input(everything, { coolIn: 10 * SEC, family: 'opus' }), NOW), { label: 'a', atMs: NOW + 3 * DAY, what: 'model-scoped window' });
    // Another family: the opus window does not block, the weekly one is last (the window wins its tie with unified).
    assert.deepEqual(recoveryOf(input(everything, { coolIn: 10 * SEC, family: 'sonnet' }), NOW), { label: 'a', atMs: NOW + 2 * DAY, what: '7d window' });
    assert.deepEqual(recoveryOf(input({ scoped: { opus: rejected(3 * DAY) } }, { coolIn: 10 * SEC, family: 'sonnet' }), NOW), {
      label: 'a',
      atMs: NOW + 10 * SEC,
      what: 'throttle',
      cooldownReason: 'throttle',
    });
  });

  it('names a unified rejection after the window it claims; without a reset it is unknown', () => {
    const claimed = snap({ unified: 'rejected', unifiedResetIn: HOUR });
    claimed.representativeClaim = 'five_hour';
    assert.deepEqual(recoveryOf({ label: 'a', metrics: metricsOf(claimed), cooldown: undefined, snapshot: claimed }, NOW), { label: 'a', atMs: NOW + HOUR, what: '5h window' });
    assert.deepEqual(recoveryOf(input({ unified: 'rejected' }, { coolIn: 10 * SEC }), NOW), { label: 'a', atMs: Infinity, what: 'unified window, no known reset' });
  });

  it('counts windows only as the metrics do: not with overage in use, not from a snapshot due for refresh', () => {
    const overage = input({ unified: 'rejected', unifiedResetIn: DAY, w: rejected(DAY), overage: { status: 'allowed', inUse: true } }, { coolIn: 10 * SEC, allowOverage: true });
    assert.equal(recoveryOf(overage, NOW).what, 'throttle');
    const stale = input({ age: 20 * MIN, w: rejected(DAY) }, { coolIn: 10 * SEC });
    assert.equal(recoveryOf(stale, NOW).what, 'throttle');
  });

  it('needs sign-in never recovers by waiting, whatever its cooldown; a usable account recovers now', () => {
    assert.deepEqual(recoveryOf(input(null, { needsSignIn: true, coolIn: 10 * SEC }), NOW), { label: 'a', atMs: Infinity, what: 'needs sign-in' });
    assert.deepEqual(recoveryOf(input({}), NOW), { label: 'a', atMs: NOW, what: 'usable' });
  });

  it('orders a pool earliest first, unknown last, ties in pool order', () => {
    const pool = [input(null, { needsSignIn: true }, 'x'), input(null, { coolIn: HOUR }, 'y'), input(everything, { coolIn: 10 * SEC }, 'z'), input(null, { coolIn: HOUR }, 'w')];
    assert.deepEqual(
      recoveriesByTime(pool, NOW).map((r) => r.label),
      ['y', 'w', 'z', 'x'],
    );
  });

  it('a request may wait only for a transient cooldown that is the soonest recovery and near enough', () => {
    const throttled = input(null, { coolIn: 10 * SEC }, 't');
    assert.equal(waitableRecovery([throttled], NOW, 90 * SEC)?.label, 't');
    assert.equal(waitableRecovery([throttled], NOW, 5 * SEC), undefined, 'too far');
    const overloaded = { ...input(null, {}, 'o'), cooldown: { untilMs: NOW + 5 * SEC, reason: 'overloaded' as const, setAtMs: NOW } };
    overloaded.metrics = metricsOf(undefined, { cooldown: overloaded.cooldown });
    assert.equal(waitableRecovery([overloaded], NOW, 90 * SEC)?.label, 'o');
    const window = input(null, { cooldown: { untilMs: NOW + 10 * SEC, reason: 'window_exhausted', windows: ['5h'], setAtMs: NOW } }, 'w');
    assert.equal(waitableRecovery([window, input(null, { coolIn: 20 * SEC }, 't')], NOW, 90 * SEC), undefined, 'the soonest recovery is a usage window: never waited for');
    assert.equal(waitableRecovery([input(everything, { coolIn: 10 * SEC }, 'z')], NOW, 90 * SEC), undefined, 'throttled, but also out of its windows');
    assert.equal(waitableRecovery([input(null, { needsSignIn: true, coolIn: SEC }, 'x')], NOW, 90 * SEC), undefined);
  });
});
