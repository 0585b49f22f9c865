import { strict as assert } from 'node:assert';
import { cooldownClearedBy, isCoolingDown, mergeCooldown, planCooldown, recoverySuggested } from '../../src/quota/cooldown';
import {
  FORBIDDEN_COOLDOWN_MS,
  OVERLOADED_CEILING_MS,
  OVERLOADED_DEFAULT_MS,
  SERVER_ERROR_CEILING_MS,
  SERVER_ERROR_COOLDOWN_MS,
  THROTTLE_CEILING_MS,
  THROTTLE_FLOOR_MS,
  WINDOW_EXHAUSTED_CEILING_MS,
  WINDOW_EXHAUSTED_FALLBACK_MS,
} from '../../src/quota/constants';
import type { Cooldown, CooldownReason, QuotaSnapshot, ResponseClass } from '../../src/quota/types';

const NOW = Date.UTC(2025, 10, 4, 0, 0, 0);
const DAY = 86_400_000;

describe('quota/cooldown planCooldown', () => {
  it('window_exhausted → until untilMs, windows copied', () => {
    const windows = ['5h'];
    const c = planCooldown({ kind: 'window_exhausted', untilMs: NOW + 3600_000, windows }, NOW);
    assert.deepEqual(c, { untilMs: NOW + 3600_000, reason: 'window_exhausted', windows: ['5h'], setAtMs: NOW });
    assert.notEqual(c?.windows, windows);
  });
  it('window_exhausted is capped at now + 8 days', () => {
    const c = planCooldown({ kind: 'window_exhausted', untilMs: NOW + 30 * DAY, windows: ['7d'] }, NOW);
    assert.equal(c?.untilMs, NOW + WINDOW_EXHAUSTED_CEILING_MS);
    assert.equal(WINDOW_EXHAUSTED_CEILING_MS, 8 * DAY);
  });
  it('window_exhausted with a past or non-finite untilMs falls back to now + 10 min', () => {
    for (const untilMs of [NOW - 1, NOW, NaN, Infinity]) {
      assert.equal(planCooldown({ kind: 'window_exhausted', untilMs, windows: [] }, NOW)?.untilMs, NOW + WINDOW_EXHAUSTED_FALLBACK_MS);
    }
  });
  it('throttle → its retry-after however short (2 s only without one), at most 15 min', () => {
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: 30_000 }, NOW)?.untilMs, NOW + 30_000);
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: 1_000 }, NOW)?.untilMs, NOW + 1_000, 'retry-after: 1 cools for 1 s, not the floor');
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: 0 }, NOW)?.untilMs, NOW);
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: 3600_000 }, NOW)?.untilMs, NOW + THROTTLE_CEILING_MS);
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: NaN }, NOW)?.untilMs, NOW + THROTTLE_FLOOR_MS);
    assert.equal(planCooldown({ kind: 'throttle', retryAfterMs: 1 }, NOW)?.reason, 'throttle');
  });
  it('overloaded → retry-after or 5 s, ceiling 60 s', () => {
    assert.equal(planCooldown({ kind: 'overloaded' }, NOW)?.untilMs, NOW + OVERLOADED_DEFAULT_MS);
    assert.equal(planCooldown({ kind: 'overloaded', retryAfterMs: 12_000 }, NOW)?.untilMs, NOW + 12_000);
    assert.equal(planCooldown({ kind: 'overloaded', retryAfterMs: 600_000 }, NOW)?.untilMs, NOW + OVERLOADED_CEILING_MS);
    assert.equal(planCooldown({ kind: 'overloaded' }, NOW)?.reason, 'overloaded');
  });
  it('forbidden → 10 min', () => {
    assert.deepEqual(planCooldown({ kind: 'forbidden' }, NOW), { untilMs: NOW + FORBIDDEN_COOLDOWN_MS, reason: 'forbidden', setAtMs: NOW });
  });
  it('server_error → 2 s, or its retry-after however short, at most 60 s', () => {
    assert.equal(planCooldown({ kind: 'server_error' }, NOW)?.untilMs, NOW + SERVER_ERROR_COOLDOWN_MS);
    assert.equal(planCooldown({ kind: 'server_error', retryAfterMs: 10_000 }, NOW)?.untilMs, NOW + 10_000);
    assert.equal(planCooldown({ kind: 'server_error', retryAfterMs: 1_000 }, NOW)?.untilMs, NOW + 1_000);
    assert.equal(planCooldown({ kind: 'server_error', retryAfterMs: DAY }, NOW)?.untilMs, NOW + SERVER_ERROR_CEILING_MS);
  });
  it('no cooldown for request_scoped, concurrency_throttle, entitlement, model_scoped_exhausted, unauthorized, client_error, success', () => {
    const none: ResponseClass[] = [
      { kind: 'request_scoped' },
      { kind: 'concurrency_throttle' },
      { kind: 'entitlement' },
      { kind: 'model_scoped_exhausted', family: 'sonnet', untilMs: NOW + DAY },
      { kind: 'unauthorized' },
      { kind: 'client_error' },
      { kind: 'success' },
    ];
    for (const cls of none) assert.equal(planCooldown(cls, NOW), undefined, cls.kind);
  });
});

