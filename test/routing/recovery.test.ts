import { strict as assert } from 'node:assert';
import { blockersOf, recoveryOf, type RecoveryInput } from '../../src/routing/recovery';
import { DAY, HOUR, MIN, NOW, SEC, cooldownFor, metricsOf, snap, type MetricsOpts, type SnapSpec } from './builders';

function input(snapSpec: SnapSpec | null, o: MetricsOpts = {}): RecoveryInput {
  const snapshot = snapSpec === null ? undefined : snap(snapSpec);
  return { label: 'a', metrics: metricsOf(snapshot, o), cooldown: cooldownFor(o), snapshot };
}
const rejected = (resetIn: number) => ({ status: 'rejected', used: 1, resetIn });

describe('recovery: every blocker of an account, and the latest of them', () => {
  it('lists the cooldown, the 5h, 7d and unified windows and the scoped window of the requested family', () => {
    const a = input(
      { unified: 'rejected', unifiedResetIn: 2 * DAY, s: rejected(2 * HOUR), w: rejected(2 * DAY), scoped: { opus: rejected(3 * DAY) } },
      { coolIn: 10 * SEC, family: 'opus' },
    );
    assert.deepEqual(
      blockersOf(a, NOW).map((b) => [b.what, b.untilMs - NOW]),
      [['5h window', 2 * HOUR], ['7d window', 2 * DAY], ['unified window', 2 * DAY], ['model-scoped window', 3 * DAY], ['throttle', 10 * SEC]],
    );
    assert.deepEqual(recoveryOf(a, NOW), { label: 'a', atMs: NOW + 3 * DAY, what: 'model-scoped window' });
  });

  it("ignores another family's scoped window", () => {
    const a = input({ scoped: { opus: rejected(3 * DAY) } }, { coolIn: 10 * SEC, family: 'sonnet' });
    assert.deepEqual(recoveryOf(a, NOW), { label: 'a', atMs: NOW + 10 * SEC, what: 'throttle', cooldownReason: 'throttle' });
  });

  it('names a unified rejection after the window it claims; without a reset it is unknown', () => {
    const claimed = snap({ unified: 'rejected', unifiedResetIn: HOUR });
    claimed.representativeClaim = 'five_hour';
    assert.deepEqual(recoveryOf({ label: 'a', metrics: metricsOf(claimed), cooldown: undefined, snapshot: claimed }, NOW), { label: 'a', atMs: NOW + HOUR, what: '5h window' });
    assert.deepEqual(recoveryOf(input({ unified: 'rejected' }, { coolIn: 10 * SEC }), NOW), { label: 'a', atMs: Infinity, what: 'unified window, no known reset' });
  });

  it('counts windows only as the metrics do: not with overage in use, not from a snapshot due for refresh', () => {
    const overage = input({ unified: 'rejected', unifiedResetIn: DAY, w: rejected(DAY), overage: { status: 'allowed', inUse: true } }, { coolIn: 10 * SEC, allowOverage: true });
    assert.deepEqual(blockersOf(overage, NOW).map((b) => b.what), ['throttle']);
    const stale = input({ age: 20 * MIN, w: rejected(DAY) }, { coolIn: 10 * SEC });
    assert.deepEqual(blockersOf(stale, NOW).map((b) => b.what), ['throttle']);
  });

  it('needs sign-in: one blocker without an end; usable: none', () => {
    assert.deepEqual(blockersOf(input(null, { needsSignIn: true, coolIn: 10 * SEC }), NOW), [{ what: 'needs sign-in', untilMs: Infinity }]);
    assert.deepEqual(blockersOf(input({}), NOW), []);
    assert.deepEqual(recoveryOf(input({}), NOW), { label: 'a', atMs: NOW, what: 'usable' });
  });
});
