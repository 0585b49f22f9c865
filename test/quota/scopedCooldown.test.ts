import { strict as assert } from 'node:assert';
import { planScopedCooldown, scopedCooldownClearedBy } from '../../src/quota/scopedCooldown';
import type { Cooldown, QuotaSnapshot } from '../../src/quota/types';

const NOW = Date.UTC(2025, 10, 4, 0, 0, 0);
const MIN = 60_000;
const DAY = 86_400_000;

describe('quota/scopedCooldown: a model-scoped rejection is remembered until its reset', () => {
  it('a scoped 429 with a future reset cools that family until the reset (at most 8 days)', () => {
    assert.deepEqual(planScopedCooldown({ kind: 'model_scoped_exhausted', family: 'sonnet', untilMs: NOW + 3 * DAY }, NOW), {
      family: 'sonnet',
      cooldown: { untilMs: NOW + 3 * DAY, reason: 'window_exhausted', windows: ['7d_sonnet'], setAtMs: NOW },
    });
    assert.equal(planScopedCooldown({ kind: 'model_scoped_exhausted', family: 'opus', untilMs: NOW + 30 * DAY }, NOW)!.cooldown.untilMs, NOW + 8 * DAY);
  });
  it('nothing to remember without a known future reset, or for another answer', () => {
    assert.equal(planScopedCooldown({ kind: 'model_scoped_exhausted', family: 'sonnet' }, NOW), undefined);
    assert.equal(planScopedCooldown({ kind: 'model_scoped_exhausted', family: 'sonnet', untilMs: NOW }, NOW), undefined);
    assert.equal(planScopedCooldown({ kind: 'window_exhausted', untilMs: NOW + DAY, windows: ['7d'] }, NOW), undefined);
  });

  const cooldown: Cooldown = { untilMs: NOW + 3 * DAY, reason: 'window_exhausted', windows: ['7d_sonnet'], setAtMs: NOW };
  const evidence = (source: 'headers' | 'usage', at: number, status: string, resetAtMs = NOW + 3 * DAY): QuotaSnapshot => ({
    observedAtMs: at,
    source,
    scoped: { sonnet: { status, utilization: status === 'rejected' ? 1 : 0.1, resetAtMs, observedAtMs: at } },
  });

  it('lifted by a later answer that shows the family allowed, or by a usage reading past the lag', () => {
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('headers', NOW + MIN, 'allowed'), NOW + MIN), true);
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('usage', NOW + 6 * MIN, 'allowed'), NOW + 6 * MIN), true);
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('usage', NOW + MIN, 'allowed', NOW + MIN / 2), NOW + MIN), true, 'its window has reset');
  });
  it('not by a usage reading within the lag, a rejected window, another family, or an answer sent before it', () => {
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('usage', NOW + MIN, 'allowed'), NOW + MIN), false);
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('headers', NOW + MIN, 'rejected'), NOW + MIN), false);
    assert.equal(scopedCooldownClearedBy(cooldown, 'opus', evidence('headers', NOW + MIN, 'allowed'), NOW + MIN), false);
    assert.equal(scopedCooldownClearedBy(cooldown, 'sonnet', evidence('headers', NOW + MIN, 'allowed'), NOW - 1), false);
  });
});