describe('quota/cooldown mergeCooldown', () => {
  const c = (untilMs: number, reason: CooldownReason, setAtMs = NOW, windows?: string[]): Cooldown =>
    windows ? { untilMs, reason, setAtMs, windows } : { untilMs, reason, setAtMs };

  it('takes next when there is no existing cooldown', () => {
    assert.deepEqual(mergeCooldown(undefined, c(NOW + 5, 'throttle')), c(NOW + 5, 'throttle'));
  });
  it('never shortens: a shorter next keeps the existing end, reason and windows', () => {
    const existing = c(NOW + DAY, 'window_exhausted', NOW, ['7d']);
    const out = mergeCooldown(existing, c(NOW + 2000, 'throttle', NOW + 10));
    assert.equal(out.untilMs, NOW + DAY);
    assert.equal(out.reason, 'window_exhausted');
    assert.deepEqual(out.windows, ['7d']);
    assert.equal(out.setAtMs, NOW + 10, 'setAtMs is the latest confirmation');
  });
  it('a later next wins with its reason and windows', () => {
    const out = mergeCooldown(c(NOW + 3600_000, 'window_exhausted', NOW, ['5h']), c(NOW + 3 * DAY, 'window_exhausted', NOW + 1, ['7d']));
    assert.deepEqual(out, c(NOW + 3 * DAY, 'window_exhausted', NOW + 1, ['7d']));
    const out2 = mergeCooldown(c(NOW + 2000, 'throttle'), c(NOW + FORBIDDEN_COOLDOWN_MS, 'forbidden', NOW + 1));
    assert.equal(out2.reason, 'forbidden');
    assert.equal(out2.windows, undefined);
  });
  it('on a tie the existing reason stays', () => {
    assert.equal(mergeCooldown(c(NOW + 9, 'forbidden'), c(NOW + 9, 'throttle')).reason, 'forbidden');
  });
});

describe('quota/cooldown cooldownClearedBy', () => {
  const cooldown = (reason: CooldownReason): Cooldown => ({ untilMs: NOW + DAY, reason, setAtMs: NOW, windows: ['5h'] });
  const snap = (extra: Partial<QuotaSnapshot> = {}): QuotaSnapshot => ({
    observedAtMs: NOW + 1000,
    source: 'headers',
    unifiedStatus: 'allowed',
    session: { status: 'allowed', utilization: 0.01 },
    weekly: { status: 'allowed_warning', utilization: 0.85 },
    scoped: {},
    ...extra,
  });

  it('a later allowed header snapshot clears window_exhausted and throttle', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap()), true);
    assert.equal(cooldownClearedBy(cooldown('throttle'), snap()), true);
  });
  it('clears with the unified status absent when the windows are allowed', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ unifiedStatus: undefined })), true);
  });
  it('never clears forbidden, needs_sign_in, overloaded or server_error', () => {
    for (const reason of ['forbidden', 'needs_sign_in', 'overloaded', 'server_error'] as CooldownReason[]) {
      assert.equal(cooldownClearedBy(cooldown(reason), snap()), false, reason);
    }
  });
  it('does not clear from evidence observed at or before the cooldown was set', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ observedAtMs: NOW })), false);
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ observedAtMs: NOW - 1 })), false);
  });
  it('does not clear from a usage reading taken within the endpoint’s lag', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ source: 'usage' })), false);
  });
  it('does not clear when any account-wide status is not allowed', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ unifiedStatus: 'rejected' })), false);
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ unifiedStatus: 'mystery' })), false);
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ session: { status: 'rejected' } })), false);
    assert.equal(cooldownClearedBy(cooldown('throttle'), snap({ weekly: { status: 'throttled' } })), false);
  });
  it('does not clear from a snapshot carrying no status at all', () => {
    assert.equal(cooldownClearedBy(cooldown('throttle'), { observedAtMs: NOW + 1000, source: 'headers', scoped: {}, overage: { status: 'allowed' } }), false);
  });
  it('a rejected scoped window alone does not block clearing (it is not account-wide)', () => {
    assert.equal(cooldownClearedBy(cooldown('window_exhausted'), snap({ scoped: { sonnet: { status: 'rejected', observedAtMs: NOW + 1000 } } })), true);
  });
});

