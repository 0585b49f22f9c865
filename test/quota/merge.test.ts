import { strict as assert } from 'node:assert';
import { mergeSnapshot } from '../../src/quota/merge';
import type { QuotaSnapshot } from '../../src/quota/types';

const T0 = Date.UTC(2025, 10, 4, 0, 0, 0);
const MIN = 60_000;
const R5 = T0 + 5 * 60 * MIN;
const R7 = T0 + 3 * 24 * 60 * MIN;

function headers(at: number, extra: Partial<QuotaSnapshot> = {}): QuotaSnapshot {
  return {
    observedAtMs: at,
    source: 'headers',
    unifiedStatus: 'allowed',
    unifiedResetAtMs: R5,
    representativeClaim: 'five_hour',
    session: { status: 'allowed', utilization: 0.4, resetAtMs: R5 },
    weekly: { status: 'allowed', utilization: 0.5, resetAtMs: R7 },
    scoped: {},
    ...extra,
  };
}

describe('quota/merge mergeSnapshot', () => {
  it('returns next when there is no previous snapshot', () => {
    const next = headers(T0);
    assert.equal(mergeSnapshot(undefined, next), next);
  });

  it('the new evidence wins for what it reports', () => {
    const prev = headers(T0);
    const next = headers(T0 + MIN, { session: { status: 'allowed_warning', utilization: 0.9, resetAtMs: R5 } });
    const out = mergeSnapshot(prev, next);
    assert.deepEqual(out.session, { status: 'allowed_warning', utilization: 0.9, resetAtMs: R5 });
    assert.equal(out.observedAtMs, T0 + MIN);
  });

  it('does not mutate its inputs', () => {
    const prev = headers(T0);
    const next: QuotaSnapshot = { observedAtMs: T0 + MIN, source: 'usage', scoped: {} };
    const before = JSON.stringify([prev, next]);
    mergeSnapshot(prev, next);
    assert.equal(JSON.stringify([prev, next]), before);
  });

  it('carries unreported groups from a recent snapshot, stamped with their own observation time', () => {
    const prev = headers(T0);
    const next: QuotaSnapshot = {
      observedAtMs: T0 + 10 * MIN,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.45, resetAtMs: R5 },
      scoped: {},
    };
    const out = mergeSnapshot(prev, next);
    assert.equal(out.source, 'usage');
    assert.equal(out.unifiedStatus, 'allowed');
    assert.equal(out.unifiedObservedAtMs, T0);
    assert.deepEqual(out.session, { status: 'allowed', utilization: 0.45, resetAtMs: R5 });
    assert.deepEqual(out.weekly, { status: 'allowed', utilization: 0.5, resetAtMs: R7, observedAtMs: T0 });
  });

  it('carries a window observed exactly 15 min earlier', () => {
    const out = mergeSnapshot(headers(T0), { observedAtMs: T0 + 15 * MIN, source: 'usage', scoped: {} });
    assert.ok(out.weekly);
    assert.equal(out.unifiedStatus, 'allowed');
  });

  it('drops unreported groups older than 15 min', () => {
    const out = mergeSnapshot(headers(T0, { overage: { status: 'allowed' } }), {
      observedAtMs: T0 + 15 * MIN + 1,
      source: 'usage',
      scoped: {},
    });
    assert.deepEqual(out, { observedAtMs: T0 + 15 * MIN + 1, source: 'usage', scoped: {} });
  });

  it('a carried window ages from its own observation, not from the last merge', () => {
    const usage = (at: number): QuotaSnapshot => ({
      observedAtMs: at,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.1, resetAtMs: R5 },
      scoped: {},
    });
    let s = mergeSnapshot(headers(T0, { unifiedStatus: 'rejected' }), usage(T0 + 10 * MIN));
    assert.equal(s.unifiedStatus, 'rejected');
    s = mergeSnapshot(s, usage(T0 + 14 * MIN));
    assert.equal(s.unifiedStatus, 'rejected');
    assert.equal(s.weekly?.observedAtMs, T0);
    s = mergeSnapshot(s, usage(T0 + 16 * MIN));
    assert.equal(s.unifiedStatus, undefined, 'a stale rejection must not be kept alive by merges');
    assert.equal(s.unifiedObservedAtMs, undefined);
    assert.equal(s.weekly, undefined);
  });

  it('merges scoped windows per family, each keeping its own observedAtMs', () => {
    const prev = headers(T0, {
      scoped: {
        sonnet: { status: 'allowed', utilization: 0.5, observedAtMs: T0 },
        opus: { status: 'rejected', utilization: 1, observedAtMs: T0 - 20 * MIN },
      },
    });
    const next = headers(T0 + 5 * MIN, { scoped: { haiku: { utilization: 0.1, observedAtMs: T0 + 5 * MIN } } });
    const out = mergeSnapshot(prev, next);
    assert.deepEqual(out.scoped, {
      sonnet: { status: 'allowed', utilization: 0.5, observedAtMs: T0 },
      haiku: { utilization: 0.1, observedAtMs: T0 + 5 * MIN },
    });
  });

  it('a newly reported scoped window replaces the old one', () => {
    const prev = headers(T0, { scoped: { sonnet: { status: 'allowed', utilization: 0.5, observedAtMs: T0 } } });
    const next = headers(T0 + MIN, { scoped: { sonnet: { status: 'rejected', utilization: 1, observedAtMs: T0 + MIN } } });
    assert.deepEqual(mergeSnapshot(prev, next).scoped, { sonnet: { status: 'rejected', utilization: 1, observedAtMs: T0 + MIN } });
  });

  it('keeps the previous reset when the new one jitters by under 60 s', () => {
    const prev = headers(T0);
    const next: QuotaSnapshot = {
      observedAtMs: T0 + MIN,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.5, resetAtMs: R5 - 57 },
      weekly: { status: 'allowed', utilization: 0.5, resetAtMs: R7 + 59_999 },
      scoped: {},
    };
    const out = mergeSnapshot(prev, next);
    assert.equal(out.session?.resetAtMs, R5);
    assert.equal(out.session?.utilization, 0.5);
    assert.equal(out.weekly?.resetAtMs, R7);
  });

  it('takes the new reset when it advanced by a minute or more (a real rollover)', () => {
    const prev = headers(T0);
    const next = headers(T0 + MIN, {
      unifiedResetAtMs: R5 + 5 * 60 * MIN,
      session: { status: 'allowed', utilization: 0.01, resetAtMs: R5 + 60_000 },
    });
    const out = mergeSnapshot(prev, next);
    assert.equal(out.session?.resetAtMs, R5 + 60_000);
    assert.equal(out.unifiedResetAtMs, R5 + 5 * 60 * MIN);
  });

  it('applies the jitter rule to scoped windows and the unified reset', () => {
    const prev = headers(T0, { scoped: { sonnet: { resetAtMs: R7, observedAtMs: T0 } } });
    const next = headers(T0 + MIN, { unifiedResetAtMs: R5 + 900, scoped: { sonnet: { resetAtMs: R7 + 800, observedAtMs: T0 + MIN } } });
    const out = mergeSnapshot(prev, next);
    assert.equal(out.unifiedResetAtMs, R5);
    assert.equal(out.scoped['sonnet']?.resetAtMs, R7);
    assert.equal(out.scoped['sonnet']?.observedAtMs, T0 + MIN);
  });

  it('out-of-order evidence: a snapshot observed earlier does not overwrite newer groups', () => {
    const newer = headers(T0 + 5 * MIN, { session: { status: 'rejected', utilization: 1, resetAtMs: R5 } });
    const older: QuotaSnapshot = {
      observedAtMs: T0,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.2, resetAtMs: R5 },
      scoped: { opus: { utilization: 0.3, observedAtMs: T0 } },
    };
    const out = mergeSnapshot(newer, older);
    assert.equal(out.observedAtMs, T0 + 5 * MIN);
    assert.equal(out.source, 'headers');
    assert.equal(out.session?.status, 'rejected');
    assert.deepEqual(out.scoped['opus'], { utilization: 0.3, observedAtMs: T0 });
  });

  it('a later usage reading with 5h and 7d below their limit supersedes an older account-wide rejected verdict', () => {
    const rejected = headers(T0, { unifiedStatus: 'rejected', representativeClaim: 'seven_day', weekly: { status: 'rejected', utilization: 1, resetAtMs: R7 } });
    const reading: QuotaSnapshot = {
      observedAtMs: T0 + MIN,
      source: 'usage',
      session: { status: 'allowed', utilization: 0, resetAtMs: R5 },
      weekly: { status: 'allowed', utilization: 0, resetAtMs: R7 },
      scoped: {},
    };
    const out = mergeSnapshot(rejected, reading);
    assert.equal(out.unifiedStatus, undefined);
    assert.equal(out.representativeClaim, undefined);
    assert.equal(out.weekly?.status, 'allowed');
    const scopedClaim = mergeSnapshot({ ...rejected, representativeClaim: 'seven_day_opus' }, reading);
    assert.equal(scopedClaim.unifiedStatus, 'rejected', 'a model-scoped verdict is not about 5h and 7d');
    const stillFull = mergeSnapshot(rejected, { ...reading, weekly: { status: 'rejected', utilization: 1, resetAtMs: R7 } });
    assert.equal(stillFull.unifiedStatus, 'rejected');
  });
});
