/**
 * The usage history behind the panel's charts: samples of each account's 5-hour and weekly
 * utilisation, kept in fixed-size ring buffers (the last hour every 10 s, the last day every minute).
 */
import { strict as assert } from 'node:assert';
import { HISTORY_TIERS, UsageHistory } from '../../../src/proxy/status/usageHistory';
import type { StatusReport } from '../../../src/proxy/status/status';

const T0 = Date.UTC(2025, 10, 4, 12, 0, 0);

/** A /status report with the given accounts' 5h/7d fractions (and a cooldown where asked). */
function report(accounts: Array<{ label: string; s: number | null; w: number | null; cooling?: boolean }>): StatusReport {
  return {
    accounts: accounts.map((a) => ({
      label: a.label,
      session: { used: a.s, status: null, resetsAt: null },
      weekly: { used: a.w, status: null, resetsAt: null },
      coolingUntil: a.cooling ? new Date(T0 + 3_600_000).toISOString() : null,
    })),
  } as unknown as StatusReport;
}

describe('usage history: the samples behind the charts', () => {
  it('keeps one sample per 10 s over the last hour and per minute over the day, the last of each interval', () => {
    const h = new UsageHistory();
    h.record(report([{ label: 'work', s: 0.1, w: 0.2 }]), T0);
    h.record(report([{ label: 'work', s: 0.15, w: 0.2 }]), T0 + 4_000); // same 10 s interval: replaces
    h.record(report([{ label: 'work', s: 0.3, w: 0.25 }]), T0 + 30_000);
    h.record(report([{ label: 'work', s: 0.35, w: 0.25 }]), T0 + 70_000);
    const hour = h.series('hour', T0 + 70_000)[0];
    assert.deepEqual(
      hour.points.map((p) => [p.t - T0, p.session, p.weekly]),
      [
        [4_000, 0.15, 0.2],
        [30_000, 0.3, 0.25],
        [70_000, 0.35, 0.25],
      ],
    );
    const day = h.series('day', T0 + 70_000)[0];
    assert.deepEqual(
      day.points.map((p) => [p.t - T0, p.session]),
      [
        [30_000, 0.3],
        [70_000, 0.35],
      ],
    );
    assert.equal(hour.toMs - hour.fromMs, 3_600_000);
    assert.equal(day.toMs - day.fromMs, 86_400_000);
  });

  it('forgets what is older than its span, so memory stays fixed however long the window runs', () => {
    const h = new UsageHistory();
    const { stepMs, slots } = HISTORY_TIERS.hour;
    for (let i = 0; i < slots * 3; i++) h.record(report([{ label: 'work', s: (i % 100) / 100, w: 0.5 }]), T0 + i * stepMs);
    const now = T0 + (slots * 3 - 1) * stepMs;
    const hour = h.series('hour', now)[0].points;
    assert.equal(hour.length, slots);
    assert.equal(hour[0].t, now - (slots - 1) * stepMs);
    assert.equal(h.series('day', now)[0].points.length, Math.ceil((slots * 3 * stepMs) / HISTORY_TIERS.day.stepMs));
    // An hour later with no sample, the hour's chart is empty.
    assert.equal(h.series('hour', now + 3_600_000)[0].points.length, 0);
  });

  it('marks cooldowns and 5-hour resets, and keeps unknown values unknown', () => {
    const h = new UsageHistory();
    h.record(report([{ label: 'a', s: 0.9, w: 0.5 }]), T0);
    h.record(report([{ label: 'a', s: 0.95, w: 0.5, cooling: true }]), T0 + 60_000);
    h.record(report([{ label: 'a', s: 0.02, w: 0.5 }]), T0 + 120_000);
    h.record(report([{ label: 'a', s: null, w: null }]), T0 + 180_000);
    const pts = h.series('day', T0 + 180_000)[0].points;
    assert.deepEqual(
      pts.map((p) => [p.session, p.cooling, p.reset]),
      [
        [0.9, false, false],
        [0.95, true, false],
        [0.02, false, true],
        [null, false, false],
      ],
    );
  });

  it('drops the history of an account that left the pool', () => {
    const h = new UsageHistory();
    h.record(
      report([
        { label: 'a', s: 0.1, w: 0.1 },
        { label: 'b', s: 0.2, w: 0.2 },
      ]),
      T0,
    );
    h.record(report([{ label: 'b', s: 0.3, w: 0.2 }]), T0 + 60_000);
    assert.deepEqual(
      h.series('day', T0 + 60_000).map((s) => s.label),
      ['b'],
    );
  });
});