describe('quota/cooldown isCoolingDown', () => {
  it('is active strictly before untilMs', () => {
    const c: Cooldown = { untilMs: NOW + 10, reason: 'throttle', setAtMs: NOW };
    assert.equal(isCoolingDown(c, NOW), true);
    assert.equal(isCoolingDown(c, NOW + 9), true);
    assert.equal(isCoolingDown(c, NOW + 10), false);
    assert.equal(isCoolingDown(undefined, NOW), false);
  });
});

describe('quota/cooldown: usage-endpoint evidence of a recovery', () => {
  const MIN = 60_000;
  const HOUR = 3_600_000;
  const cooled = (windows: string[] = ['7d'], reason: CooldownReason = 'window_exhausted'): Cooldown => ({ untilMs: NOW + 3 * DAY, reason, setAtMs: NOW, windows });
  /** A usage reading at NOW + `after`, 5h and 7d at the given utilisations (statuses as the endpoint implies them). */
  const reading = (after: number, used7d: number, used5h = 0): QuotaSnapshot => {
    const status = (u: number) => (u >= 1 ? 'rejected' : u >= 0.8 ? 'allowed_warning' : 'allowed');
    return {
      observedAtMs: NOW + after,
      source: 'usage',
      session: { status: status(used5h), utilization: used5h, resetAtMs: NOW + 4 * 3_600_000 },
      weekly: { status: status(used7d), utilization: used7d, resetAtMs: NOW + 3 * DAY },
      scoped: {},
    };
  };

  it('a reading sent 5 minutes or more after the cooldown, below 80 % in its windows, clears it; within the lag, at 80 % or more, or lacking a window it does not', () => {
    assert.equal(cooldownClearedBy(cooled(), reading(5 * MIN, 0), NOW + 5 * MIN), true);
    assert.equal(cooldownClearedBy(cooled(['5h', '7d']), reading(6 * MIN, 0.3, 0.2), NOW + 6 * MIN), true);
    assert.equal(cooldownClearedBy(cooled(['unified']), reading(6 * MIN, 0.3, 0.2), NOW + 6 * MIN), true);
    assert.equal(cooldownClearedBy(cooled(), reading(5 * MIN - 1, 0), NOW + 5 * MIN - 1), false, 'within the lag');
    assert.equal(cooldownClearedBy(cooled(), reading(10 * MIN, 0.85), NOW + 10 * MIN), false, 'allowed_warning is no proof');
    assert.equal(cooldownClearedBy(cooled(['5h', '7d']), reading(10 * MIN, 0.1, 1), NOW + 10 * MIN), false, 'every cooled window must read allowed');
    assert.equal(cooldownClearedBy(cooled(['unified']), { ...reading(10 * MIN, 0.1), session: undefined }, NOW + 10 * MIN), false, 'a window the reading lacks proves nothing');
    // Quota evidence never clears a transient or auth cooldown.
    for (const reason of ['throttle', 'overloaded', 'server_error', 'forbidden', 'needs_sign_in'] as CooldownReason[]) {
      assert.equal(cooldownClearedBy(cooled(['7d'], reason), reading(30 * MIN, 0), NOW + 30 * MIN), false, reason);
    }
    assert.equal(cooldownClearedBy(cooled(), reading(30 * MIN, 0), NOW - 1), false, 'sent before the cooldown was set, however late it arrives');
  });

  it('suggests a recovery (a probe) when the cooled window reads below its limit after the cooldown began, or has reset', () => {
    assert.equal(recoverySuggested(cooled(), reading(MIN, 0.85), NOW + MIN), true, 'below 100 % after it began');
    assert.equal(
      recoverySuggested(cooled(), { ...reading(-MIN, 0), weekly: { status: 'rejected', utilization: 1, resetAtMs: NOW + HOUR } }, NOW + 2 * HOUR),
      true,
      'its reset has passed',
    );
  });
  it('suggests nothing from evidence taken before the cooldown, a rejected window, an unknown reset, or another reason', () => {
    assert.equal(recoverySuggested(cooled(), reading(-1, 0), NOW + MIN), false, 'observed before it began');
    assert.equal(recoverySuggested(cooled(), reading(MIN, 1), NOW + MIN), false, 'still at 100 %');
    assert.equal(recoverySuggested(cooled(), { ...reading(-MIN, 0), weekly: { status: 'rejected', utilization: 1 } }, NOW + MIN), false, 'no known reset');
    assert.equal(recoverySuggested(cooled(['7d'], 'throttle'), reading(MIN, 0), NOW + MIN), false);
    assert.equal(recoverySuggested(cooled(), undefined, NOW + MIN), false);
    assert.equal(recoverySuggested(cooled(), reading(MIN, 0), NOW + 4 * DAY), false, 'a cooldown that has ended needs no probe');
  });
});
