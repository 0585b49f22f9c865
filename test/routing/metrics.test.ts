import { strict as assert } from 'node:assert';
import { computeMetrics, snapshotFreshness } from '../../src/routing/metrics';
import { DAY, HOUR, MIN, NOW, SEC, STALE, metricsOf, params, snap } from './builders';

describe('routing/metrics computeMetrics', () => {
  describe('freshness and quota evidence', () => {
    it('no snapshot is unknown, rank 2, and every quota value reads as "no usable snapshot"', () => {
      const m = metricsOf(undefined);
      assert.equal(m.freshness, 'unknown');
      assert.equal(m.quotaEvidenceRank, 2);
      assert.equal(m.sessionUsed, null);
      assert.equal(m.weeklyUsed, null);
      assert.equal(m.weeklyUsedForSort, -1);
      assert.equal(m.sessionResetMs, Infinity);
      assert.equal(m.weeklyResetMs, Infinity);
      assert.equal(m.sessionResetBucket, Infinity);
      assert.equal(m.headroom, null);
      assert.equal(m.usable, true);
      assert.equal(m.sessionSaturated, false);
      assert.equal(m.coolingUntilMs, Infinity);
    });

    it('a snapshot exactly 15 min old is fresh; 1 ms older it is stale_known when everything is allowed', () => {
      assert.equal(metricsOf(snap({ age: STALE })).freshness, 'fresh');
      assert.equal(metricsOf(snap({ age: STALE })).quotaEvidenceRank, 0);
      const stale = metricsOf(snap({ age: STALE + 1 }));
      assert.equal(stale.freshness, 'stale_known');
      assert.equal(stale.quotaEvidenceRank, 0);
      // stale_known keeps its values for routing
      assert.equal(stale.sessionUsed, 0.2);
      assert.equal(stale.weeklyUsed, 0.3);
    });

    it('stale with a not-allowed status (unified, 5h or 7d) is refresh_due, rank 1', () => {
      for (const spec of [
        { unified: 'rejected' },
        { s: { status: 'rejected', used: 1 } },
        { w: { status: 'throttled' } },
        { s: { status: 'something_new' } }, // not allowed, though not a rejection
      ]) {
        const m = metricsOf(snap({ age: STALE + 1, ...spec }));
        assert.equal(m.freshness, 'refresh_due', JSON.stringify(spec));
        assert.equal(m.quotaEvidenceRank, 1);
      }
      // the same snapshot 1 ms younger is fresh
      assert.equal(metricsOf(snap({ age: STALE, unified: 'rejected' })).freshness, 'fresh');
    });

    it('stale with a not-allowed status but overage available (allowed or in use) is stale_known', () => {
      assert.equal(metricsOf(snap({ age: STALE + 1, unified: 'rejected', overage: { status: 'allowed' } })).freshness, 'stale_known');
      assert.equal(metricsOf(snap({ age: STALE + 1, unified: 'rejected', overage: { status: 'rejected', inUse: true } })).freshness, 'stale_known');
      assert.equal(metricsOf(snap({ age: STALE + 1, unified: 'rejected', overage: { status: 'rejected' } })).freshness, 'refresh_due');
    });

    it('allowed_warning counts as allowed for freshness', () => {
      assert.equal(snapshotFreshness(snap({ age: STALE + 1, unified: 'allowed_warning', s: { status: 'allowed_warning' } }), NOW), 'stale_known');
    });

    it('a refresh_due snapshot is ignored for routing: metrics as with no snapshot, only the evidence rank differs', () => {
      const due = metricsOf(snap({ age: STALE + 1, unified: 'rejected', s: { status: 'rejected', used: 1 }, w: { used: 0.9 } }));
      const none = metricsOf(undefined);
      assert.deepEqual({ ...due, freshness: 'x', quotaEvidenceRank: 9 }, { ...none, freshness: 'x', quotaEvidenceRank: 9 });
      assert.equal(due.usable, true, 'a stale rejection never quarantines an account by itself');
      assert.equal(due.hardSaturated, false);
    });
  });

  describe('reset-freshening and used values', () => {
    it('ticking windows report their utilisation and reset', () => {
      const m = metricsOf(snap({ s: { used: 0.42, resetIn: 2 * HOUR }, w: { used: 0.55, resetIn: 3 * DAY } }));
      assert.equal(m.sessionUsed, 0.42);
      assert.equal(m.weeklyUsed, 0.55);
      assert.equal(m.sessionResetMs, NOW + 2 * HOUR);
      assert.equal(m.weeklyResetMs, NOW + 3 * DAY);
      assert.equal(m.sessionResetBucket, Math.floor((NOW + 2 * HOUR) / (15 * MIN)));
      assert.equal(m.weeklyUsedForSort, 0.55);
      assert.equal(m.headroom, Math.min(1 - 0.42, 1 - 0.55));
    });

    for (const [label, reset] of [
      ['in the past', { resetIn: -SEC }],
      ['exactly now', { resetIn: 0 }],
      ['absent', { resetAt: undefined }],
      ['zero', { resetAt: 0 }],
    ] as const) {
      it(`a window whose reset is ${label} reads as renewed: used 0, allowed, reset +∞`, () => {
        const s = { used: 1.0, status: 'rejected', ...reset };
        const w = { used: 1.0, status: 'rejected', ...reset };
        const spec = label === 'absent' ? { s: { used: 1.0, status: 'rejected' }, w: { used: 1.0, status: 'rejected' } } : { s, w };
        const sn = snap(spec);
        if (label === 'absent') {
          delete sn.session!.resetAtMs;
          delete sn.weekly!.resetAtMs;
        }
        const m = metricsOf(sn);
        assert.equal(m.sessionUsed, 0);
        assert.equal(m.weeklyUsed, 0);
        assert.equal(m.sessionResetMs, Infinity);
        assert.equal(m.weeklyResetMs, Infinity);
        assert.equal(m.sessionResetBucket, Infinity);
        assert.equal(m.hardSaturated, false);
        assert.equal(m.sessionSaturated, false);
        assert.equal(m.usable, true);
        assert.equal(m.headroom, 1);
      });
    }

    it('sessionUsed: missing utilisation in a ticking 5h window → 0; weeklyUsed: missing in a ticking 7d window → null (sort −1)', () => {
      const m = metricsOf(snap({ s: { noUsed: true }, w: { noUsed: true } }));
      assert.equal(m.sessionUsed, 0);
      assert.equal(m.weeklyUsed, null);
      assert.equal(m.weeklyUsedForSort, -1);
    });

    it('absent 5h/7d windows read as not ticking (0)', () => {
      const m = metricsOf(snap({ s: null, w: null }));
      assert.equal(m.sessionUsed, 0);
      assert.equal(m.weeklyUsed, 0);
      assert.equal(m.headroom, 1);
    });

    it('headroom cannot be computed when a ticking 5h or 7d window lacks its utilisation', () => {
      assert.equal(metricsOf(snap({ w: { noUsed: true } })).headroom, null);
      assert.equal(metricsOf(snap({ s: { noUsed: true } })).headroom, null);
      assert.equal(metricsOf(snap({ s: { used: 0.1 }, w: { used: 0.6 } })).headroom, 1 - 0.6);
    });

    it('the reset bucket is floor(sessionReset / T)', () => {
      const T = 10 * MIN;
      const m = metricsOf(snap({ s: { resetIn: 95 * MIN } }), { T });
      assert.equal(m.sessionResetBucket, Math.floor((NOW + 95 * MIN) / T));
    });
  });

  describe('saturation', () => {
    it('a 5h or 7d rejection status is hard saturation (unusable)', () => {
      for (const spec of [{ s: { status: 'rejected', used: 0.5 } }, { w: { status: 'throttled', used: 0.5 } }, { s: { status: ' Rejected ' } }]) {
        const m = metricsOf(snap(spec));
        assert.equal(m.hardSaturated, true, JSON.stringify(spec));
        assert.equal(m.softSaturated, false);
        assert.equal(m.sessionSaturated, true);
        assert.equal(m.usable, false);
        assert.equal(m.unusableReason, 'hard_saturated');
        assert.equal(m.coolingUntilMs, Infinity);
      }
    });

    it('a unified `rejected` is hard saturation; a unified `throttled` or unknown status is not', () => {
      assert.equal(metricsOf(snap({ unified: 'rejected' })).hardSaturated, true);
      assert.equal(metricsOf(snap({ unified: 'rejected', unifiedResetIn: HOUR })).hardSaturated, true);
      assert.equal(metricsOf(snap({ unified: 'throttled' })).hardSaturated, false);
      assert.equal(metricsOf(snap({ unified: 'weird' })).hardSaturated, false);
    });

    it('a unified `rejected` whose reset has passed no longer binds', () => {
      assert.equal(metricsOf(snap({ unified: 'rejected', unifiedResetIn: -SEC })).hardSaturated, false);
    });

    it('a ticking window at exactly 100 % is hard; 99.99 % of the 7d window is not', () => {
      assert.equal(metricsOf(snap({ s: { used: 1 } })).hardSaturated, true);
      assert.equal(metricsOf(snap({ w: { used: 1 } })).hardSaturated, true);
      assert.equal(metricsOf(snap({ w: { used: 0.9999 } })).hardSaturated, false);
    });

    it('soft saturation: session ticking and sessionUsed ≥ L — exactly L counts, just below does not', () => {
      const at = metricsOf(snap({ s: { used: 0.97 } }));
      assert.equal(at.softSaturated, true);
      assert.equal(at.hardSaturated, false);
      assert.equal(at.sessionSaturated, true);
      assert.equal(at.usable, true, 'soft saturation does not make an account unusable');
      const below = metricsOf(snap({ s: { used: 0.9699 } }));
      assert.equal(below.softSaturated, false);
      assert.equal(below.sessionSaturated, false);
      assert.equal(metricsOf(snap({ s: { used: 0.5 } }), { L: 0.5 }).softSaturated, true);
      assert.equal(metricsOf(snap({ s: { used: 0.4999 } }), { L: 0.5 }).softSaturated, false);
    });

    it('a soft-saturated value on a window that is not ticking is not saturation', () => {
      assert.equal(metricsOf(snap({ s: { used: 0.99, resetIn: -1 } })).softSaturated, false);
    });

    it('L = 1 disables soft saturation (0.9999 is not saturated; 1.0 is hard, not soft)', () => {
      assert.equal(metricsOf(snap({ s: { used: 0.9999 } }), { L: 1 }).sessionSaturated, false);
      const full = metricsOf(snap({ s: { used: 1 } }), { L: 1 });
      assert.equal(full.softSaturated, false);
      assert.equal(full.hardSaturated, true);
    });

    it('overage eligible = policy allows it AND the provider signals it; eligibility suppresses saturation', () => {
      const exhausted = { unified: 'rejected', s: { status: 'rejected', used: 1.0 }, w: { used: 0.99 } };
      const signalled = metricsOf(snap({ ...exhausted, overage: { status: 'allowed' } }), { allowOverage: true });
      assert.equal(signalled.overageEligible, true);
      assert.equal(signalled.hardSaturated, false);
      assert.equal(signalled.softSaturated, false);
      assert.equal(signalled.usable, true);
      const inUse = metricsOf(snap({ ...exhausted, overage: { status: 'rejected', inUse: true } }), { allowOverage: true });
      assert.equal(inUse.overageEligible, true);
      assert.equal(inUse.usable, true);
      // policy off: saturated despite the provider's signal
      const policyOff = metricsOf(snap({ ...exhausted, overage: { status: 'allowed' } }), { allowOverage: false });
      assert.equal(policyOff.overageEligible, false);
      assert.equal(policyOff.hardSaturated, true);
      // no provider signal: saturated despite the policy
      const noSignal = metricsOf(snap({ ...exhausted, overage: { status: 'rejected', inUse: false } }), { allowOverage: true });
      assert.equal(noSignal.overageEligible, false);
      assert.equal(noSignal.hardSaturated, true);
      // soft saturation is suppressed too
      const soft = metricsOf(snap({ s: { used: 0.98 }, overage: { status: 'allowed_warning' } }), { allowOverage: true });
      assert.equal(soft.overageEligible, true);
      assert.equal(soft.softSaturated, false);
    });
  });

  describe('model-scoped window', () => {
    it('matches the request family only', () => {
      const sn = snap({ scoped: { sonnet: { used: 0.4, resetIn: 2 * DAY } } });
      const m = metricsOf(sn, { family: 'sonnet' });
      assert.equal(m.hasScopedWindow, true);
      assert.equal(m.scopedUsed, 0.4);
      assert.equal(m.scopedResetMs, NOW + 2 * DAY);
      for (const family of ['opus', undefined]) {
        const o = metricsOf(sn, { family });
        assert.equal(o.hasScopedWindow, false);
        assert.equal(o.scopedUsed, null);
        assert.equal(o.scopedResetMs, Infinity);
      }
    });

    it('counts only when observed within 15 min (exactly 15 min counts, 1 ms more does not)', () => {
      assert.equal(metricsOf(snap({ scoped: { sonnet: { used: 0.4, age: STALE } } }), { family: 'sonnet' }).hasScopedWindow, true);
      const old = metricsOf(snap({ scoped: { sonnet: { used: 1, status: 'rejected', age: STALE + 1 } } }), { family: 'sonnet' });
      assert.equal(old.hasScopedWindow, false);
      assert.equal(old.scopedRejected, false);
      assert.equal(old.usable, true);
    });

    it('is reset-freshened: a passed reset reads as used 0, reset +∞', () => {
      const m = metricsOf(snap({ scoped: { sonnet: { used: 1, status: 'rejected', resetIn: -SEC } } }), { family: 'sonnet' });
      assert.equal(m.hasScopedWindow, true);
      assert.equal(m.scopedUsed, 0);
      assert.equal(m.scopedResetMs, Infinity);
      assert.equal(m.scopedRejected, false);
      assert.equal(m.scopedSaturated, false);
    });

    it('scopedSaturated at scopedUsed ≥ L (exactly L counts) without making the account unusable', () => {
      const at = metricsOf(snap({ scoped: { sonnet: { used: 0.97 } } }), { family: 'sonnet' });
      assert.equal(at.scopedSaturated, true);
      assert.equal(at.usable, true);
      assert.equal(at.sessionSaturated, false);
      assert.equal(metricsOf(snap({ scoped: { sonnet: { used: 0.9699 } } }), { family: 'sonnet' }).scopedSaturated, false);
    });

    it('a scoped rejection makes the account unusable for that family only, unless overage is eligible', () => {
      const sn = snap({ scoped: { opus: { status: 'rejected', used: 0.5 } } });
      const opus = metricsOf(sn, { family: 'opus' });
      assert.equal(opus.scopedRejected, true);
      assert.equal(opus.usable, false);
      assert.equal(opus.unusableReason, 'scoped_rejected');
      assert.equal(metricsOf(sn, { family: 'sonnet' }).usable, true);
      const full = metricsOf(snap({ scoped: { opus: { used: 1 } } }), { family: 'opus' });
      assert.equal(full.usable, false);
      const withOverage = metricsOf(snap({ scoped: { opus: { status: 'rejected' } }, overage: { status: 'allowed' } }), { family: 'opus', allowOverage: true });
      assert.equal(withOverage.scopedRejected, false);
      assert.equal(withOverage.usable, true);
    });
  });

  describe('cooldown and sign-in', () => {
    it('an active cooldown makes the account unusable until its end', () => {
      const m = metricsOf(snap(), { coolIn: 30 * SEC });
      assert.equal(m.usable, false);
      assert.equal(m.unusableReason, 'cooldown');
      assert.equal(m.coolingUntilMs, NOW + 30 * SEC);
    });

    it('a cooldown ending exactly now, or in the past, is over', () => {
      for (const coolIn of [0, -SEC]) {
        const m = metricsOf(snap(), { coolIn });
        assert.equal(m.usable, true);
        assert.equal(m.coolingUntilMs, Infinity);
      }
    });

    it('a cooldown outranks hard saturation as the unusable reason, and keeps its end time', () => {
      const m = metricsOf(snap({ s: { status: 'rejected' } }), { coolIn: HOUR });
      assert.equal(m.unusableReason, 'cooldown');
      assert.equal(m.coolingUntilMs, NOW + HOUR);
    });

    it('needs sign-in → unusable, cooling until +∞ even with a finite cooldown', () => {
      const m = metricsOf(snap(), { needsSignIn: true, coolIn: MIN });
      assert.equal(m.usable, false);
      assert.equal(m.unusableReason, 'needs_sign_in');
      assert.equal(m.coolingUntilMs, Infinity);
    });
  });

  it('is pure: the same input at the same time gives the same metrics, and the time is the argument', () => {
    const sn = snap({ s: { used: 0.5, resetIn: 10 * MIN } });
    const input = { snapshot: sn, cooldown: undefined };
    assert.deepEqual(computeMetrics(input, params(), NOW), computeMetrics(input, params(), NOW));
    const later = computeMetrics(input, params(), NOW + 10 * MIN);
    assert.equal(later.sessionUsed, 0, 'once its reset passes the window reads as renewed');
    assert.equal(later.freshness, 'fresh');
  });
});
