import { strict as assert } from 'node:assert';
import { parseUsagePayload, statusFromUtilization } from '../../src/quota/usage';

const OBS = Date.UTC(2025, 10, 4, 0, 0, 0);

/** Shaped like a real `/api/oauth/usage` body. */
const REAL = {
  five_hour: { utilization: 6.0, resets_at: '2025-11-04T04:59:59.943648+00:00' },
  seven_day: { utilization: 35.0, resets_at: '2025-11-06T03:59:59.943679+00:00' },
  seven_day_oauth_apps: null,
  seven_day_opus: { utilization: 0.0, resets_at: null },
  seven_day_sonnet: { utilization: 85, resets_at: '2025-11-06T03:59:59.943679+00:00' },
  iguana_necktie: null,
  extra_usage: { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null },
};

describe('quota/usage parseUsagePayload', () => {
  it('converts percent to fractions, ISO to epoch ms, and derives statuses', () => {
    assert.deepEqual(parseUsagePayload(REAL, OBS), {
      observedAtMs: OBS,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.06, resetAtMs: Date.UTC(2025, 10, 4, 4, 59, 59, 943) },
      weekly: { status: 'allowed', utilization: 0.35, resetAtMs: Date.UTC(2025, 10, 6, 3, 59, 59, 943) },
      scoped: {
        opus: { status: 'allowed', utilization: 0, observedAtMs: OBS },
        sonnet: { status: 'allowed_warning', utilization: 0.85, resetAtMs: Date.UTC(2025, 10, 6, 3, 59, 59, 943), observedAtMs: OBS },
      },
      overage: { status: 'rejected' },
    });
  });

  it('never guesses units: 1 (percent) is 0.01, not 1.0', () => {
    const snap = parseUsagePayload({ five_hour: { utilization: 1, resets_at: null } }, OBS);
    assert.equal(snap?.session?.utilization, 0.01);
    assert.equal(snap?.session?.status, 'allowed');
  });

  it('derives rejected at ≥ 100 % and allowed_warning at ≥ 80 %', () => {
    assert.equal(statusFromUtilization(1), 'rejected');
    assert.equal(statusFromUtilization(1.2), 'rejected');
    assert.equal(statusFromUtilization(0.8), 'allowed_warning');
    assert.equal(statusFromUtilization(0.7999), 'allowed');
    const snap = parseUsagePayload({ five_hour: { utilization: 100, resets_at: null }, seven_day: { utilization: 80 } }, OBS);
    assert.equal(snap?.session?.status, 'rejected');
    assert.equal(snap?.weekly?.status, 'allowed_warning');
  });

  it('accepts numeric-string percents but no other types', () => {
    const snap = parseUsagePayload({ five_hour: { utilization: '50', resets_at: 12 as unknown }, seven_day: { utilization: true, resets_at: 'later' } }, OBS);
    assert.deepEqual(snap?.session, { status: 'allowed', utilization: 0.5, resetAtMs: 12_000 });
    assert.equal(snap?.weekly, undefined);
  });

  it('keeps only the fields that parse', () => {
    const snap = parseUsagePayload({ five_hour: { utilization: 'NaN', resets_at: '2025-11-04T05:00:00Z' }, seven_day: { utilization: -3, resets_at: null } }, OBS);
    assert.deepEqual(snap?.session, { resetAtMs: Date.UTC(2025, 10, 4, 5) });
    assert.equal(snap?.weekly, undefined);
  });

  for (const [label, json] of [
    ['null', null],
    ['undefined', undefined],
    ['a string', 'five_hour'],
    ['a number', 42],
    ['an array', [{ five_hour: {} }]],
    ['true', true],
  ] as [string, unknown][]) {
    it(`returns undefined for ${label}`, () => {
      assert.equal(parseUsagePayload(json, OBS), undefined);
    });
  }

  it('returns an empty snapshot for an object with nothing usable', () => {
    assert.deepEqual(parseUsagePayload({ five_hour: 'x', seven_day: [], seven_day_opus: null, limits: 'no', extra_usage: 1 }, OBS), {
      observedAtMs: OBS,
      source: 'usage',
      scoped: {},
    });
  });

  it('maps extra_usage.is_enabled to an overage status', () => {
    assert.deepEqual(parseUsagePayload({ extra_usage: { is_enabled: true } }, OBS)?.overage, { status: 'allowed' });
    assert.deepEqual(parseUsagePayload({ extra_usage: { is_enabled: true, utilization: 100 } }, OBS)?.overage, {
      status: 'rejected',
      utilization: 1,
    });
    assert.equal(parseUsagePayload({ extra_usage: { is_enabled: 'yes' } }, OBS)?.overage, undefined);
  });

  it('ignores seven_day_oauth_apps and unusable family keys', () => {
    const snap = parseUsagePayload({ seven_day_oauth_apps: { utilization: 10 }, seven_day___proto__: { utilization: 10 }, seven_day_: { utilization: 10 } }, OBS);
    assert.deepEqual(snap?.scoped, {});
  });

  it('parses the newer limits[] form', () => {
    const snap = parseUsagePayload(
      {
        limits: [
          { kind: 'session', percent: 12.5, resets_at: '2025-11-04T05:00:00Z' },
          { kind: 'weekly_all', percent: 40, resets_at: '2025-11-10T00:00:00Z' },
          { kind: 'weekly_scoped', percent: 100, resets_at: '2025-11-10T00:00:00Z', scope: { model: { display_name: 'Sonnet' } } },
          { kind: 'weekly_scoped', percent: 3, resets_at: null, scope: { model: { display_name: 'Claude Opus 4.1' } } },
          { kind: 'weekly_scoped', percent: 3, scope: { model: {} } },
          { kind: 'weekly_scoped', percent: 3, scope: null },
          { kind: 'mystery', percent: 99 },
          'junk',
          null,
        ],
      },
      OBS,
    );
    assert.deepEqual(snap, {
      observedAtMs: OBS,
      source: 'usage',
      session: { status: 'allowed', utilization: 0.125, resetAtMs: Date.UTC(2025, 10, 4, 5) },
      weekly: { status: 'allowed', utilization: 0.4, resetAtMs: Date.UTC(2025, 10, 10) },
      scoped: {
        sonnet: { status: 'rejected', utilization: 1, resetAtMs: Date.UTC(2025, 10, 10), observedAtMs: OBS },
        opus: { status: 'allowed', utilization: 0.03, observedAtMs: OBS },
      },
    });
  });

  it('prefers the named fields over limits[] and lets limits[] fill the gaps', () => {
    const snap = parseUsagePayload(
      {
        five_hour: { utilization: 20, resets_at: null },
        seven_day_sonnet: { utilization: 30, resets_at: null },
        limits: [
          { kind: 'session', percent: 99 },
          { kind: 'weekly_all', percent: 50 },
          { kind: 'weekly_scoped', percent: 90, scope: { model: { display_name: 'Sonnet' } } },
          { kind: 'weekly_scoped', percent: 60, scope: { model: { display_name: 'Haiku' } } },
        ],
      },
      OBS,
    );
    assert.equal(snap?.session?.utilization, 0.2);
    assert.equal(snap?.weekly?.utilization, 0.5);
    assert.equal(snap?.scoped['sonnet']?.utilization, 0.3);
    assert.equal(snap?.scoped['haiku']?.utilization, 0.6);
  });
});

describe('usage: the 7d_oi window and the model its limits[] entry names', () => {
  it('keeps seven_day_oi under oi and bars the model the weekly_scoped entry names (its family), so planning for that model sees it rejected', () => {
    const resets = '2025-11-10T00:00:00Z';
    const snap = parseUsagePayload(
      {
        seven_day_oi: { utilization: 100, resets_at: resets },
        limits: [{ kind: 'weekly_scoped', percent: 100, resets_at: resets, scope: { model: { display_name: 'Claude Opus 4.5' } } }],
      },
      OBS,
    )!;
    assert.equal(snap.scoped.oi.status, 'rejected');
    assert.equal(snap.scoped.opus.status, 'rejected', 'the model the entry names');
    assert.equal(snap.scoped.sonnet, undefined, 'other models are not barred');
  });
});
